"""The private-registry VNF's steps over SSH: Docker installed, the registry image copied over SFTP
and loaded (or pulled), the registry container run and answering."""

from __future__ import annotations

from vnfm.adapters.nodes.ssh.base import Handler, ScriptRunner, changed
from vnfm.adapters.remote.ssh import SshTarget
from vnfm.nodesteps.base import StepResult
from vnfm.nodesteps.registry_vnf import DockerLoadImage, DockerPullImage, InstallDocker, RunRegistryContainer


async def install_docker(ex: ScriptRunner, t: SshTarget, s: InstallDocker) -> StepResult:
    out = await ex.script(t, s, "docker_install", {
        "APT_REPO": s.apt_repository, "PACKAGES": " ".join(s.packages), "NO_PROXY_LIST": s.no_proxy,
        "DEADLINE_S": str(int(s.deadline_s)),
    }, {"HTTP_PROXY_URL": s.http_proxy or "", "HTTPS_PROXY_URL": s.https_proxy or ""}, timeout=s.deadline_s + 900)
    return StepResult(changed(out), {"installed": out.get("installed") == "true", "version": out.get("version", "")})


async def load_image(ex: ScriptRunner, t: SshTarget, s: DockerLoadImage) -> StepResult:
    inputs = {"TAG": s.tag, "SHA256": s.sha256, "STAGED": s.staged}
    out = await ex.script(t, s, "docker_image", {"MODE": "check", **inputs})
    if out.get("loaded") == "true":
        return StepResult(False, {"image": s.tag})
    await ex.upload(t, s, s.source, s.staged, timeout=900)
    out = await ex.script(t, s, "docker_image", {"MODE": "load", **inputs}, timeout=900)
    return StepResult(changed(out), {"image": out.get("image", s.tag)})


async def pull_image(ex: ScriptRunner, t: SshTarget, s: DockerPullImage) -> StepResult:
    out = await ex.script(t, s, "docker_image", {"MODE": "pull", "TAG": s.image, "DEADLINE_S": str(int(s.deadline_s))},
                          timeout=s.deadline_s + 30)
    return StepResult(changed(out), {"image": out.get("image", s.image)})


async def run_registry(ex: ScriptRunner, t: SshTarget, s: RunRegistryContainer) -> StepResult:
    out = await ex.script(t, s, "registry_run", {
        "NAME": s.name, "IMAGE": s.image, "PORT": str(s.port), "DATA_DIR": s.data_dir, "CERT_DIR": s.cert_dir,
        "RESTART": s.restart, "URL": s.url, "DEADLINE_S": str(int(s.deadline_s)),
        "TLS_CERT": (s.tls_cert_pem or "").strip(),
    }, {"TLS_KEY": (s.tls_key_pem or "").strip()}, timeout=s.deadline_s + 120)
    repos = [r for r in out.get("repositories", "").split(",") if r]
    return StepResult(changed(out), {"url": s.url, "repositories": repos})


HANDLERS: dict[type, Handler] = {
    InstallDocker: install_docker,
    DockerLoadImage: load_image,
    DockerPullImage: pull_image,
    RunRegistryContainer: run_registry,
}
