"""The etcd backups' S3-compatible store against a real S3 server here: moto's server mode (in a venv
of its own, .venv-s3, made by scripts/setup.sh: botocore pins python-dateutil < 3, the kubernetes
client >= 3), with its IAM checks on (INITIAL_NO_AUTH_ACTION_COUNT: only the three calls that make
the test's user, policy and key go unsigned). Stored, read back, listed and bounded as the directory
store does; wrong credentials and a missing bucket refused with a readable error that never holds a
key; the scheduled backup of a simulated cluster going to the bucket, and its failure recorded."""

from __future__ import annotations

import json
import logging
import os
import re
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from minio import Minio

from vnfm.adapters.infra.simulator import MemoryStateStore, SimCloud, SimConfig
from vnfm.adapters.infra.simulator.twin import TwinConfig
from vnfm.adapters.snapshots import FileSnapshotStore
from vnfm.adapters.snapshots_s3 import S3SnapshotStore, S3Target
from vnfm.bootstrap import build
from vnfm.config import Settings
from vnfm.domain.errors import OperationFailed

from .conftest import PARAMS, K8s

ROOT = Path(__file__).resolve().parents[3]
MOTO = Path(os.environ.get("VNFM_TEST_MOTO_SERVER", ROOT / ".venv-s3/bin/moto_server"))
BUCKET = "vnfm-backups"

