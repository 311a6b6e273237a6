"""The SSH executor's K8s steps with a recording stand-in for SshExecutor (no real cluster here):
inputs go to the script as variables, secrets as exported env on stdin, never in argv."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from vnfm.adapters.mgmt.kubernetes.ssh import K8sSshExecutor
from vnfm.adapters.mgmt.kubernetes.steps import KubeadmJoin, PrepareNode, VimToken
from vnfm.adapters.remote.ssh import Result, SshTarget

SCRIPTS = Path(__file__).resolve().parents[3] / "src/vnfm/adapters/mgmt/kubernetes/scripts"


class RecordingSsh:
    def __init__(self, stdout: str = "@@ changed=true\n") -> None:
        self.calls: list[dict[str, Any]] = []
        self.stdout = stdout

    async def run_script(self, target: SshTarget, script_text: str, **kw: Any) -> Result:
        self.calls.append({"target": target, "script": script_text, **kw})
        return Result(0, self.stdout, "")

    async def close(self) -> None:
        pass


async def test_secrets_travel_as_env_secrets_only() -> None:
    ssh = RecordingSsh()
    ex = K8sSshExecutor(ssh, {"10.0.0.5": SshTarget("10.0.0.5", username="ubuntu", password="pw")})
    step = KubeadmJoin("workernode-0", "10.0.0.5", "10.0.0.9:8383", False, "abcdef.0123456789abcdef",
                       "sha256:" + "0" * 64)
    assert "abcdef.0123456789abcdef" not in repr(step)
    res = await ex.run("10.0.0.5", step)
    assert res.changed
    call = ssh.calls[0]
    assert call["name"] == "kubeadm_join"
    assert call["env_secrets"]["TOKEN"] == "abcdef.0123456789abcdef"
    assert "abcdef.0123456789abcdef" not in str(call["stdin_vars"])
    await ex.run("10.0.0.5", PrepareNode("workernode-0", "1.30.4", "http://u:proxypw@p:3128", None, ""))
    assert "proxypw" in ssh.calls[1]["env_secrets"]["HTTP_PROXY_URL"]
    assert "proxypw" not in str(ssh.calls[1]["stdin_vars"])


async def test_vim_token_output_is_decoded() -> None:
    ssh = RecordingSsh("@@ token=tok\n@@ ca_pem_b64=LS0tLS1CRUdJTg==\n@@ changed=false\n")
    ex = K8sSshExecutor(ssh, {"h": SshTarget("h", username="u", password="p")})
    res = await ex.run("h", VimToken())
    assert res.data == {"token": "tok", "ca_pem": "-----BEGIN"} and not res.changed


@pytest.mark.skipif(shutil.which("shellcheck") is None, reason="shellcheck is not installed")
def test_scripts_pass_shellcheck() -> None:
    scripts = sorted(str(p) for p in SCRIPTS.glob("*.sh"))
    assert len(scripts) == 15
    out = subprocess.run(["shellcheck", *scripts], capture_output=True, text=True)
    assert out.returncode == 0, out.stdout


async def test_registry_credentials_travel_as_env_secrets_only() -> None:
    from vnfm.adapters.mgmt.kubernetes.steps import ContainerdRegistries, RegistryAuthEntry

    ssh = RecordingSsh()
    ex = K8sSshExecutor(ssh, {"h": SshTarget("h", username="u", password="p")})  # type: ignore[arg-type]
    step = ContainerdRegistries((RegistryAuthEntry("registry.example.com", "user01", "regpw-s3cret"),))
    assert "regpw-s3cret" not in repr(step) and "regpw-s3cret" not in step.describe()
    assert (await ex.run("h", step)).changed
    call = ssh.calls[0]
    assert call["name"] == "containerd_registries"
    assert 'password = "regpw-s3cret"' in call["env_secrets"]["AUTH_V2"]
    assert '[plugins."io.containerd.cri.v1.images".registry.configs."registry.example.com".auth]' \
        in call["env_secrets"]["AUTH_V3"]
    assert "regpw-s3cret" not in str(call["stdin_vars"])
