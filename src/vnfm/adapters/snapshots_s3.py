"""The VNFM's copies of etcd backups in an S3-compatible object store (service.ports.SnapshotStore),
the alternative to the directory store (adapters/snapshots.py), through MinIO's maintained client:
objects `<prefix>/<instance id>/<name>` in `bucket`; at most `keep` per instance (the oldest, by
the time the store recorded, then by name, removed after each put) and each at most `max_bytes`.
The bucket must exist (it is never created: a typo would otherwise store backups nobody looks
for). The credentials go to the client only: every error is re-raised as OperationFailed naming the
endpoint, bucket and the store's error code, with both keys scrubbed out of its text.
"""

from __future__ import annotations

import io
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar
from urllib.parse import urlsplit

import urllib3
from minio import Minio
from minio.error import MinioException, S3Error

from vnfm.domain.errors import OperationFailed
from vnfm.domain.secrets import scrub

_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$")
_PREFIX = re.compile(r"^([A-Za-z0-9_.-]+/)*[A-Za-z0-9_.-]+$")
T = TypeVar("T")

# what an answer of the store means for the operator (its code -> the reason given)
_CREDENTIALS = {"InvalidAccessKeyId": "the access key is unknown to the store",
                "SignatureDoesNotMatch": "the secret key is wrong for this access key",
                "AccessDenied": "the credentials may not do this on the bucket",
                "NoSuchBucket": "the bucket does not exist (the VNFM never creates it)"}


@dataclass(frozen=True)
class S3Target:
    """Where the store is (settings VNFM_ETCD_BACKUP_S3_*): an http(s) endpoint URL, bucket, prefix."""

    endpoint: str
    bucket: str
    access_key: str = field(repr=False)
    secret_key: str = field(repr=False)
    prefix: str = "vnfm/etcd-backups"
    region: str = ""

    def __post_init__(self) -> None:
        u = urlsplit(self.endpoint)
        if u.scheme not in ("http", "https") or not u.hostname or u.path not in ("", "/") or u.query \
                or u.username or u.password:
            raise ValueError("the S3 endpoint must be http(s)://host[:port] (no path, no credentials in it)")
        if not re.match(r"^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$", self.bucket):
            raise ValueError(f"S3 bucket {self.bucket!r} is not a valid bucket name")
        if self.prefix and not _PREFIX.match(self.prefix):
            raise ValueError(f"S3 prefix {self.prefix!r}: segments of letters, digits, '_', '.', '-' joined by '/'")
        if not self.access_key or not self.secret_key:
            raise ValueError("the S3 store needs an access key and a secret key")


class S3SnapshotStore:
    def __init__(self, target: S3Target, *, keep: int = 3, max_bytes: int = 2 * 1024**3,
                 timeout: float = 60.0) -> None:
        self.target = target
        self.keep = keep
        self.max_bytes = max_bytes
        u = urlsplit(target.endpoint)
        # bounded waits and retries (the client's own default waits minutes); TLS verified (certifi)
        http = urllib3.PoolManager(timeout=urllib3.Timeout(connect=10.0, read=timeout),
                                   retries=urllib3.Retry(total=3, backoff_factor=0.2,
                                                         status_forcelist=(500, 502, 503, 504)))
        self.client = Minio(u.netloc, access_key=target.access_key, secret_key=target.secret_key,
                            secure=u.scheme == "https", region=target.region or None, http_client=http)

    def where(self, instance_id: str, name: str = "") -> str:
        return f"s3://{self.target.bucket}/{self._key(instance_id, name)}"

    def _key(self, instance_id: str, name: str = "") -> str:
        for what, v in (("instance id", instance_id), *((("snapshot name", name),) if name else ())):
            if not _NAME.match(v):
                raise ValueError(f"{what} {v!r} is not a plain file name")
        return "/".join(p for p in (self.target.prefix, instance_id, name) if p) + ("" if name else "/")

    def _call(self, what: str, fn: Callable[[], T]) -> T:
        t = self.target
        try:
            return fn()
        except S3Error as e:
            why = _CREDENTIALS.get(e.code or "", e.message or "")
            raise OperationFailed(self._clean(f"the S3 store {t.endpoint} (bucket {t.bucket}) refused to {what}: "
                                              f"{e.code}: {why}")) from None
        except (MinioException, urllib3.exceptions.HTTPError, OSError) as e:
            raise OperationFailed(self._clean(f"the S3 store {t.endpoint} (bucket {t.bucket}) did not {what}: "
                                              f"{type(e).__name__}: {e}")) from None

    def _clean(self, text: str) -> str:
        return scrub(text, (self.target.secret_key, self.target.access_key))

    def put(self, instance_id: str, name: str, data: bytes) -> str:
        key = self._key(instance_id, name)
        if len(data) > self.max_bytes:
            raise OperationFailed(f"the snapshot is {len(data)} bytes, more than the {self.max_bytes} the VNFM keeps")
        self._call("store the backup", lambda: self.client.put_object(
            self.target.bucket, key, io.BytesIO(data), len(data), content_type="application/octet-stream"))
        for old in self.list(instance_id)[:-self.keep]:
            self._remove(self._key(instance_id, str(old["name"])))
        return self.where(instance_id, name)

    def _remove(self, key: str) -> None:
        self._call("remove an old backup", lambda: self.client.remove_object(self.target.bucket, key))

    def get(self, instance_id: str, name: str) -> bytes | None:
        key = self._key(instance_id, name)

        def read() -> bytes | None:
            try:
                resp = self.client.get_object(self.target.bucket, key)
            except S3Error as e:
                if e.code == "NoSuchKey":
                    return None
                raise
            try:
                return bytes(resp.read())
            finally:
                resp.close()
                resp.release_conn()

        return self._call("read a backup", read)

    def list(self, instance_id: str) -> list[dict[str, Any]]:
        """The instance's backups, oldest first: name, size, at (Unix time the store recorded)."""
        prefix = self._key(instance_id)
        objs = self._call("list the backups", lambda: list(self.client.list_objects(
            self.target.bucket, prefix=prefix, recursive=True)))
        out: list[dict[str, Any]] = []
        for o in objs:
            name = str(o.object_name)[len(prefix):]
            if _NAME.match(name):  # an object someone put deeper under the prefix is not a backup
                out.append({"name": name, "size": int(o.size or 0),
                            "at": o.last_modified.timestamp() if o.last_modified else 0.0})
        return sorted(out, key=lambda o: (o["at"], o["name"]))
