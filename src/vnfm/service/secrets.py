"""Secrets at rest: values under secret-looking keys (passwords, tokens, keys) are encrypted
before they reach the database, with a key kept outside it.

The keys come from the `secret_key` setting (VNFM_SECRET_KEY: Fernet keys, comma-separated,
newest first), else from `<data_dir>/secret.key`, created with mode 0600 on first use. The first
key encrypts; every key decrypts (MultiFernet), so a key can be rotated without losing what is
stored: `rotate` re-encrypts a stored value with the newest key. Several server processes sharing
one database must share the keys.

A value is encrypted once per entity (`seal(value, scope=<entity id>)`): saving an occurrence or
an instance again reuses the ciphertext of a secret that did not change (the engine saves after
every stage), and decrypting a ciphertext seen before is a lookup. Both caches are bounded;
the clear values are in this process's memory anyway. Without a scope every call encrypts anew.
"""

from __future__ import annotations

import contextlib
import os
from collections import OrderedDict
from pathlib import Path
from typing import Any

import orjson
from cryptography.fernet import Fernet, InvalidToken, MultiFernet

from vnfm.domain.errors import OperationFailed
from vnfm.domain.secrets import SECRET_KEYS, URL_USERINFO, is_secret_key

PREFIX = "enc:v1:"
_NESTED = (dict, list)


def parse_keys(text: str) -> list[bytes]:
    """Comma-separated Fernet keys, newest first; ValueError naming the bad one's position."""
    keys = [k.strip().encode() for k in text.split(",") if k.strip()]
    for n, key in enumerate(keys, 1):
        try:
            Fernet(key)
        except (ValueError, TypeError):
            raise ValueError(f"key {n} of {len(keys)} is no Fernet key (32 url-safe base64-encoded bytes; "
                             "make one with `vnfm auth new-secret-key`)") from None
    return keys


