"""The SSH executor's K8s steps with a recording stand-in for SshExecutor (no real cluster here):
inputs go to the script as variables, secrets as exported env on stdin, never in argv."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from vnfm.adapters.nodes.ssh import SshStepExecutor
from vnfm.adapters.remote.ssh import RemoteError, Result, SshTarget
from vnfm.domain.secrets import scrub
from vnfm.nodesteps import KubeadmJoin, PrepareNode, StepFailed, VimToken

SCRIPTS = Path(__file__).resolve().parents[3] / "src/vnfm/adapters/nodes/ssh/scripts"


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
    ex = SshStepExecutor(ssh, {"10.0.0.5": SshTarget("10.0.0.5", username="ubuntu", password="pw")})
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
    ex = SshStepExecutor(ssh, {"h": SshTarget("h", username="u", password="p")})
    res = await ex.run("h", VimToken())
    assert res.data == {"token": "tok", "ca_pem": "-----BEGIN"} and not res.changed


async def test_registry_credentials_travel_as_env_secrets_only() -> None:
    from vnfm.nodesteps import ContainerdRegistries, RegistryAuthEntry

    ssh = RecordingSsh()
    ex = SshStepExecutor(ssh, {"h": SshTarget("h", username="u", password="p")})  # type: ignore[arg-type]
    step = ContainerdRegistries((RegistryAuthEntry("registry.example.com", "user01", "regpw-s3cret"),))
    assert "regpw-s3cret" not in repr(step) and "regpw-s3cret" not in step.describe()
    assert (await ex.run("h", step)).changed
    call = ssh.calls[0]
    assert call["name"] == "containerd_registries"
    assert 'password = "regpw-s3cret"' in call["env_secrets"]["AUTH_V2"]
    assert '[plugins."io.containerd.cri.v1.images".registry.configs."registry.example.com".auth]' \
        in call["env_secrets"]["AUTH_V3"]
    assert "regpw-s3cret" not in str(call["stdin_vars"])


class FailingSsh(RecordingSsh):
    """run_script fails with `stderr`, or raises `error`."""

    def __init__(self, stderr: str = "", error: Exception | None = None) -> None:
        super().__init__()
        self.stderr = stderr
        self.error = error

    async def run_script(self, target: SshTarget, script_text: str, **kw: Any) -> Result:
        self.calls.append({"target": target, "script": script_text, **kw})
        if self.error is not None:
            raise self.error
        return Result(100, "", self.stderr)


def executor(ssh: Any) -> SshStepExecutor:
    return SshStepExecutor(ssh, {"h": SshTarget("h", username="u", password="p")})


async def test_step_error_text_has_url_credentials_and_given_secrets_masked() -> None:
    stderr = ("E: Failed to fetch http://archive.ubuntu.com/ubuntu/dists/jammy/InRelease  "
              "Could not connect to http://proxyuser:pr0xy-pw@10.0.0.1:3128\n"
              "E: proxy https://other:0ther-pw@proxy2.example:8443/ refused\n"
              "W: the password pr0xy-pw alone\n")
    ssh = FailingSsh(stderr)
    ex = executor(ssh)
    step = PrepareNode("workernode-0", "1.30.4", "http://proxyuser:pr0xy-pw@10.0.0.1:3128", None, "")
    with pytest.raises(StepFailed) as ei:
        await ex.run("h", step)
    text = str(ei.value)
    assert "pr0xy-pw" not in text and "0ther-pw" not in text and "proxyuser" not in text
    assert "http://***@10.0.0.1:3128" in text and "https://***@proxy2.example:8443/" in text
    assert "the password *** alone" in text  # a secret the script was given, echoed on its own
    assert "http://archive.ubuntu.com/ubuntu/dists/jammy/InRelease" in text  # plain URLs stay
    assert ei.value.reason == text.split(": ", 1)[1]


async def test_step_error_text_masks_the_join_token_echoed_by_a_script() -> None:
    ssh = FailingSsh("kubeadm: bad token abcdef.0123456789abcdef\n")
    ex = executor(ssh)
    step = KubeadmJoin("workernode-0", "10.0.0.5", "10.0.0.9:6443", False, "abcdef.0123456789abcdef",
                       "sha256:" + "0" * 64)
    with pytest.raises(StepFailed) as ei:
        await ex.run("h", step)
    assert "0123456789abcdef" not in str(ei.value) and "bad token ***" in str(ei.value)


async def test_remote_error_text_has_url_credentials_masked() -> None:
    ssh = FailingSsh(error=RemoteError("fetching http://bob:b0b-pw@mirror:8080/x failed"))
    ex = executor(ssh)
    with pytest.raises(StepFailed) as ei:
        await ex.run("h", PrepareNode("workernode-0", "1.30.4", None, None, ""))
    assert "b0b-pw" not in str(ei.value) and "http://***@mirror:8080/x" in str(ei.value)


def test_scrub_masks_url_credentials_and_secret_values() -> None:
    assert scrub("via http://u:p%40ss@h:3128 and ftp://:x@y/") == "via http://***@h:3128 and ftp://***@y/"
    assert scrub("http://h:8080/a@b ssh root@h") == "http://h:8080/a@b ssh root@h"  # no userinfo
    assert scrub("tok s3cret and pw", {"s3cret", ""}) == "tok *** and pw"  # "" is not a secret
    assert scrub("bare pw1234", ["http://u:pw1234@h"]) == "bare ***"


@pytest.mark.skipif(shutil.which("bash") is None, reason="bash is not installed")
def test_prepare_node_masks_url_credentials_in_apt_and_curl_errors() -> None:
    text = (SCRIPTS / "prepare_node.sh").read_text()
    start = text.index("masked() {")
    func = text[start:text.index("\n}\n", start) + 3]
    probe = func + 'masked sh -c "echo out-line; echo \\"E: http://user:s3cr3t@proxy:3128 down\\" >&2; exit 7"\n'
    res = subprocess.run(["bash", "-c", "set -euo pipefail\n" + probe], capture_output=True, text=True, timeout=10)
    assert res.returncode == 7  # the command's own status
    assert res.stdout == "out-line\n"  # stdout untouched
    assert res.stderr == "E: http://***@proxy:3128 down\n"
