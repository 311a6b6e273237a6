"""Mutual TLS (SOL013 8.3.4) on a real uvicorn server: a client certificate of the configured CA
is an identity (its common name -> roles, tenant), one of another CA gets no connection, and a
token issued over mutual TLS is bound to the certificate (RFC 8705)."""

from __future__ import annotations

import datetime
import ipaddress
import ssl
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import jwt
import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from vnfm.entrypoints.api.server import ServerHandle, start_in_thread

from .conftest import settings_for
from .test_oauth2 import SECRETS, bearer, clients


@dataclass
class Pki:
    ca: Path
    server: tuple[Path, Path]
    good: tuple[Path, Path]  # CN nfvo-cert, signed by the configured CA
    stranger: tuple[Path, Path]  # CN unknown, signed by the configured CA
    foreign: tuple[Path, Path]  # CN nfvo-cert, signed by another CA


def _key() -> ec.EllipticCurvePrivateKey:
    return ec.generate_private_key(ec.SECP256R1())


def _cert(cn: str, key: ec.EllipticCurvePrivateKey, issuer: x509.Name, signer: ec.EllipticCurvePrivateKey, *,
          ca: bool = False, server: bool = False) -> x509.Certificate:
    now = datetime.datetime.now(datetime.UTC)
    b = (x509.CertificateBuilder().subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, cn)]))
         .issuer_name(issuer).public_key(key.public_key()).serial_number(x509.random_serial_number())
         .not_valid_before(now - datetime.timedelta(minutes=5)).not_valid_after(now + datetime.timedelta(days=1))
         .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True))
    if server:
        b = b.add_extension(x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
                            critical=False)
    return b.sign(signer, hashes.SHA256())


def _write(tmp: Path, name: str, cert: x509.Certificate, key: ec.EllipticCurvePrivateKey) -> tuple[Path, Path]:
    c, k = tmp / f"{name}.pem", tmp / f"{name}.key"
    c.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    k.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                    serialization.NoEncryption()))
    return c, k


def make_pki(tmp: Path) -> Pki:
    ca_key, other_key = _key(), _key()
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "vnfm test CA")])
    other_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "someone else's CA")])
    ca_cert = _cert("vnfm test CA", ca_key, ca_name, ca_key, ca=True)
    ca_file, _ = _write(tmp, "ca", ca_cert, ca_key)
    keys = {n: _key() for n in ("server", "good", "stranger", "foreign")}
    return Pki(
        ca=ca_file,
        server=_write(tmp, "server", _cert("127.0.0.1", keys["server"], ca_name, ca_key, server=True), keys["server"]),
        good=_write(tmp, "good", _cert("nfvo-cert", keys["good"], ca_name, ca_key), keys["good"]),
        stranger=_write(tmp, "stranger", _cert("stranger", keys["stranger"], ca_name, ca_key), keys["stranger"]),
        foreign=_write(tmp, "foreign", _cert("nfvo-cert", keys["foreign"], other_name, other_key), keys["foreign"]),
    )


@pytest.fixture
def mtls_server(tmp_path: Path) -> Iterator[tuple[ServerHandle, Pki]]:
    pki = make_pki(tmp_path)
    settings = settings_for(tmp_path / "data", port=0, tls_cert=pki.server[0], tls_key=pki.server[1],
                            tls_client_ca=pki.ca, oauth2_clients=clients("ops-a"),
                            mtls_clients=[{"common_name": "nfvo-cert", "roles": ["operator"], "tenant": "tenant-a"}])
    handle = start_in_thread(settings)
    try:
        yield handle, pki
    finally:
        handle.stop()


def client(pki: Pki, cert: tuple[Path, Path] | None) -> httpx.Client:
    ctx = ssl.create_default_context(cafile=str(pki.ca))
    if cert is not None:
        ctx.load_cert_chain(str(cert[0]), str(cert[1]))
    return httpx.Client(verify=ctx, timeout=10)


def test_client_certificates_of_the_ca_authenticate_others_get_no_connection(
        mtls_server: tuple[ServerHandle, Pki]) -> None:
    handle, pki = mtls_server
    url = f"{handle.url}/vnflcm/v1/vnf_instances"
    with client(pki, pki.good) as good:
        assert good.get(url).status_code == 200
        assert good.post(f"{handle.url}/vnfpkgm/v1/vnf_packages", json={}).status_code == 201  # an operator
        assert good.get(f"{handle.url}/sim/v1/state").status_code == 403  # not an admin
    with client(pki, pki.stranger) as stranger:  # the CA's, but no mtls_clients entry
        r = stranger.get(url)
        assert r.status_code == 401 and r.headers["WWW-Authenticate"].startswith("Bearer")
    with client(pki, None) as anonymous:  # no certificate, no token
        assert anonymous.get(url).status_code == 401
        assert anonymous.get(f"{handle.url}/healthz").status_code == 200
    with client(pki, pki.foreign) as foreign, pytest.raises(httpx.HTTPError):  # another CA: no handshake
        foreign.get(url)


def test_a_token_issued_over_mutual_tls_is_bound_to_the_certificate(mtls_server: tuple[ServerHandle, Pki]) -> None:
    handle, pki = mtls_server
    url = f"{handle.url}/vnflcm/v1/vnf_instances"
    form = {"grant_type": "client_credentials"}
    with client(pki, pki.good) as good, client(pki, None) as plain, client(pki, pki.stranger) as stranger:
        r = good.post(f"{handle.url}/oauth2/token", data=form, auth=("ops-a", SECRETS["ops-a"]))
        assert r.status_code == 200, r.text
        bound = r.json()["access_token"]
        assert "x5t#S256" in jwt.decode(bound, options={"verify_signature": False})["cnf"]
        assert good.get(url, headers=bearer(bound)).status_code == 200
        assert plain.get(url, headers=bearer(bound)).status_code == 401  # stolen without the key
        assert stranger.get(url, headers=bearer(bound)).status_code == 401
        r = plain.post(f"{handle.url}/oauth2/token", data=form, auth=("ops-a", SECRETS["ops-a"]))
        unbound = r.json()["access_token"]
        assert "cnf" not in jwt.decode(unbound, options={"verify_signature": False})
        assert plain.get(url, headers=bearer(unbound)).status_code == 200
