"""The SOL013 v3 `Version` request header of /vnflcm/v2.

Every request to /vnflcm/v2 except its api_versions names the API version it was written for.
As Tacker's v2 API: none is a 400 ("'Version' HTTP header missing"), one that is not
Major.Minor.Patch (optionally `-impl:...`, SOL013 table 4.2.2-1) a 400, a version this API does
not serve a 406. Responses carry `Version: 2.0.0` (written by `edge.Edge`).
"""

from __future__ import annotations

import re

from fastapi import Request

from vnfm.domain.errors import BadRequest, NotAcceptable
from vnfm.domain.notifications import LCM_V2_API_VERSION

API_VERSION = LCM_V2_API_VERSION
PREFIX = "/vnflcm/v2"
SUPPORTED = (API_VERSION,)
_FORMAT = re.compile(r"(?:[1-9]\d*|0)\.(?:[1-9]\d*|0)\.(?:[1-9]\d*|0)")


def requested_version(raw: str | None) -> str:
    """The version a `Version` header names (without its `-impl:` part), checked as SOL013 says."""
    if raw is None:
        raise BadRequest("'Version' HTTP header missing: every request to /vnflcm/v2 names the API version "
                         f"(SOL013 v3 4.2.2), e.g. Version: {API_VERSION}")
    text = raw.strip()
    base, sep, rest = text.partition("-")
    if (sep and not rest.startswith("impl:")) or not _FORMAT.fullmatch(base):
        raise BadRequest(f"Version {text[:60]!r} is not of the form Major.Minor.Patch[-impl:...] (SOL013 v3 4.2.2)")
    if base not in SUPPORTED:
        raise NotAcceptable(f"Version {base} is not served at /vnflcm/v2, which serves {', '.join(SUPPORTED)}")
    return base


def require_version(request: Request) -> None:
    """Router dependency of every /vnflcm/v2 route but api_versions: before the body is read."""
    requested_version(request.headers.get("version"))
