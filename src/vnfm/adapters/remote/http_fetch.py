"""Fetch a VNF package's content from a URI (SOL005 upload_from_uri) over HTTP(S).

The body is streamed and cut off past the size limit; the whole fetch has a deadline. Error
messages name the URI without user-info or query and never carry the password.
"""

from __future__ import annotations

import asyncio
import logging

import httpx

from vnfm.adapters.notify.auth import safe_url
from vnfm.adapters.remote.egress import EgressPolicy, EgressRefused, egress_client
from vnfm.domain.errors import PayloadTooLarge, UnprocessableEntity
from vnfm.domain.secrets import scrub
from vnfm.packaging.stream import read_limited

log = logging.getLogger("vnfm.packages")
_FAILED = ("package content could not be fetched from {} (unreachable, or no 200 answer; the server log says "
           "which)")


async def fetch_package(uri: str, user: str | None, password: str | None, max_bytes: int, *,
                        timeout: float = 300.0, verify: bool | str = True, policy: EgressPolicy | None = None) -> bytes:
    """The content at `uri` (BASIC authentication when `user` is given; every hop, redirects
    included, where `policy` allows). The caller's error does not say what the target answered."""
    where = safe_url(uri)
    secrets = {password} if password else set()
    auth = httpx.BasicAuth(user, password or "") if user else None
    try:
        async with asyncio.timeout(timeout), egress_client(
            policy, auth=auth, verify=verify, follow_redirects=True, max_redirects=5, timeout=min(timeout, 30.0)
        ) as client, client.stream("GET", uri, headers={"Accept": "application/zip, */*"}) as resp:
            if resp.status_code != 200:
                log.info("package content from %s: HTTP %d", where, resp.status_code)
                raise UnprocessableEntity(_FAILED.format(where))
            declared = resp.headers.get("content-length", "")
            if declared.isdigit() and int(declared) > max_bytes:
                raise PayloadTooLarge(f"package content at {where} is {declared} bytes, over the limit of {max_bytes}")
            data = await read_limited(resp.aiter_bytes(), max_bytes, f"package content at {where}")
    except TimeoutError:
        raise UnprocessableEntity(f"package content could not be fetched from {where} within {timeout:.0f}s") from None
    except EgressRefused:
        raise UnprocessableEntity(f"package content URI {where} (or a redirect) resolves to an address the "
                                  "VNFM does not connect to (loopback, link-local, cloud metadata or a denied "
                                  "network)") from None
    except httpx.HTTPError as exc:
        log.info("package content from %s: %s", where,
                 scrub(f"{type(exc).__name__}: {exc}".replace(uri, where), secrets))
        raise UnprocessableEntity(_FAILED.format(where)) from None
    if not data:
        raise UnprocessableEntity(f"package content at {where} is empty")
    return data
