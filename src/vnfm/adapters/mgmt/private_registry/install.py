"""One registry VM set up: Docker, the data volume (when the VDU has one), the registry image
(loaded from the package or pulled), the registry container answering on GET /v2/."""

from __future__ import annotations

import asyncio
import hashlib
import posixpath
from dataclasses import dataclass
from pathlib import Path

from vnfm.adapters.mgmt.cluster.topology import address
from vnfm.adapters.mgmt.private_registry import params as R
from vnfm.domain.errors import OperationFailed
from vnfm.domain.resources import StorageResource, Vnfc
from vnfm.nodesteps.base import NodeStep, StepExecutor
from vnfm.nodesteps.registry_vnf import DockerLoadImage, DockerPullImage, InstallDocker, RunRegistryContainer
from vnfm.nodesteps.storage import PrepareVolume
from vnfm.service.ports import LcmContext, NodeHost, NodeLogin, PackageFiles

IMAGE = "registry:latest"


@dataclass(frozen=True)
class Outcome:
    url: str
    address: str
    repositories: list[str]
    on_volume: bool
    fresh_volume: bool = False  # the volume had no file system yet (new, or re-created by heal)


def volume(rp: R.RegistryParams, v: Vnfc) -> StorageResource | None:
    """The VNFC's virtual storage that holds the registry's data (None: the VM's own disk)."""
    if rp.volume_resource_id is not None:
        found = next((s for s in v.storages if s.virtual_storage_desc_id == rp.volume_resource_id), None)
        if found is None:
            have = ", ".join(sorted(s.virtual_storage_desc_id for s in v.storages)) or "none"
            raise OperationFailed(f"{R.ROOT}.volume_resource_id: VNFC {v.name or v.id} has no volume "
                                  f"'{rp.volume_resource_id}' (its virtual storages: {have})")
        return found
    return v.storages[0] if v.storages else None


def _package_file(pkg: PackageFiles | None, key: str, path: str) -> str:
    norm = posixpath.normpath(path)
    if pkg is None or norm.startswith(("/", "..")) or not pkg.exists(norm):
        raise OperationFailed(f"{R.ROOT}.{key}: '{path}' is not a file of the VNF package")
    return norm


def _sha256(path: str | Path) -> str:
    """The hex SHA-256 of a (large) local file, read in chunks."""
    with open(path, "rb") as f:
        return hashlib.file_digest(f, "sha256").hexdigest()


async def image_step(ctx: LcmContext, rp: R.RegistryParams) -> NodeStep:
    if rp.image_path is None:
        return DockerPullImage(IMAGE)
    path = _package_file(ctx.package, "image_path", rp.image_path)
    assert ctx.package is not None
    local = (ctx.package.root / path).resolve()
    digest = await asyncio.to_thread(_sha256, local)  # images are large: not on the event loop
    return DockerLoadImage(str(local), digest, path, IMAGE)


def tls_files(ctx: LcmContext, rp: R.RegistryParams) -> tuple[str | None, str | None]:
    if rp.cert_path is None or rp.key_path is None:
        return None, None
    pkg = ctx.package
    cert_file = _package_file(pkg, "cert_path", rp.cert_path)
    key_file = _package_file(pkg, "key_path", rp.key_path)
    assert pkg is not None
    try:
        cert, key = pkg.read(cert_file).decode(), pkg.read(key_file).decode()
    except UnicodeDecodeError:
        raise OperationFailed(f"{R.ROOT}.cert_path / key_path: the TLS files must be PEM text") from None
    if "BEGIN CERTIFICATE" not in cert:
        raise OperationFailed(f"{R.ROOT}.cert_path: '{rp.cert_path}' is not a PEM certificate")
    if "PRIVATE KEY" not in key:
        raise OperationFailed(f"{R.ROOT}.key_path: '{rp.key_path}' is not a PEM private key")
    return cert, key


def session(ctx: LcmContext, rp: R.RegistryParams, v: Vnfc) -> tuple[StepExecutor, str, str]:
    """(executor, the address the VNFM reaches the VM at, the VM's own address on the CP)."""
    if ctx.nodes is None:
        raise OperationFailed("no node access is available for this instance's VIM")
    ssh = address(v, rp.ssh_cp_name, floating=True, what=f"{R.ROOT}.ssh_cp_name")
    own = address(v, rp.ssh_cp_name, floating=False, what=f"{R.ROOT}.ssh_cp_name")
    host = NodeHost(ssh, NodeLogin(rp.ssh_username, rp.ssh_password), v.id)
    return ctx.nodes.session(ctx.instance.id, [host], ctx.state.setdefault("host_keys", {})), ssh, own


async def setup(ctx: LcmContext, rp: R.RegistryParams, v: Vnfc) -> Outcome:
    """Every step is idempotent: a retry of a failed operation converges."""
    vol = volume(rp, v)
    image = await image_step(ctx, rp)
    cert, key = tls_files(ctx, rp)
    ex, ssh, own = session(ctx, rp, v)
    try:
        await ex.verify_host_keys([ssh])
        px = rp.proxy
        res = await ex.run(ssh, InstallDocker(px.http_proxy, px.https_proxy, ",".join(px.no_proxy)))
        ctx.progress(f"private registry {v.name or v.id}: Docker "
                     f"{'installed' if res.data.get('installed') else 'running'}")
        fresh = False
        if vol is not None:
            fresh = bool((await ex.run(ssh, PrepareVolume(vol.volume_id, rp.data_dir))).data.get("formatted"))
            ctx.progress(f"private registry {v.name or v.id}: data on volume {vol.volume_id} "
                         f"({vol.virtual_storage_desc_id}) mounted at {rp.data_dir}")
        res = await ex.run(ssh, image)
        how = f"loaded from {rp.image_path}" if rp.image_path else "pulled"
        ctx.progress(f"private registry {v.name or v.id}: image {IMAGE} {how if res.changed else 'present'}")
        run = RunRegistryContainer(own, IMAGE, rp.port_no, rp.data_dir, tls_cert_pem=cert, tls_key_pem=key)
        res = await ex.run(ssh, run)
    finally:
        await ex.close()
    repos = [str(r) for r in res.data.get("repositories") or []]
    return Outcome(run.url, own, repos, vol is not None, fresh)