class SecretBox:
    CACHED = 20000  # values per cache

    def __init__(self, key: bytes | list[bytes]) -> None:
        keys = key if isinstance(key, list) else [key]
        self._primary = Fernet(keys[0])
        self._fernet = MultiFernet([Fernet(k) for k in keys])  # encrypts with the first, decrypts with any
        self.rotating = len(keys) > 1
        self._sealed: OrderedDict[tuple[str, str], str] = OrderedDict()  # (scope, clear) -> sealed
        self._clear: OrderedDict[str, str] = OrderedDict()  # sealed -> clear

    @classmethod
    def from_settings(cls, data_dir: Path, keys: str | None = None) -> SecretBox:
        key = keys if keys is not None else os.environ.get("VNFM_SECRET_KEY")
        if key:
            return cls(parse_keys(key))
        path = Path(data_dir) / "secret.key"
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:
            return cls(path.read_bytes().strip())
        with os.fdopen(fd, "wb") as fh:
            fh.write(Fernet.generate_key())
        return cls(path.read_bytes().strip())

    def seal(self, value: Any, scope: str = "") -> Any:
        """A copy of `value` whose secret-looking string values are encrypted: those under
        secret-looking keys, and URLs with credentials (`http://user:password@proxy:3128`).
        `scope` (an entity id): reuse the ciphertext this scope got for the same value before.
        In the first two levels a container whose serialised form has neither a secret word nor
        an '@' is kept as it is, not walked (it is then shared with `value`)."""
        return self._seal(value, scope, 2)

    def _seal(self, value: Any, scope: str, checks: int = 0) -> Any:
        """`seal`; `checks`: levels left in which a container is first checked for secret words."""
        # the walk descends only into containers and strings that can hold a URL (most values are neither)
        if isinstance(value, dict):
            return {k: self._seal_one(v, scope) if is_secret_key(k if isinstance(k, str) else str(k))
                    else (self._seal(v, scope, checks - 1) if checks <= 0 or _may_hold_secret(v) else v)
                    if isinstance(v, _NESTED) else self._seal(v, scope) if isinstance(v, str) and "@" in v else v
                    for k, v in value.items()}
        if isinstance(value, list):
            return [(self._seal(v, scope, checks - 1) if checks <= 0 or _may_hold_secret(v) else v)
                    if isinstance(v, _NESTED) else self._seal(v, scope) if isinstance(v, str) and "@" in v else v
                    for v in value]
        if isinstance(value, str) and "@" in value and URL_USERINFO.search(value):
            return self._seal_one(value, scope)
        return value

    def _seal_one(self, v: Any, scope: str = "") -> Any:
        if isinstance(v, str) and v and not v.startswith(PREFIX):
            return self._encrypt(v, scope)
        if isinstance(v, dict | list):
            return self._seal(v, scope)
        return v

    def rotate(self, value: Any) -> Any:
        """A copy of `value` whose encrypted strings are all encrypted with the newest key."""
        if isinstance(value, dict):
            return {k: self.rotate(v) for k, v in value.items()}
        if isinstance(value, list):
            return [self.rotate(v) for v in value]
        if isinstance(value, str) and value.startswith(PREFIX):
            token = value[len(PREFIX):].encode()
            try:
                self._primary.decrypt(token)
                return value  # already under the newest key
            except InvalidToken:
                pass
            try:
                return PREFIX + self._fernet.rotate(token).decode()
            except InvalidToken:
                raise OperationFailed(
                    "a stored secret cannot be decrypted with any key of VNFM_SECRET_KEY: keep the old key "
                    "in the list (NEW,OLD) until the rotation is done"
                ) from None
        return value

    def _encrypt(self, clear: str, scope: str) -> str:
        if not scope:
            return PREFIX + self._fernet.encrypt(clear.encode()).decode()
        key = (scope, clear)
        sealed = self._sealed.get(key)
        if sealed is None:
            sealed = PREFIX + self._fernet.encrypt(clear.encode()).decode()
            _remember(self._sealed, key, sealed, self.CACHED)
            _remember(self._clear, sealed, clear, self.CACHED)
        return sealed

    def unseal(self, value: Any) -> Any:
        """A copy of `value` with its encrypted strings decrypted (only containers and encrypted
        strings are visited: a body has hundreds of plain values). In the first two levels a
        container whose serialised form holds no encrypted string is kept as it is, not walked
        (most of a stored body: the resources, the plan, the progress lines; it is then shared
        with `value`)."""
        return self._unseal(value, 2)

    def _unseal(self, value: Any, checks: int = 0) -> Any:
        """`unseal`; `checks`: levels left in which a container is first checked for the prefix."""
        if isinstance(value, dict):
            return {k: self._unseal(v, checks - 1) if isinstance(v, _NESTED) and (checks <= 0 or _mentions_sealed(v))
                    or (isinstance(v, str) and v.startswith(PREFIX)) else v for k, v in value.items()}
        if isinstance(value, list):
            return [self._unseal(v, checks - 1) if isinstance(v, _NESTED) and (checks <= 0 or _mentions_sealed(v))
                    or (isinstance(v, str) and v.startswith(PREFIX)) else v for v in value]
        if isinstance(value, str) and value.startswith(PREFIX):
            clear = self._clear.get(value)
            if clear is not None:
                return clear
            try:
                clear = self._fernet.decrypt(value[len(PREFIX):].encode()).decode()
            except InvalidToken:
                raise OperationFailed(
                    "a stored secret cannot be decrypted: VNFM_SECRET_KEY or <data_dir>/secret.key changed"
                ) from None
            _remember(self._clear, value, clear, self.CACHED)
            return clear
        return value


_SEALED_MARK = PREFIX.encode()
# What a serialised document has when `seal` may change something in it: an '@' (a URL with
# credentials), or the first part of a secret word (the key `Private-Key` is `private_key` once
# normalised: its lowered text has `private`)
_SECRET_MARKS = (b"@", *sorted({w.split("_")[0].encode() for w in SECRET_KEYS}))


def _may_hold_secret(value: Any) -> bool:
    """Whether sealing `value` (a JSON document) may change it (one C call and a few searches of
    its serialised form instead of a walk); anything else is walked: a value orjson cannot
    serialise (non-string keys), non-ASCII text (`str.lower` may turn it into a secret word)."""
    try:
        text = orjson.dumps(value)
    except (TypeError, orjson.JSONEncodeError):
        return True
    if not text.isascii():
        return True
    text = text.lower()
    return any(mark in text for mark in _SECRET_MARKS)


def _mentions_sealed(value: Any) -> bool:
    """Whether `value` (a JSON document) may hold an encrypted string: its serialised form has the
    prefix (one C call instead of a walk); a value orjson cannot serialise is walked."""
    try:
        return _SEALED_MARK in orjson.dumps(value)
    except (TypeError, orjson.JSONEncodeError):
        return True


def _remember(cache: OrderedDict[Any, str], key: Any, value: str, most: int) -> None:
    """Put `key` in a bounded cache, the oldest entry out first (from any thread: each operation
    is atomic, and an entry lost to a race is only computed again)."""
    cache[key] = value
    if len(cache) > most:
        with contextlib.suppress(KeyError):
            cache.popitem(last=False)