pytestmark = pytest.mark.skipif(not MOTO.exists(), reason=f"no moto server at {MOTO} (run scripts/setup.sh)")


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def s3() -> Iterator[S3Target]:
    port = _port()
    env = {**os.environ, "INITIAL_NO_AUTH_ACTION_COUNT": "3"}
    proc = subprocess.Popen([str(MOTO), "-H", "127.0.0.1", "-p", str(port)], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 30
        while True:  # listening (no request before the three unsigned ones: they are counted)
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", port)) == 0:
                    break
            assert proc.poll() is None and time.monotonic() < deadline, "the moto server did not start"
            time.sleep(0.05)
        url = f"http://127.0.0.1:{port}"
        iam = {"Authorization": "AWS4-HMAC-SHA256 Credential=SETUP/20260101/us-east-1/iam/aws4_request, "
                                "SignedHeaders=host, Signature=0"}  # routes to IAM; unsigned calls allowed: 3
        policy = json.dumps({"Version": "2012-10-17",
                             "Statement": [{"Effect": "Allow", "Action": "s3:*", "Resource": "*"}]})
        for call in ({"Action": "CreateUser", "UserName": "vnfm"},
                     {"Action": "PutUserPolicy", "UserName": "vnfm", "PolicyName": "s3", "PolicyDocument": policy},
                     {"Action": "CreateAccessKey", "UserName": "vnfm"}):
            r = httpx.post(url + "/", data={**call, "Version": "2010-05-08"}, headers=iam, timeout=10)
            assert r.status_code == 200, r.text
        ak, sk = (re.search(f"<{k}>(.*?)<", r.text).group(1)  # type: ignore[union-attr]
                  for k in ("AccessKeyId", "SecretAccessKey"))
        Minio(f"127.0.0.1:{port}", access_key=ak, secret_key=sk, secure=False).make_bucket(BUCKET)
        yield S3Target(url, BUCKET, ak, sk, prefix="site-a/etcd")
    finally:
        proc.terminate()
        proc.wait(10)


def test_stored_read_listed_and_bounded_like_the_directory_store(s3: S3Target, tmp_path: Path) -> None:
    store, files = S3SnapshotStore(s3, keep=2), FileSnapshotStore(tmp_path, keep=2)
    for i in range(3):
        where = store.put("inst-1", f"backup-{i}.db", b"snap%d" % i)
        files.put("inst-1", f"backup-{i}.db", b"snap%d" % i)  # same second: the names order them
    assert where == f"s3://{BUCKET}/site-a/etcd/inst-1/backup-2.db"
    listed = store.list("inst-1")
    assert [(o["name"], o["size"]) for o in listed] == [(o["name"], o["size"]) for o in files.list("inst-1")] \
        == [("backup-1.db", 5), ("backup-2.db", 5)]  # the oldest went, in both
    assert store.get("inst-1", "backup-2.db") == b"snap2" and store.get("inst-1", "backup-0.db") is None
    assert store.list("inst-2") == [] == files.list("inst-2")
    with pytest.raises(ValueError, match="not a plain file name"):
        store.put("inst-1", "../x.db", b"")


def test_wrong_credentials_and_missing_bucket_refused_readably(s3: S3Target) -> None:
    cases = [(S3Target(s3.endpoint, BUCKET, s3.access_key, "not-" + s3.secret_key, s3.prefix),
              "SignatureDoesNotMatch: the secret key is wrong for this access key"),
             (S3Target(s3.endpoint, BUCKET, "AKIANOSUCHKEY0000000", s3.secret_key, s3.prefix),
              "InvalidAccessKeyId: the access key is unknown to the store"),
             (S3Target(s3.endpoint, "no-such-bucket", s3.access_key, s3.secret_key, s3.prefix),
              "NoSuchBucket: the bucket does not exist")]
    for target, why in cases:
        with pytest.raises(OperationFailed) as e:
            S3SnapshotStore(target, keep=2).put("inst-1", "backup-x.db", b"x")
        assert why in e.value.detail and f"the S3 store {s3.endpoint}" in e.value.detail
        assert s3.secret_key not in e.value.detail and target.secret_key not in e.value.detail
    assert s3.secret_key not in repr(s3) and s3.access_key not in repr(s3)
    with pytest.raises(ValueError, match="no path, no credentials"):
        S3Target("http://user:pw@127.0.0.1:9000", BUCKET, "a", "b")


def _settings(tmp_path: Path, s3: S3Target, secret: str) -> Settings:
    return Settings(data_dir=tmp_path, probe_callbacks=False, orphan_after=5, etcd_backup_s3_endpoint=s3.endpoint,
                    etcd_backup_s3_bucket=BUCKET, etcd_backup_s3_prefix="cluster-backups",
                    etcd_backup_s3_access_key=s3.access_key, etcd_backup_s3_secret_key=secret)


@pytest.mark.parametrize("good", [True, False], ids=["to-the-bucket", "wrong-secret-recorded"])
async def test_scheduled_backup_into_the_bucket(s3: S3Target, tmp_path: Path, good: bool,
                                                caplog: pytest.LogCaptureFixture) -> None:
    secret = s3.secret_key if good else "wrong-" + s3.secret_key
    app = build(_settings(tmp_path, s3, secret), sim=SimCloud(MemoryStateStore(), SimConfig(
        boot_time=0, api_latency=0, delete_time=0)), notifier=None, twin=TwinConfig(poll=0.002))
    await app.start()
    await app.stop_backup_schedule()  # the tests run rounds themselves: a late first round would take theirs
    try:
        k8s = K8s(app, TwinConfig(poll=0.002))
        k8s.onboard()
        inst_id, _ = await k8s.instantiate("ha", {**PARAMS, "etcd_backup": {"interval": 600, "keep": 2}})
        assert app.backups is not None
        caplog.set_level(logging.DEBUG)
        assert await app.backups.round() == 1
        row = app.extras["etcd_backups"].get(inst_id)
        if good:
            ok = row["last_ok"]
            assert ok["stored"] == f"s3://{BUCKET}/cluster-backups/{inst_id}/{ok['name']}" and ok["drill"]["ok"]
            got = S3SnapshotStore(S3Target(s3.endpoint, BUCKET, s3.access_key, s3.secret_key,
                                           "cluster-backups")).list(inst_id)
            assert [(o["name"], o["size"]) for o in got] == [(ok["name"], ok["size"])]
            assert not (tmp_path / "etcd-backups").exists()  # nothing in the data directory
        else:
            assert row.get("last_ok") is None and row["last"]["ok"] is False
            assert "SignatureDoesNotMatch: the secret key is wrong" in row["last"]["reason"]
        assert secret not in caplog.text and secret not in json.dumps(row)
    finally:
        await app.stop()


def test_settings_refuse_a_half_configured_store(tmp_path: Path) -> None:
    with pytest.raises(Exception, match="need etcd_backup_s3_endpoint"):
        Settings(data_dir=tmp_path, etcd_backup_s3_bucket=BUCKET)
    with pytest.raises(Exception, match="needs an access key and a secret key"):
        Settings(data_dir=tmp_path, etcd_backup_s3_endpoint="http://127.0.0.1:9000", etcd_backup_s3_bucket=BUCKET)
    s = Settings(data_dir=tmp_path, etcd_backup_s3_endpoint="https://s3.example:9000", etcd_backup_s3_bucket=BUCKET,
                 etcd_backup_s3_access_key="AK", etcd_backup_s3_secret_key="very-secret")
    assert "very-secret" not in repr(s) and s.etcd_backup_s3 is not None
