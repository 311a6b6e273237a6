"""Each VDU's flavor and image on the VIM.

Flavor: the request's `additionalParams.nfv.VDU.<vdu>.flavor`, else the VNFD's
`requested_additional_capability_name`, else the smallest flavor that fits the VDU's vCPUs and
memory. Image: the request's `...image`, else the VDU's image found in Glance by name; when missing
and the package ships the image file (a `tosca.artifacts.nfv.SwImage` artifact), it is uploaded.
Uploaded images are kept on terminate on purpose (shared by name with other instances of the
package); delete them with the package's images in Glance when no longer needed.
"""

from __future__ import annotations

import asyncio
import posixpath
from typing import Any

from vnfm.adapters.infra.openstack.cloud import Cloud
from vnfm.adapters.infra.openstack.hot import VduChoice, vnfd_node_extras
from vnfm.domain.errors import UnprocessableEntity
from vnfm.domain.vnfd import Vdu
from vnfm.service.ports import InfraContext


async def choices(ctx: InfraContext, cloud: Cloud) -> dict[str, VduChoice]:
    """VDU id -> the flavor and image its servers get."""
    extras = vnfd_node_extras(ctx.package)
    overrides = ((ctx.additional_params or {}).get("nfv") or {}).get("VDU") or {}
    flavors: list[dict[str, Any]] | None = None
    out: dict[str, VduChoice] = {}
    images: dict[str, str] = {}
    for vdu_id, vdu in ctx.flavour.vdus.items():
        ov_raw = overrides.get(vdu_id)
        ov: dict[str, Any] = ov_raw if isinstance(ov_raw, dict) else {}
        ex = extras.get(vdu_id, {})
        flavor = ov.get("flavor") or ex.get("flavor")
        if not flavor:
            if flavors is None:
                flavors = await asyncio.to_thread(cloud.list_flavors)
            flavor = pick_flavor(vdu, flavors)
        image = ov.get("image")
        if not image:
            name = vdu.sw_image or ex.get("image_name")
            if not name:
                raise UnprocessableEntity(
                    f"VDU {vdu_id} has no sw_image_data and the request gives no "
                    f"additionalParams.nfv.VDU.{vdu_id}.image"
                )
            if name not in images:
                images[name] = await image_id(ctx, cloud, str(name), ex)
            image = images[name]
        out[vdu_id] = VduChoice(flavor=str(flavor), image=str(image))
    return out


async def image_id(ctx: InfraContext, cloud: Cloud, name: str, extra: dict[str, Any]) -> str:
    """The Glance image named `name`, uploaded from the package when Glance lacks it and the
    package has the file; else the name itself (Heat then reports the missing image)."""
    found = await asyncio.to_thread(cloud.find_image, name)
    if found is not None:
        return str(found["id"])
    pkg = ctx.package
    path = extra.get("image_file")
    if pkg is not None and path:
        for cand in (path, posixpath.normpath(str(extra.get("image_file_raw", "")))):
            if cand and pkg.exists(cand):
                ctx.progress(f"image {name} is not in Glance: uploading {cand} from the package")
                data = pkg.read(cand)
                img = await asyncio.to_thread(
                    cloud.upload_image,
                    name,
                    data,
                    str(extra.get("disk_format") or "qcow2"),
                    str(extra.get("container_format") or "bare"),
                )
                return str(img["id"])
    # Neither in Glance nor in the package: Heat reports it (the operation fails with its reason).
    return name


def pick_flavor(vdu: Vdu, flavors: list[dict[str, Any]]) -> str:
    """The smallest flavor with at least the VDU's vCPUs and memory."""
    cpus = vdu.num_cpus or 1
    mem = vdu.memory_mb or 0
    fits = [f for f in flavors if int(f.get("vcpus") or 0) >= cpus and int(f.get("ram") or 0) >= mem]
    if not fits:
        raise UnprocessableEntity(
            f"VDU {vdu.id}: no flavor in the VIM has {cpus} vCPU(s) and {mem} MB; name one in the VNFD "
            f"(requested_additional_capability_name) or in additionalParams.nfv.VDU.{vdu.id}.flavor"
        )
    best = min(fits, key=lambda f: (int(f.get("vcpus") or 0), int(f.get("ram") or 0), int(f.get("disk") or 0)))
    return str(best.get("name") or best["id"])
