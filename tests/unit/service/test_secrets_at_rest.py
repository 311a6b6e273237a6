"""Secrets (VIM credentials, subscription passwords) are encrypted in the database, masked in API
views, and readable in clear only by the code that needs them."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from vnfm.adapters.db import make_engine
from vnfm.domain.errors import OperationFailed
from vnfm.domain.model import OpState
from vnfm.service import views
from vnfm.service.secrets import SecretBox

from .conftest import SEED_PARAMS, Harness


def _raw_db(h: Harness) -> str:
    path = h.app.settings.database_url.removeprefix("sqlite:///")
    with sqlite3.connect(path) as con:
        return "\n".join(str(row) for t in ("vims", "subscriptions") for row in con.execute(f"SELECT * FROM {t}"))


async def test_vim_and_subscription_secrets_are_encrypted_at_rest(h: Harness) -> None:
    vim = h.app.vims.register_body({"name": "os", "vimType": "openstack",
                                    "accessInfo": {"authUrl": "http://keystone/v3", "username": "admin",
                                                   "password": "VimPassw0rd!", "project": "p"}})
    await h.app.subscriptions.create({"callbackUri": "http://127.0.0.1:9/cb", "authentication": {
        "authType": ["BASIC"], "paramsBasic": {"userName": "u", "password": "SubPassw0rd!"}}})
    raw = _raw_db(h)
    assert "VimPassw0rd!" not in raw and "SubPassw0rd!" not in raw
    assert "enc:v1:" in raw and "http://keystone/v3" in raw  # only secret values are encrypted
    got = h.app.vims.get(vim.id)
    assert got is not None and got.access_info["password"] == "VimPassw0rd!"
    assert views.vim_info(got)["accessInfo"]["password"] == "***"
    delivered = h.app.subscriptions.for_delivery()
    assert delivered[0].authentication["paramsBasic"]["password"] == "SubPassw0rd!"


def test_a_changed_key_is_a_clear_error(tmp_path) -> None:
    sealed = SecretBox.from_settings(tmp_path / "a").seal({"password": "x1y2z3"})
    other = SecretBox.from_settings(tmp_path / "b")
    with pytest.raises(OperationFailed, match="secret.key changed"):
        other.unseal(sealed)
    assert (tmp_path / "a" / "secret.key").stat().st_mode & 0o777 == 0o600


def _raw_rows(h: Harness, *tables: str) -> str:
    path = h.app.settings.database_url.removeprefix("sqlite:///")
    with sqlite3.connect(path) as con:
        return "\n".join(str(row) for t in tables for row in con.execute(f"SELECT * FROM {t}"))


async def test_secrets_in_stored_request_parameters_are_encrypted(h: Harness) -> None:
    """Issue 12.5: node passwords, private keys and proxy credentials in additionalParams (of
    instantiate, scale, heal) are encrypted in the instance and the kept op history; the drivers
    get them in clear; the database files are 0600."""
    secrets = ["s3cret-master-pw", "s3cret-worker-pw", "pr0xy-pw", "-----BEGIN KEY-----abc", "sc4le-pw"]
    k8s = {**SEED_PARAMS["k8s_cluster_installation_param"], "proxy": {"http_proxy": "http://u:pr0xy-pw@proxy:3128"},
           "ssh_private_key": "-----BEGIN KEY-----abc"}
    params = {"k8s_cluster_installation_param": k8s}
    inst = h.app.instances.create({"vnfdId": h.vnfd_id})
    occ = await h.wait(h.app.instances.instantiate(inst.id, {"flavourId": "simple", "additionalParams": params}))
    assert occ.operation_state == OpState.COMPLETED, occ.error
    extra = {"k8s_cluster_installation_param": {"worker_node": {"password": "sc4le-pw"}}}
    occ = await h.wait(h.app.instances.scale(inst.id, {"type": "SCALE_OUT", "aspectId": "worker_instance",
                                                       "additionalParams": extra}))
    assert occ.operation_state == OpState.COMPLETED, occ.error
    scale_ctx = h.rec.calls[-1]
    assert scale_ctx.additional_params["k8s_cluster_installation_param"]["worker_node"]["password"] == "sc4le-pw"
    assert scale_ctx.additional_params["k8s_cluster_installation_param"]["proxy"]["http_proxy"] == \
        "http://u:pr0xy-pw@proxy:3128"
    occ = await h.wait(h.app.instances.terminate(inst.id, {"terminationType": "FORCEFUL"}))
    assert occ.operation_state == OpState.COMPLETED, occ.error

    raw = _raw_rows(h, "vnf_instances", "vnf_lcm_op_occs")
    assert "enc:v1:" in raw and "proxy:3128" not in raw
    for s in secrets:
        assert s not in raw, f"{s} stored in clear"
    ops = h.app.instances.op_list()
    assert any(o.operation_params.get("additionalParams", {}).get("k8s_cluster_installation_param", {})
               .get("ssh_private_key") == secrets[3] for o in ops)
    db = Path(h.app.settings.database_url.removeprefix("sqlite:///"))
    for path in (db, db.with_name(db.name + "-wal"), db.with_name(db.name + "-shm")):
        if path.exists():
            assert path.stat().st_mode & 0o777 == 0o600, path


def test_an_existing_database_file_is_tightened(tmp_path: Path) -> None:
    db = tmp_path / "old.db"
    db.write_bytes(b"")
    db.chmod(0o644)
    make_engine(f"sqlite:///{db}").dispose()
    assert db.stat().st_mode & 0o777 == 0o600


def test_rows_stored_in_clear_before_are_sealed_once(tmp_path: Path) -> None:
    from vnfm.adapters.db import SqlAlchemyUnitOfWork, make_session_factory, migrate
    from vnfm.adapters.db.reseal import seal_stored
    from vnfm.domain.model import VnfInstance

    url = f"sqlite:///{tmp_path / 'vnfm.db'}"
    migrate(url)
    factory = make_session_factory(url)
    inst = VnfInstance(vnfd_id="d", vnf_pkg_id="p", additional_params={"node": {"password": "0ld-pw"}})
    with SqlAlchemyUnitOfWork(factory) as u:  # an earlier release: no sealing
        u.instances.add(inst)
        u.commit()
    box = SecretBox.from_settings(tmp_path)
    assert seal_stored(SqlAlchemyUnitOfWork(factory, box), box) == 1
    assert seal_stored(SqlAlchemyUnitOfWork(factory, box), box) == 0  # once
    with sqlite3.connect(tmp_path / "vnfm.db") as con:
        assert "0ld-pw" not in str(con.execute("SELECT body FROM vnf_instances").fetchall())
    with SqlAlchemyUnitOfWork(factory, box) as u:
        got = u.instances.get(inst.id)
        assert got is not None and got.additional_params["node"]["password"] == "0ld-pw"
