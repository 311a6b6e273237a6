"""The secret key of stored credentials: a setting (one line when bad), and a rotation
(VNFM_SECRET_KEY=NEW,OLD, then NEW) that keeps every stored VIM and subscription credential."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from cryptography.fernet import Fernet, InvalidToken

from vnfm.config import SettingsError, load_settings
from vnfm.domain.errors import OperationFailed
from vnfm.service.secrets import PREFIX

from .conftest import ApiFactory

OS_PW = "0penstack-pa55word"
K8S_TOKEN = "k8s-bearer-t0ken-value"


def _ciphertexts(db: Path) -> list[str]:
    with sqlite3.connect(db) as conn:
        bodies = [b for t in ("vims", "subscriptions") for (b,) in conn.execute(f"SELECT body FROM {t}")]
    found: list[str] = []
    for body in bodies:
        start = body.find(PREFIX)
        while start >= 0:
            end = body.index('"', start)
            found.append(body[start + len(PREFIX):end])
            start = body.find(PREFIX, end)
    return found


async def test_rotation_keeps_every_stored_credential(api_factory: ApiFactory, tmp_path: Path) -> None:
    old, new = Fernet.generate_key().decode(), Fernet.generate_key().decode()
    data = tmp_path / "shared"
    api = await api_factory(data_dir=data, secret_key=old)
    os_vim = await api.c.post("/vnfm/v1/vims", json={"name": "os", "vimType": "openstack", "accessInfo": {
        "authUrl": "https://keystone.example:5000/v3", "username": "admin", "password": OS_PW, "project": "p"}})
    k8s_vim = await api.c.post("/vnfm/v1/vims", json={"name": "k8s", "vimType": "kubernetes", "accessInfo": {
        "authUrl": "https://k8s.example:6443", "bearer_token": K8S_TOKEN}})
    assert os_vim.status_code == k8s_vim.status_code == 201, (os_vim.text, k8s_vim.text)
    ids = os_vim.json()["id"], k8s_vim.json()["id"]
    stored = _ciphertexts(data / "vnfm.db")
    assert len(stored) >= 2 and all(Fernet(old.encode()).decrypt(c.encode()) for c in stored)

    # without the old key the stored credentials are lost (that is what the rotation prevents): the
    # start fails, before the engine runs (`vnfm server`: one line, exit 2)
    with pytest.raises(OperationFailed, match="cannot be decrypted"):
        await api_factory(data_dir=data, secret_key=new)

    await api_factory(data_dir=data, secret_key=f"{new},{old}")  # the start re-encrypts with NEW
    stored = _ciphertexts(data / "vnfm.db")
    assert len(stored) >= 2
    for c in stored:
        assert Fernet(new.encode()).decrypt(c.encode())
        with pytest.raises(InvalidToken):
            Fernet(old.encode()).decrypt(c.encode())

    rotated = await api_factory(data_dir=data, secret_key=new)  # OLD gone: nothing lost
    assert rotated.core.vims.require(ids[0]).access_info["password"] == OS_PW
    r = await rotated.c.get(f"/vnfm/v1/vims/{ids[1]}/kubeconfig", params={"showToken": "true"})
    assert r.status_code == 200 and K8S_TOKEN in r.text


def test_a_bad_secret_key_is_one_line_without_the_value(monkeypatch: pytest.MonkeyPatch) -> None:
    good = Fernet.generate_key().decode()
    monkeypatch.setenv("VNFM_SECRET_KEY", f"{good},not-a-key-s3cret")
    with pytest.raises(SettingsError) as err:
        load_settings()
    (line,) = err.value.lines
    assert line.startswith("setting secret_key (env VNFM_SECRET_KEY): key 2 of 2 is no Fernet key")
    assert "s3cret" not in line and good not in line
