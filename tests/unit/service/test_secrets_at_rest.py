"""Secrets (VIM credentials, subscription passwords) are encrypted in the database, masked in API
views, and readable in clear only by the code that needs them."""

from __future__ import annotations

import sqlite3

import pytest

from vnfm.domain.errors import OperationFailed
from vnfm.service import views
from vnfm.service.secrets import SecretBox

from .conftest import Harness


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
