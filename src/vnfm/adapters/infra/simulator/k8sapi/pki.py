"""The simulated clusters' certificates: one CA the simulator generates into its data dir, and the
serving certificate of the API listener it signs (SANs: loopback plus the listener's host).

Several processes may share a data dir: creation runs under an exclusive file lock and writes each
file atomically, so a second process reads what the first wrote instead of making its own CA.
Private keys are owner-only (0600).
"""

from __future__ import annotations

import contextlib
import datetime as dt
import fcntl
import ipaddress
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

VALID_DAYS = 3650


@dataclass(frozen=True)
class ServingFiles:
    ca_pem: str
    cert_file: Path
    key_file: Path


def _write(path: Path, data: bytes, mode: int) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_CREAT | os.O_TRUNC | os.O_WRONLY, mode)
    with os.fdopen(fd, "wb") as f:
        f.write(data)
    os.replace(tmp, path)


@contextlib.contextmanager
def _locked(directory: Path) -> Iterator[None]:
    directory.mkdir(parents=True, exist_ok=True, mode=0o700)
    fd = os.open(directory / ".lock", os.O_CREAT | os.O_RDWR, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)


def _key_pem(key: ec.EllipticCurvePrivateKey) -> bytes:
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                             serialization.NoEncryption())


def _new_ca() -> tuple[bytes, bytes]:
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "vnfm-simulator-kubernetes-ca")])
    now = dt.datetime.now(dt.UTC)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - dt.timedelta(minutes=5)).not_valid_after(now + dt.timedelta(days=VALID_DAYS))
            .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
            .add_extension(x509.KeyUsage(digital_signature=True, key_cert_sign=True, crl_sign=True,
                                         content_commitment=False, key_encipherment=False,
                                         data_encipherment=False, key_agreement=False, encipher_only=False,
                                         decipher_only=False), critical=True)
            .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
            .sign(key, hashes.SHA256()))
    return cert.public_bytes(serialization.Encoding.PEM), _key_pem(key)


def _sans(hosts: list[str]) -> list[x509.GeneralName]:
    out: list[x509.GeneralName] = []
    for h in dict.fromkeys(["127.0.0.1", "::1", "localhost", *hosts]):
        if h in ("", "0.0.0.0", "::"):  # noqa: S104 - a wildcard bind is no name to verify
            continue
        try:
            out.append(x509.IPAddress(ipaddress.ip_address(h)))
        except ValueError:
            out.append(x509.DNSName(h))
    return out


def _new_serving(ca_cert_pem: bytes, ca_key_pem: bytes, hosts: list[str]) -> tuple[bytes, bytes]:
    ca_cert = x509.load_pem_x509_certificate(ca_cert_pem)
    ca_key = serialization.load_pem_private_key(ca_key_pem, password=None)
    assert isinstance(ca_key, ec.EllipticCurvePrivateKey)
    key = ec.generate_private_key(ec.SECP256R1())
    now = dt.datetime.now(dt.UTC)
    cert = (x509.CertificateBuilder()
            .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "kube-apiserver")]))
            .issuer_name(ca_cert.subject).public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - dt.timedelta(minutes=5)).not_valid_after(now + dt.timedelta(days=VALID_DAYS))
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
            .add_extension(x509.SubjectAlternativeName(_sans(hosts)), critical=False)
            .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), critical=False)
            .sign(ca_key, hashes.SHA256()))
    return cert.public_bytes(serialization.Encoding.PEM), _key_pem(key)


def _covers(cert_pem: bytes, ca_pem: bytes, hosts: list[str]) -> bool:
    """The serving certificate was signed by this CA and names every host."""
    cert = x509.load_pem_x509_certificate(cert_pem)
    ca = x509.load_pem_x509_certificate(ca_pem)
    if cert.issuer != ca.subject:
        return False
    try:
        cert.verify_directly_issued_by(ca)
        names = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    except (ValueError, TypeError, InvalidSignature, x509.ExtensionNotFound):
        return False
    return all(n in list(names) for n in _sans(hosts))


def ensure(directory: Path, hosts: list[str]) -> ServingFiles:
    """The CA and serving certificate of `directory`, created when missing (the CA once; the
    serving certificate again when it does not name every one of `hosts`)."""
    ca_file, ca_key = directory / "ca.crt", directory / "ca.key"
    cert_file, key_file = directory / "server.crt", directory / "server.key"
    with _locked(directory):
        if not (ca_file.exists() and ca_key.exists()):
            cert, key = _new_ca()
            _write(ca_key, key, 0o600)
            _write(ca_file, cert, 0o644)
        ca_pem = ca_file.read_bytes()
        if not (cert_file.exists() and key_file.exists() and _covers(cert_file.read_bytes(), ca_pem, hosts)):
            cert, key = _new_serving(ca_pem, ca_key.read_bytes(), hosts)
            _write(key_file, key, 0o600)
            _write(cert_file, cert, 0o644)
    return ServingFiles(ca_pem=ca_pem.decode(), cert_file=cert_file, key_file=key_file)
