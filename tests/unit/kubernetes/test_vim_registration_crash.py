"""Issue 12.4: a crash right after the cluster VIM was registered (before the instance recorded its
id) leaves one VIM after the retry, found again by the owner key stored with it; terminate removes it."""

from __future__ import annotations

from typing import Any

import pytest

from vnfm.adapters.mgmt.cluster import vim
from vnfm.domain.model import OpState

from .conftest import K8s


def _owned(k8s: K8s, inst_id: str) -> list[str]:
    return [v.id for v in k8s.app.vims.list() if v.extra.get(vim.OWNER_KEY) == inst_id]


async def test_retry_after_a_crash_behind_vim_registration_keeps_one_vim(
        k8s: K8s, monkeypatch: pytest.MonkeyPatch) -> None:
    original = vim.register

    async def register_then_die(c: Any, admin: Any, api_url: str) -> None:
        await original(c, admin, api_url)
        c.ctx.state.pop("vim_id", None)  # the process died before the instance's state was stored
        raise RuntimeError("killed right after the VIM was registered")

    monkeypatch.setattr(vim, "register", register_then_die)
    inst_id, occ = await k8s.instantiate("simple", ok=False)
    assert occ.operation_state == OpState.FAILED_TEMP
    assert len(_owned(k8s, inst_id)) == 1
    monkeypatch.undo()
    await k8s.done(k8s.app.instances.retry(occ.id))
    owned = _owned(k8s, inst_id)
    assert len(owned) == 1
    assert k8s.app.instances.get(inst_id).driver_state["kubeadm"]["vim_id"] == owned[0]
    await k8s.done(k8s.app.instances.terminate(inst_id, {"terminationType": "FORCEFUL"}))
    assert _owned(k8s, inst_id) == []
