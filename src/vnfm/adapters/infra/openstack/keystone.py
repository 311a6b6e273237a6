"""Probing an OpenStack VIM before it is registered: Keystone answers at the VIM's auth URL, and
it accepts the VIM's credentials (issues a token). Through openstacksdk / keystoneauth, the same
path the Heat driver authenticates by later; no other service is called."""

from __future__ import annotations

import socket
from urllib.parse import urlsplit

from keystoneauth1 import exceptions as ks

from vnfm.adapters.infra.openstack.cloud import auth_args
from vnfm.adapters.remote.egress import EgressPolicy
from vnfm.domain.model import Vim
from vnfm.domain.secrets import scrub


def probe_keystone(vim: Vim, timeout: float = 10.0, policy: EgressPolicy | None = None) -> str | None:
    """None when Keystone at the VIM's auth URL issued a token for its credentials; otherwise what
    failed, in one line (no secret in it). With `policy`, an auth URL resolving to an address the
    server does not connect to for a caller (loopback, link-local, cloud metadata, denied ranges) is
    not contacted at all."""
    import openstack  # the SDK is slow to import: only when a VIM is probed

    args = auth_args(vim)
    url = str(args["auth_url"])
    if policy is not None and not _permitted(url, policy):
        return (f"Keystone at {url} was not probed: it resolves to an address the server does not connect to for "
                "a caller (VNFM_EGRESS_ALLOW_NETWORKS allows it)")
    secrets = [str(v) for k, v in args.items() if "password" in k or "secret" in k]
    try:
        conn = openstack.connect(**args, app_name="vnfm", load_yaml_config=False, load_envvars=False,
                                 api_timeout=timeout, connect_retries=0)
        try:
            conn.session.get_token()  # keystoneauth itself: its exceptions say what failed
        finally:
            conn.close()
    except ks.Unauthorized:
        return f"Keystone at {url} refused the credentials (401): check the user, password, project and domains"
    except ks.ConnectFailure as exc:
        return f"Keystone at {url} does not answer ({type(exc).__name__}: {_line(exc, secrets)})"
    except ks.DiscoveryFailure as exc:
        return f"{url} does not look like a Keystone endpoint ({_line(exc, secrets)})"
    except ks.ClientException as exc:
        return f"Keystone at {url} answered an error ({type(exc).__name__}: {_line(exc, secrets)})"
    return None


def _permitted(url: str, policy: EgressPolicy) -> bool:
    """Every address the URL's host resolves to is one `policy` permits (an unresolvable host is left
    to keystoneauth, which says it does not answer)."""
    parts = urlsplit(url)
    try:
        infos = socket.getaddrinfo(parts.hostname or "", parts.port or 443, type=socket.SOCK_STREAM)
    except (OSError, ValueError):
        return True
    return all(policy.permits(str(info[4][0])) for info in infos)


def _line(exc: Exception, secrets: list[str]) -> str:
    text = str(exc).strip().splitlines()
    return scrub(text[0] if text else "", secrets)[:300]
