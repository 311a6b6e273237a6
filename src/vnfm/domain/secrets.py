"""Secrets in texts and documents: which keys hold secrets, masking them, scrubbing error texts.

Everything that leaves the VNFM (API responses, logs, error details, notifications, command lines)
goes through these functions; they live in the domain so that every layer can use them.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache
from typing import Any

SECRET_KEYS = ("password", "secret", "token", "private_key", "privatekey", "bearer", "client_password")


def is_secret_key(key: str, words: Iterable[str] = SECRET_KEYS) -> bool:
    """True when the normalised key contains one of `words` (the CLI passes a longer list)."""
    if words is SECRET_KEYS:
        return _is_secret(key)
    k = key.lower().replace("-", "_")
    return any(s in k for s in words)


@lru_cache(maxsize=8192)
def _is_secret(key: str) -> bool:
    """`is_secret_key` for the default words, remembered: sealing, masking and scrubbing ask it of
    every key of every document (an instance's body: hundreds of keys, the same few dozen names)."""
    k = key.lower().replace("-", "_")
    return any(s in k for s in SECRET_KEYS)


def mask_secrets(value: Any) -> Any:
    """A copy of `value` with the values of secret-looking keys replaced by '***'."""
    if isinstance(value, dict):
        return {
            k: ("***" if is_secret_key(str(k)) and v not in (None, "") else mask_secrets(v)) for k, v in value.items()
        }
    if isinstance(value, list):
        return [mask_secrets(v) for v in value]
    return value


def secret_values(value: Any) -> set[str]:
    """Every string stored under a secret-looking key (to scrub from error texts)."""
    found: set[str] = set()
    if isinstance(value, dict):
        for k, v in value.items():
            if is_secret_key(str(k)) and isinstance(v, str) and len(v) >= 3:
                found.add(v)
            else:
                found |= secret_values(v)
    elif isinstance(value, list):
        for v in value:
            found |= secret_values(v)
    return found


# "scheme://user:password@" in URLs (proxy settings such as http://user:pass@proxy:3128)
URL_USERINFO = re.compile(r"(?P<scheme>[A-Za-z][A-Za-z0-9+.-]*://)(?P<user>[^:/@\s]*):(?P<pw>[^@/\s]+)@")


def mask_url_credentials(text: str) -> str:
    """`http://user:pass@proxy:3128` -> `http://***@proxy:3128`."""
    if "://" not in text:  # the pattern needs it: most log lines are spared the search
        return text
    return URL_USERINFO.sub(lambda m: f"{m['scheme']}***@", text)


def scrub(text: str, secrets: Iterable[str] = ()) -> str:
    """Error text fit to leave the VNFM: the credentials of URLs masked, then every known secret
    value (and the password of a secret URL, should it appear on its own) replaced by '***'."""
    return scrub_known(text, known_values(secrets))


def known_values(secrets: Iterable[str]) -> list[str]:
    """What `scrub` replaces for `secrets`, longest first (computed once by a caller that scrubs
    many texts with the same secrets, e.g. every log record)."""
    values: set[str] = set()
    for s in secrets:
        values.add(s)
        if "://" in s:  # (the pattern is quadratic on a long run of letters: a key, a certificate)
            values.update(m["pw"] for m in URL_USERINFO.finditer(s))
    return sorted((v for v in values if v), key=len, reverse=True)


def scrub_known(text: str, values: list[str]) -> str:
    """`scrub` with `known_values` computed before."""
    text = mask_url_credentials(text)
    for s in values:
        if s in text:
            text = text.replace(s, "***")
    return text
