"""SSH host keys of simulated servers (public data only: nothing here can sign anything)."""

from __future__ import annotations

import base64
import hashlib
import os


def _ssh_string(data: bytes) -> bytes:
    return len(data).to_bytes(4, "big") + data


def new_host_key() -> dict[str, str]:
    """A fresh ed25519-shaped host key and its OpenSSH SHA256 fingerprint (public data only)."""
    blob = _ssh_string(b"ssh-ed25519") + _ssh_string(os.urandom(32))
    fingerprint = "SHA256:" + base64.b64encode(hashlib.sha256(blob).digest()).decode().rstrip("=")
    return {
        "type": "ssh-ed25519",
        "public_key": "ssh-ed25519 " + base64.b64encode(blob).decode(),
        "fingerprint": fingerprint,
    }
