"""Why a TLS connection to the server failed, in one line that says what to do: the server's
certificate is signed by a CA this client does not trust, is not for the name in --endpoint, has
expired (or is not valid yet), or the handshake failed for another reason (an HTTP server on an
https:// endpoint, no common protocol)."""

from __future__ import annotations

import ssl
from urllib.parse import urlsplit

# OpenSSL's X509_V_ERR_* codes (ssl.SSLCertVerificationError.verify_code)
_UNKNOWN_CA = {2, 18, 19, 20, 21, 27}  # no issuer, self-signed (leaf or in chain), untrusted
_EXPIRED, _NOT_YET_VALID = 10, 9
_NAME_MISMATCH = {62, 64}  # hostname, IP address


class TlsFailure(Exception):
    """The TLS handshake with the server failed; str() is the one-line diagnosis."""

    def __init__(self, endpoint: str, diagnosis: str) -> None:
        super().__init__(diagnosis)
        self.endpoint = endpoint


def _ssl_error(exc: BaseException) -> ssl.SSLError | None:
    seen: set[int] = set()
    cur: BaseException | None = exc
    while cur is not None and id(cur) not in seen:
        seen.add(id(cur))
        if isinstance(cur, ssl.SSLError):
            return cur
        cur = cur.__cause__ or cur.__context__
    return None


def diagnose(endpoint: str, exc: BaseException) -> str | None:
    """The diagnosis of a connection error that is a TLS failure, else None."""
    err = _ssl_error(exc)
    if err is None:
        return None
    host = urlsplit(endpoint).hostname or endpoint
    if isinstance(err, ssl.SSLCertVerificationError):
        code, why = err.verify_code, err.verify_message
        if code in _UNKNOWN_CA:
            return (f"the server's certificate is signed by a CA this client does not trust ({why}): "
                    f"give that CA with --cacert FILE (or VNFM_CACERT)")
        if code in _NAME_MISMATCH:
            return (f"the server's certificate is not issued for {host} ({why}): use a name it is issued for "
                    f"in --endpoint, or reissue it with {host} in its subjectAltName")
        if code == _EXPIRED:
            return f"the server's certificate has expired ({why}): renew it on the server (tls_cert)"
        if code == _NOT_YET_VALID:
            return f"the server's certificate is not valid yet ({why}): check the clocks of both machines"
        return f"the server's certificate was refused ({why})"
    reason = getattr(err, "reason", None) or str(err)
    return (f"the TLS handshake with {host} failed ({reason}): is the server serving HTTPS on this port "
            f"(tls_cert), and is the endpoint https:// ?")
