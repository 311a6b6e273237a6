"""Mutual TLS (SOL013 8.3.4, RFC 8705): uvicorn verifies client certificates against
`tls_client_ca` during the handshake (a certificate another CA signed never gets a connection);
the verified certificate reaches the application as the ASGI TLS extension
(`scope["extensions"]["tls"]["client_cert_chain"]`, PEM), which uvicorn does not fill itself:
`mtls_protocol` (a subclass of the server's protocol) does. The identity is the certificate's
subject common name, mapped to roles and a tenant by `mtls_clients`; a token bound to a
certificate (`cnf.x5t#S256`) is accepted only with that certificate."""

from __future__ import annotations

import base64
import hashlib
import ssl
from typing import Any

from cryptography import x509
from cryptography.x509.oid import NameOID
from uvicorn.protocols.http.h11_impl import H11Protocol

from vnfm.config import Settings
from vnfm.entrypoints.api.headers import ASGIApp, Receive, Scope, Send


def thumbprint(der: bytes) -> str:
    """RFC 8705 3.1: base64url(SHA-256(DER)) without padding."""
    return base64.urlsafe_b64encode(hashlib.sha256(der).digest()).decode().rstrip("=")


def common_name(der: bytes) -> str | None:
    names = x509.load_der_x509_certificate(der).subject.get_attributes_for_oid(NameOID.COMMON_NAME)
    value = names[0].value if names else None
    return value if isinstance(value, str) else None


def client_cert(scope: Scope) -> bytes | None:
    """The DER of the verified client certificate of the connection, if any."""
    chain = (scope.get("extensions") or {}).get("tls", {}).get("client_cert_chain") or []
    if not chain:
        return None
    return ssl.PEM_cert_to_DER_cert(chain[0])


def _with_cert(app: ASGIApp, der: bytes) -> ASGIApp:
    pem = ssl.DER_cert_to_PEM_cert(der)

    async def wrapped(scope: Scope, receive: Receive, send: Send) -> None:
        scope.setdefault("extensions", {})["tls"] = {"client_cert_chain": [pem]}
        await app(scope, receive, send)

    return wrapped


class _PassCertificate:
    """Mixed into uvicorn's HTTP/1.1 protocol: the connection's verified client certificate goes on
    to the application."""

    app: ASGIApp

    def connection_made(self, transport: Any) -> None:
        super().connection_made(transport)  # type: ignore[misc]
        ssl_object = transport.get_extra_info("ssl_object")
        der = ssl_object.getpeercert(binary_form=True) if ssl_object is not None else None
        if der:
            self.app = _with_cert(self.app, der)


def mtls_protocol(base: type[Any] = H11Protocol) -> type[Any]:
    """`base` (one of uvicorn's HTTP/1.1 protocols, or a guarded one of httpguard) passing client
    certificates on."""
    return type(f"Mtls{base.__name__}", (_PassCertificate, base), {})


MtlsH11Protocol = mtls_protocol()


def uvicorn_tls_options(settings: Settings, base: type[Any] = H11Protocol) -> dict[str, Any]:
    """The uvicorn options of the server's TLS: certificate and key, and with `tls_client_ca` the
    client-certificate check (required when certificates are the only way in)."""
    if not settings.tls:
        return {}
    options: dict[str, Any] = {"ssl_certfile": str(settings.tls_cert), "ssl_keyfile": str(settings.tls_key)}
    if settings.tls_client_ca is not None:
        others = bool(settings.auth_token or settings.oauth2_clients or settings.oauth2_jwks_url
                      or settings.oauth2_introspection_url)
        options.update(ssl_ca_certs=str(settings.tls_client_ca), http=mtls_protocol(base),
                       ssl_cert_reqs=ssl.CERT_OPTIONAL if others else ssl.CERT_REQUIRED)
    return options
