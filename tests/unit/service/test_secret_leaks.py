"""A management driver that tries to leak a request secret everywhere it can: progress lines, its
persisted state, the error it fails with, and a node step whose inputs carry it (over the SSH step
executor, with an SSH layer that records the command line each node would see instead of
connecting). The test reads back what an operator can see: the REST API's instance and operation
occurrence (progress included), the log records, and those command lines. Any of them showing the
secret fails it (a mutation that stops scrubbing progress lines, for one, is caught here)."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.unit.service.conftest import SEED_PARAMS, Harness, Recorder
from vnfm.adapters.infra.simulator import MemoryStateStore, SimCloud, SimConfig
from vnfm.adapters.mgmt.bindings import MgmtDrivers
from vnfm.adapters.nodes.ssh import SshStepExecutor
from vnfm.adapters.remote.ssh import SshExecutor, SshTarget, _RawResult
from vnfm.bootstrap import build
from vnfm.config import Settings
from vnfm.domain.model import OpState
from vnfm.entrypoints.api.app import create_app
from vnfm.nodesteps.kubeadm import PrepareNode
from vnfm.service.ports import LcmContext, MgmtDriver

SECRET = "s3cret-master-pw"  # SEED_PARAMS' master password
assert SECRET in str(SEED_PARAMS)


class CommandLines(SshExecutor):
    """The SSH layer of the step executor, minus the network: records each command line (what the
    node's sshd would exec, and `ps` would show) and answers as a script that changed nothing."""

    def __init__(self) -> None:
        super().__init__()
        self.lines: list[str] = []
        self.stdin: list[bytes] = []

    async def _exec(self, target: SshTarget, command: str, stdin: bytes | str | None, timeout: float | None,
                    shown: str) -> _RawResult:
        self.lines.append(command)
        self.stdin.append(stdin.encode() if isinstance(stdin, str) else stdin or b"")
        return _RawResult(0, b"@@ changed=false\n", b"")


class Leaker(MgmtDriver):
    name = "leaker"
    declared = Recorder.declared  # it reads the seeds' cluster parameters, as the Recorder does

    def __init__(self) -> None:
        self.ssh = CommandLines()

    async def handle(self, hook: str, ctx: LcmContext) -> None:
        if hook != "instantiate_end":
            return
        pw = ctx.additional_params["k8s_cluster_installation_param"]["master_node"]["password"]
        ctx.progress(f"logging in with password {pw}")
        ctx.state["login"] = {"note": f"the password is {pw}"}
        nodes = SshStepExecutor(self.ssh, {"10.0.0.5": SshTarget("10.0.0.5", username="root", password=pw)})
        await nodes.run("10.0.0.5", PrepareNode("k8s-m1", "1.30.4", f"http://proxy:{pw}@10.0.0.1:3128", None, ""))
        raise RuntimeError(f"join failed for ubuntu:{pw}")


async def test_a_secret_a_driver_leaks_shows_nowhere(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    leaker = Leaker()
    reg = MgmtDrivers()
    reg.register("kubeadm", lambda: leaker)
    sim = SimCloud(MemoryStateStore(), SimConfig(boot_time=0, api_latency=0, delete_time=0))
    app = build(Settings(data_dir=tmp_path, probe_callbacks=False), sim=sim, mgmt=reg, notifier=None)
    await app.start()
    try:
        h = Harness(app, None)  # type: ignore[arg-type]
        h.onboard()
        inst = app.instances.create({"vnfdId": h.vnfd_id})
        occ = await h.wait(app.instances.instantiate(inst.id, {"flavourId": "simple",
                                                               "additionalParams": SEED_PARAMS}))
        assert occ.operation_state == OpState.FAILED_TEMP
        api = create_app(vnfm_app=app)
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=api), base_url="http://vnfm") as c:
            shown: dict[str, Any] = {
                "instance": (await c.get(f"/vnflcm/v1/vnf_instances/{inst.id}")).text,
                "operation": (await c.get(f"/vnflcm/v1/vnf_lcm_op_occs/{occ.id}")).text,
                "operations": (await c.get("/vnflcm/v1/vnf_lcm_op_occs")).text,
            }
    finally:
        await app.stop()
    # what the driver did reached each place (so the checks below look where the secret was sent)
    events = [e["message"] for e in app.instances.op_get(occ.id).events]
    assert any(m.startswith("logging in with password ") for m in events)
    assert "join failed for ubuntu:" in shown["operation"]
    assert any(r.getMessage().startswith(f"op {occ.id[:8]}") for r in caplog.records)
    assert leaker.ssh.lines and any(SECRET.encode() in s for s in leaker.ssh.stdin)  # on stdin only
    # ... and the secret shows nowhere an operator looks
    assert not [m for m in events if SECRET in m], "a progress line shows the secret"
    for what, text in shown.items():
        assert SECRET not in text, f"the API's {what} shows the secret"
    assert not [r.getMessage() for r in caplog.records if SECRET in r.getMessage()], "a log line shows it"
    assert not [line for line in leaker.ssh.lines if SECRET in line], "a node command line shows the secret"
