"""Secrets at rest: values under secret-looking keys (passwords, tokens, keys) are encrypted
before they reach the database, with a key kept outside it.

The key comes from VNFM_SECRET_KEY (a Fernet key), else from `<data_dir>/secret.key`, created
with mode 0600 on first use. Several server processes sharing one database must share the key.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from cryptography.fernet import Fernet, InvalidToken

from vnfm.domain.errors import OperationFailed
from vnfm.domain.secrets import URL_USERINFO, is_secret_key

PREFIX = "enc:v1:"


class SecretBox:
    def __init__(self, key: bytes) -> None:
        self._fernet = Fernet(key)

    @classmethod
    def from_settings(cls, data_dir: Path, env_key: str | None = None) -> SecretBox:
        key = env_key if env_key is not None else os.environ.get("VNFM_SECRET_KEY")
        if key:
            return cls(key.encode())
        path = Path(data_dir) / "secret.key"
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:
            return cls(path.read_bytes().strip())
        with os.fdopen(fd, "wb") as fh:
            fh.write(Fernet.generate_key())
        return cls(path.read_bytes().strip())

    def seal(self, value: Any) -> Any:
        """A copy of `value` whose secret-looking string values are encrypted: those under
        secret-looking keys, and URLs with credentials (`http://user:password@proxy:3128`)."""
        if isinstance(value, dict):
            return {k: self._seal_one(v) if is_secret_key(str(k)) else self.seal(v) for k, v in value.items()}
        if isinstance(value, list):
            return [self.seal(v) for v in value]
        if isinstance(value, str) and "@" in value and URL_USERINFO.search(value):
            return self._seal_one(value)
        return value

    def _seal_one(self, v: Any) -> Any:
        if isinstance(v, str) and v and not v.startswith(PREFIX):
            return PREFIX + self._fernet.encrypt(v.encode()).decode()
        if isinstance(v, dict | list):
            return self.seal(v)
        return v

    def unseal(self, value: Any) -> Any:
        if isinstance(value, dict):
            return {k: self.unseal(v) for k, v in value.items()}
        if isinstance(value, list):
            return [self.unseal(v) for v in value]
        if isinstance(value, str) and value.startswith(PREFIX):
            try:
                return self._fernet.decrypt(value[len(PREFIX):].encode()).decode()
            except InvalidToken:
                raise OperationFailed(
                    "a stored secret cannot be decrypted: VNFM_SECRET_KEY or <data_dir>/secret.key changed"
                ) from None
        return value
