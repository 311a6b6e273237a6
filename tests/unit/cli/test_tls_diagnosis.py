"""`--cacert` / `--insecure` and the one-line diagnosis of a TLS failure: a CA the client does not
trust, a certificate for another name, an expired one, a server that does not speak TLS; against
the real server over HTTPS (and a plain TLS socket for the expired certificate)."""

from __future__ import annotations

import datetime
import http.server
import ipaddress
import ssl
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from tests.api.conftest import settings_for
from vnfm.entrypoints.api.server import ServerHandle, start_in_thread
from vnfm.entrypoints.cli.main import cli


def _pem_pair(tmp: Path, name: str, cert: x509.Certificate, key: ec.EllipticCurvePrivateKey) -> tuple[str, str]:
    c, k = tmp / f"{name}.pem", tmp / f"{name}.key"
    c.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    k.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                    serialization.NoEncryption()))
    return str(c), str(k)


def _issue(tmp: Path, name: str, ca: tuple[x509.Certificate, ec.EllipticCurvePrivateKey], *,
           days: float) -> tuple[str, str]:
    """A server certificate for 127.0.0.1 signed by `ca`, valid until `days` from now (< 0: expired)."""
    key = ec.generate_private_key(ec.SECP256R1())
    now = datetime.datetime.now(datetime.UTC)
    cert = (x509.CertificateBuilder().subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)]))
            .issuer_name(ca[0].subject).public_key(key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(days=30)).not_valid_after(now + datetime.timedelta(days=days))
            .add_extension(x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
                           critical=False)
            .sign(ca[1], hashes.SHA256()))
    return _pem_pair(tmp, name, cert, key)


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[str, str]]:
    tmp = tmp_path_factory.mktemp("pki")
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "vnfm test CA")])
    now = datetime.datetime.now(datetime.UTC)
    ca = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
          .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(days=60))
          .not_valid_after(now + datetime.timedelta(days=60))
          .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True).sign(key, hashes.SHA256()))
    return {"ca": _pem_pair(tmp, "ca", ca, key), "server": _issue(tmp, "server", (ca, key), days=1),
            "expired": _issue(tmp, "expired", (ca, key), days=-1)}


@pytest.fixture(scope="module")
def https_server(pki: dict[str, tuple[str, str]], tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerHandle]:
    cert, key = pki["server"]
    handle = start_in_thread(settings_for(tmp_path_factory.mktemp("data"), port=0, tls_cert=Path(cert),
                                          tls_key=Path(key)))
    try:
        yield handle
    finally:
        handle.stop()


class _Quiet(http.server.BaseHTTPRequestHandler):
    def log_message(self, *args: object) -> None:  # not into the CLI's captured stderr
        pass


def _tls_socket_server(cert: tuple[str, str] | None) -> tuple[http.server.HTTPServer, str]:
    """An HTTP server on 127.0.0.1 (HTTPS with `cert`), serving in a thread."""
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Quiet)
    if cert is not None:
        ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        ctx.load_cert_chain(*cert)
        srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    return srv, f"https://127.0.0.1:{srv.server_address[1]}"


def run(*args: str) -> Result:
    return CliRunner().invoke(cli, [*args, "vnf", "list"], env={"VNFM_CACERT": None, "VNFM_INSECURE": None})


def test_cacert_and_insecure_connect(https_server: ServerHandle, pki: dict[str, tuple[str, str]]) -> None:
    res = run("--endpoint", https_server.url, "--cacert", pki["ca"][0])
    assert res.exit_code == 0, res.output
    res = run("--endpoint", https_server.url, "--insecure")
    assert res.exit_code == 0, res.output
    assert "warning: --insecure" in res.stderr
    res = run("--endpoint", https_server.url, "--insecure", "--cacert", pki["ca"][0])
    assert res.exit_code == 2 and "do not go together" in res.stderr


def test_unknown_ca_is_said(https_server: ServerHandle) -> None:
    res = run("--endpoint", https_server.url)
    assert res.exit_code == 1
    assert res.stderr.count("\n") == 1 and "signed by a CA this client does not trust" in res.stderr
    assert "--cacert FILE" in res.stderr and "not running" not in res.stderr


def test_name_mismatch_is_said(https_server: ServerHandle, pki: dict[str, tuple[str, str]]) -> None:
    res = run("--endpoint", https_server.url.replace("127.0.0.1", "localhost"), "--cacert", pki["ca"][0])
    assert res.exit_code == 1
    assert res.stderr.count("\n") == 1 and "not issued for localhost" in res.stderr


def test_expired_is_said(pki: dict[str, tuple[str, str]]) -> None:
    srv, url = _tls_socket_server(pki["expired"])
    try:
        res = run("--endpoint", url, "--cacert", pki["ca"][0])
    finally:
        srv.shutdown()
    assert res.exit_code == 1
    assert res.stderr.count("\n") == 1 and "has expired" in res.stderr and "renew it" in res.stderr


def test_a_server_without_tls_is_said(pki: dict[str, tuple[str, str]]) -> None:
    srv, url = _tls_socket_server(None)
    try:
        res = run("--endpoint", url, "--cacert", pki["ca"][0])
    finally:
        srv.shutdown()
    assert res.exit_code == 1
    assert res.stderr.count("\n") == 1 and "TLS handshake" in res.stderr and "serving HTTPS" in res.stderr
