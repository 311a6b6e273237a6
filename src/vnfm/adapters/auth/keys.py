"""The built-in authorization server's signing keys: Ed25519, one PEM file each in
`<data_dir>/oauth2-keys/` (mode 0600), named `<kid>.pem` with a kid that sorts by creation time.
The newest key signs; every key still in the directory verifies, so a rotation (a new key, then,
once the old tokens expired, the old key removed) never cuts a caller off."""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from jwt.algorithms import OKPAlgorithm

KEY_DIR = "oauth2-keys"


@dataclass(frozen=True)
class SigningKey:
    kid: str
    private: Ed25519PrivateKey

    @property
    def public(self) -> Ed25519PublicKey:
        return self.private.public_key()

    def jwk(self) -> dict[str, Any]:
        """The public half as a JWK (RFC 8037), for GET /oauth2/jwks."""
        jwk: dict[str, Any] = json.loads(OKPAlgorithm.to_jwk(self.public))
        return {**jwk, "kid": self.kid, "use": "sig", "alg": "EdDSA"}


def key_dir(data_dir: Path) -> Path:
    return Path(data_dir) / KEY_DIR


def _write_new(directory: Path) -> SigningKey:
    directory.mkdir(parents=True, exist_ok=True, mode=0o700)
    kid = f"{time.time_ns():020d}"
    private = Ed25519PrivateKey.generate()
    pem = private.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                serialization.NoEncryption())
    fd = os.open(directory / f"{kid}.pem", os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "wb") as fh:
        fh.write(pem)
    return SigningKey(kid, private)


def load_keys(data_dir: Path, *, create: bool = True) -> list[SigningKey]:
    """Every key in the directory, newest first; a first one is created when there is none."""
    directory = key_dir(data_dir)
    keys = []
    for path in sorted(directory.glob("*.pem"), reverse=True) if directory.is_dir() else []:
        private = serialization.load_pem_private_key(path.read_bytes(), password=None)
        if not isinstance(private, Ed25519PrivateKey):
            raise ValueError(f"{path} is not an Ed25519 private key")
        keys.append(SigningKey(path.stem, private))
    if not keys and create:
        keys.append(_write_new(directory))
    return keys


def rotate(data_dir: Path, *, keep: int = 2) -> tuple[SigningKey, list[str]]:
    """A new signing key; keys beyond the `keep` newest (the new one counted) are removed.
    Returns the new key and the kids removed."""
    new = _write_new(key_dir(data_dir))
    removed = []
    for old in load_keys(data_dir, create=False)[max(keep, 1):]:
        (key_dir(data_dir) / f"{old.kid}.pem").unlink()
        removed.append(old.kid)
    return new, removed
