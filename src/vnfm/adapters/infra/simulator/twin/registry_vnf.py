"""The private-registry VNF on the twin (seed 003): Docker on a VM, the images it holds, the
registry container and the repositories in its data directory. The data lives with the VM
(host-local state: a healed VM starts empty) unless its directory is a mounted volume, whose state
outlives the server (`volumes`, as the storage twin keeps it).

Faults (the state's "faults"): `docker_fails` (Docker does not start), `unsupported_os`,
`image_load_fails`, `pull_fails` (no route to Docker Hub); each a list of server names, or True.
"""

from __future__ import annotations

import hashlib
import os
from typing import Any

from vnfm.adapters.infra.simulator.twin.base import TwinHost
from vnfm.nodesteps.base import StepFailed, StepResult
from vnfm.nodesteps.registry_vnf import DockerLoadImage, DockerPullImage, InstallDocker, RunRegistryContainer


def _fault(tw: TwinHost, st: dict[str, Any], host: str, name: str) -> bool:
    f = st["faults"].get(name)
    if f is True:
        return True
    server = tw.sim.server_by_address(host) or {}
    return isinstance(f, list) and server.get("name") in f


def _docker(tw: TwinHost, st: dict[str, Any], host: str, sid: str, step: Any) -> dict[str, Any]:
    d: dict[str, Any] | None = st["hosts"].get(sid, {}).get("docker")
    if not d or not d.get("running"):
        raise StepFailed(host, step, "Docker is not running on this host (install it first)")
    return d


def install_docker(tw: TwinHost, host: str, sid: str, step: InstallDocker) -> StepResult:
    def fn(st: dict[str, Any]) -> tuple[bool, bool]:
        if _fault(tw, st, host, "unsupported_os"):
            raise StepFailed(host, step, "unsupported OS: CentOS Stream 9: Docker (docker-ce) is installed from "
                                         "Docker's apt repository on Ubuntu only")
        if _fault(tw, st, host, "docker_fails"):
            raise StepFailed(host, step, "Docker did not start within 120s:\ndockerd: failed to start daemon: "
                                         "error initializing graphdriver: driver not supported")
        h = st["hosts"].setdefault(sid, {})
        d = h.get("docker")
        proxied = bool(step.http_proxy or step.https_proxy)
        if d and d.get("running") and d.get("proxied") == proxied:
            return False, False
        installed = d is None
        h["docker"] = {**(d or {"images": {}, "installs": 0}), "running": True, "proxied": proxied}
        h["docker"]["installs"] += int(installed)
        return True, installed

    changed, installed = tw.tx(fn)
    return StepResult(changed, {"installed": installed, "version": "28.2.2"})


def load_image(tw: TwinHost, host: str, sid: str, step: DockerLoadImage) -> StepResult:
    if not os.path.isfile(step.source):  # the SFTP copy reads the package's file
        raise StepFailed(host, step, f"upload {step.staged} failed: no such file {step.name}")
    with open(step.source, "rb") as f:
        got = hashlib.file_digest(f, "sha256").hexdigest()

    def fn(st: dict[str, Any]) -> bool:
        d = _docker(tw, st, host, sid, step)
        if d["images"].get(step.tag) == got:
            return False
        if got != step.sha256:
            raise StepFailed(host, step, f"the image archive has sha256 {got}, expected {step.sha256} "
                                         "(damaged in transfer?)")
        if _fault(tw, st, host, "image_load_fails"):
            raise StepFailed(host, step, "docker load failed:\nopen /var/lib/docker/tmp/docker-import-1/repositories: "
                                         "no such file or directory")
        d["images"][step.tag] = got
        return True

    return StepResult(tw.tx(fn), {"image": step.tag})


def pull_image(tw: TwinHost, host: str, sid: str, step: DockerPullImage) -> StepResult:
    def fn(st: dict[str, Any]) -> bool:
        d = _docker(tw, st, host, sid, step)
        if step.image in d["images"]:
            return False
        if _fault(tw, st, host, "pull_fails"):
            raise StepFailed(host, step, f"docker pull {step.image} failed (no image_path was given; can the VM "
                                         "reach the registry?):\nError response from daemon: Get "
                                         "\"https://registry-1.docker.io/v2/\": dial tcp: i/o timeout")
        d["images"][step.image] = "pulled"
        return True

    return StepResult(tw.tx(fn), {"image": step.image})


def data_of(st: dict[str, Any], sid: str, data_dir: str) -> tuple[dict[str, Any], str | None]:
    """Where the registry's repositories live: the volume mounted at (or above) `data_dir`, or the
    VM's disk. (The dict to keep them in, the volume id or None.)"""
    h = st["hosts"].setdefault(sid, {})
    for mount, vid in sorted((h.get("mounts") or {}).items(), key=lambda kv: -len(kv[0])):
        if data_dir == mount or data_dir.startswith(mount.rstrip("/") + "/"):
            vol = st["volumes"].setdefault(vid, {})
            return vol.setdefault("registry_data", {}).setdefault(data_dir, {"repositories": {}}), vid
    return h.setdefault("disk", {}).setdefault(data_dir, {"repositories": {}}), None


def run_registry(tw: TwinHost, host: str, sid: str, step: RunRegistryContainer) -> StepResult:
    def fn(st: dict[str, Any]) -> tuple[bool, list[str]]:
        d = _docker(tw, st, host, sid, step)
        if step.image not in d["images"]:
            raise StepFailed(host, step, f"image {step.image} is not present (load or pull it first)")
        data, vid = data_of(st, sid, step.data_dir)
        h = st["hosts"][sid]
        want = {"name": step.name, "image": step.image, "image_id": d["images"][step.image], "port": step.port,
                "data_dir": step.data_dir, "volume_id": vid, "tls": step.tls, "restart": step.restart,
                "address": step.address, "url": step.url,
                "cert_sha256": hashlib.sha256((step.tls_cert_pem or "").encode()).hexdigest() if step.tls else None}
        cur = h.get("registry")
        changed = cur is None or {k: cur.get(k) for k in want} != want or not cur.get("running")
        if changed:
            h["registry"] = {**want, "running": True, "starts": (cur or {}).get("starts", 0) + 1}
        return changed, sorted(data["repositories"])

    changed, repos = tw.tx(fn)
    return StepResult(changed, {"url": step.url, "repositories": repos})


def push(tw: TwinHost, repository: str, tag: str = "latest") -> str:
    """A client pushes `repository:tag` to the instance's running registry (tests, demos): the
    registry's address:port."""
    live = {str(s.get("id")) for s in (tw.sim.snapshot(tw.instance_id) or {}).get("servers") or []
            if s.get("status") == "ACTIVE"}

    def fn(st: dict[str, Any]) -> str:
        for sid, h in st["hosts"].items():
            reg = h.get("registry")
            if reg and reg.get("running") and sid in live:
                data, _ = data_of(st, sid, reg["data_dir"])
                data["repositories"].setdefault(repository, [])
                if tag not in data["repositories"][repository]:
                    data["repositories"][repository].append(tag)
                return f"{reg['address']}:{reg['port']}"
        raise LookupError("no private registry runs in this VNF instance")

    result: str = tw.tx(fn)
    return result


HANDLERS: dict[type, Any] = {
    InstallDocker: install_docker,
    DockerLoadImage: load_image,
    DockerPullImage: pull_image,
    RunRegistryContainer: run_registry,
}
