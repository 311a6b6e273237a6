"""VIM type `kubernetes`: a CNF is the objects of the manifests its instantiate request lists
(`additionalParams.lcm-kubernetes-def-files`, files of the package), applied through the
Kubernetes API of the VIM; its VNFCs are the pods of the workloads (and bare Pods) named like a VDU.

- deploy: apply every object (Namespaces first), a VDU's workload with `counts[vdu]` replicas, then
  wait (with a deadline) until every VDU's pods are Ready.
- update (scale): the VDU's replicas set to the new count; on scale in, the pods of the VNFCs the
  engine chose get the lowest deletion cost first, so exactly those go.
- heal of VNFCs: their pods are deleted; the replacements take over the VNFC ids.
- undeploy: every object deleted (reverse order); GRACEFUL waits until the pods are gone,
  FORCEFUL deletes with grace period 0 and does not wait.
The Kubernetes calls are synchronous (the `kubernetes` client) and run in a worker thread, one
round of calls at a time: the waits are async polls (each poll one round in a thread, the delay
between polls an `asyncio.sleep` growing from `poll` to 2 s, a deadline), never a thread that sleeps.
"""

from __future__ import annotations

import asyncio
import copy
import functools
from collections.abc import Awaitable, Callable, Sequence
from typing import TypeVar

from kubernetes import client
from kubernetes.client.exceptions import ApiException

from vnfm.adapters.infra.kubernetes import objects
from vnfm.adapters.infra.kubernetes.params import DECLARED
from vnfm.adapters.infra.kubernetes.pods import (
    DELETION_COST,
    Unit,
    pod_ready,
    read_pods,
    units,
    vnfcs,
    workload_ready,
)
from vnfm.adapters.kube import client as kube
from vnfm.domain.errors import OperationFailed, UnprocessableEntity
from vnfm.domain.resources import Vnfc, VnfResources
from vnfm.packaging import k8s_manifests
from vnfm.packaging.k8s_manifests import Manifest
from vnfm.service.ports import InfraContext, InfraDriver

T = TypeVar("T")


class KubernetesInfraDriver(InfraDriver):
    vim_type = "kubernetes"
    declared = DECLARED

    def __init__(self, ready_timeout: float = 600.0, poll: float = 0.05) -> None:
        self.ready_timeout = ready_timeout
        self.poll = poll

    # ------------------------------------------------------------------ helpers
    async def _run(self, ctx: InfraContext, fn: Callable[[client.ApiClient], T]) -> T:
        return await asyncio.to_thread(kube.call, ctx.vim, fn)

    @staticmethod
    def manifests(ctx: InfraContext) -> list[Manifest]:
        """The CNF's objects as this instance applies them (its namespace, its owner labels)."""
        return k8s_manifests.for_instance(ctx.package, ctx.additional_params, ctx.instance_id)

    def _units(self, ctx: InfraContext) -> list[Unit]:
        return units(ctx.flavour, self.manifests(ctx))

    async def _wait(self, ctx: InfraContext, us: list[Unit], counts: dict[str, int], what: str,
                    done: Callable[[list[Unit]], bool] = lambda _: True) -> None:
        """Poll until every unit's workload is ready and `done` holds (OperationFailed after
        `ready_timeout`, naming the units not ready)."""
        late: list[str] = []

        def ready(api: client.ApiClient) -> bool:
            for u in us:
                u.pods = read_pods(api, u)
            late[:] = [f"{u.manifest.label} ({sum(map(pod_ready, u.pods))}/{counts.get(u.vdu_id, '?')} Ready)"
                       for u in us if not workload_ready(api, u, counts.get(u.vdu_id))]
            return not late and done(us)

        async def poll() -> bool:
            return await self._run(ctx, ready)

        if not await _until(poll, self.poll, self.ready_timeout):
            raise OperationFailed(f"{what}: not ready after {self.ready_timeout:.0f}s: {', '.join(late)}")

    # ------------------------------------------------------------------ the contract
    async def deploy(self, ctx: InfraContext, counts: dict[str, int]) -> VnfResources:
        ms = self.manifests(ctx)
        us = units(ctx.flavour, ms)
        replicas = {u.manifest.label: counts[u.vdu_id] for u in us if u.vdu_id in counts}

        def work(api: client.ApiClient) -> None:
            for m in ms:
                body = copy.deepcopy(m.obj)
                if m.label in replicas and m.kind in ("Deployment", "StatefulSet"):
                    body["spec"]["replicas"] = replicas[m.label]
                objects.apply(api, m, body, ctx.instance_id)
                ctx.progress(f"applied {m.label} ({m.file})")

        await self._run(ctx, work)
        await self._wait(ctx, us, counts, "instantiate")
        return vnfcs(us, ctx.resources)

    async def update(self, ctx: InfraContext, counts: dict[str, int], remove: Sequence[str]) -> VnfResources:
        us = self._units(ctx)
        gone = {v.server_id for v in ctx.resources.vnfcs if v.id in set(remove)}
        had = ctx.resources.counts()
        for u in us:  # a DaemonSet's pods follow the nodes, a bare Pod is one: neither scales
            want = counts.get(u.vdu_id)
            if want is not None and want != had.get(u.vdu_id) and u.manifest.kind not in ("Deployment", "StatefulSet"):
                raise OperationFailed(f"VDU {u.vdu_id} is {u.manifest.label}: only a Deployment or a StatefulSet "
                                      "scales")

        def work(api: client.ApiClient) -> None:
            core = client.CoreV1Api(api)
            for u in us:
                want = counts.get(u.vdu_id)
                if want is None or u.manifest.kind not in ("Deployment", "StatefulSet"):
                    continue
                for p in read_pods(api, u):
                    if p["metadata"]["name"] in gone:  # these go first when the replicas shrink
                        core.patch_namespaced_pod(p["metadata"]["name"], u.manifest.namespace or "default",
                                                  {"metadata": {"annotations": {DELETION_COST: "-1000"}}})
                objects.scale(api, u.manifest, want, ctx.instance_id)
                ctx.progress(f"{u.manifest.label}: {want} replica(s)")

        await self._run(ctx, work)
        await self._wait(ctx, us, counts, "scale", lambda xs: not any(
            p["metadata"]["name"] in gone for x in xs for p in x.pods))
        return vnfcs(us, ctx.resources)

    async def heal(self, ctx: InfraContext, vnfc_ids: Sequence[str], *, keep_storage: bool = True) -> VnfResources:
        us = self._units(ctx)
        victims = [v for v in ctx.resources.vnfcs if v.id in set(vnfc_ids)]
        counts = ctx.resources.counts()

        inherit: dict[str, list[str]] = {}
        for v in victims:
            unit = next((u for u in us if u.vdu_id == v.vdu_id), None)
            if unit is None:
                raise OperationFailed(f"VNFC {v.id}: no manifest object is VDU {v.vdu_id}")
            ns = unit.manifest.namespace or "default"
            await self._run(ctx, functools.partial(_delete_pod, name=v.server_id, namespace=ns, owner=ctx.instance_id))
            if unit.manifest.kind == "Pod":  # nothing re-creates a bare Pod: we do
                await self._recreate_pod(ctx, unit.manifest)
            inherit.setdefault(v.vdu_id, []).append(v.id)
            ctx.progress(f"pod {ns}/{v.server_id} of VNFC {v.id} deleted")
        old = {v.server_id for v in victims if v.resource_type != "Pod"}
        await self._wait(ctx, us, counts, "heal", lambda xs: not any(p["metadata"]["name"] in old
                                                                     for x in xs for p in x.pods))
        known = VnfResources(vnfcs=[v for v in ctx.resources.vnfcs if v.id not in set(vnfc_ids)
                                    or v.resource_type == "Pod"], stack_id=ctx.resources.stack_id)
        return vnfcs(us, known, inherit)

    async def _recreate_pod(self, ctx: InfraContext, m: Manifest) -> None:
        """Create a bare Pod again once the old one is gone (same name)."""
        async def gone() -> bool:
            return await self._run(ctx, lambda api: objects.read(api, m) is None)

        if not await _until(gone, self.poll, self.ready_timeout):
            raise OperationFailed(f"{m.label}: still terminating after {self.ready_timeout:.0f}s")
        await self._run(ctx, lambda api: objects.apply(api, m, copy.deepcopy(m.obj), ctx.instance_id))

    async def undeploy(self, ctx: InfraContext) -> None:
        forceful = str((ctx.operation_params or {}).get("terminationType") or "").upper() == "FORCEFUL"
        ms = self.manifests(ctx)
        us = units(ctx.flavour, ms)

        def work(api: client.ApiClient) -> None:
            for m in reversed(ms):
                done = objects.delete(api, m, ctx.instance_id, grace=0 if forceful else None)
                if isinstance(done, str):
                    ctx.progress(f"{done}: not deleted")
                elif done:
                    ctx.progress(f"deleted {m.label}")

        await self._run(ctx, work)
        if forceful:
            return

        async def gone() -> bool:
            return await self._run(ctx, lambda api: not any(read_pods(api, u) for u in us))

        if not await _until(gone, self.poll, self.ready_timeout):
            raise OperationFailed(f"terminate: pods still there after {self.ready_timeout:.0f}s")

    def check_instantiate(self, ctx: InfraContext) -> None:
        """At request time: no object of the CNF exists as another instance's (or nobody's) on the VIM."""
        ms = self.manifests(ctx)

        def work(api: client.ApiClient) -> list[str]:
            return [why for m in ms if (why := objects.check_owner(api, m, ctx.instance_id))]

        try:
            taken = kube.call(ctx.vim, work)
        except OperationFailed:  # the VIM does not answer now: the operation's apply checks each object again
            return
        if taken:
            raise UnprocessableEntity("; ".join(taken) + " (nothing was applied; another namespace avoids the clash: "
                                      f"additionalParams.{k8s_manifests.NAMESPACE_PARAM}, for objects whose manifest "
                                      "names none)")

    async def current(self, ctx: InfraContext) -> VnfResources:
        us = self._units(ctx)

        def work(api: client.ApiClient) -> VnfResources:
            for u in us:
                u.pods = read_pods(api, u)
            return vnfcs(us, ctx.resources)

        return await self._run(ctx, work)

    async def probe(self, ctx: InfraContext, vnfc: Vnfc) -> str | None:
        ns = str(vnfc.metadata.get("namespace") or "default")

        def work(api: client.ApiClient) -> str | None:
            try:
                pod = api.sanitize_for_serialization(client.CoreV1Api(api).read_namespaced_pod(vnfc.server_id, ns))
            except ApiException as e:
                return f"pod {ns}/{vnfc.server_id}: {e.status}"
            return None if pod_ready(pod) else f"pod {ns}/{vnfc.server_id} is not Ready"

        return await self._run(ctx, work)




async def _until(done: Callable[[], Awaitable[bool]], poll: float, timeout: float) -> bool:
    """Poll `done` (the delay growing from `poll` to 2 s) until it holds: False after `timeout`."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    delay = poll
    while not await done():
        if loop.time() > deadline:
            return False
        await asyncio.sleep(min(delay, max(0.0, deadline - loop.time())))
        delay = min(delay * 1.5, 2.0)
    return True


def _delete_pod(api: client.ApiClient, name: str, namespace: str, owner: str) -> None:
    """Delete pod `namespace/name` when it is `owner`'s (gone already: nothing to do)."""
    core = client.CoreV1Api(api)
    try:
        pod = api.sanitize_for_serialization(core.read_namespaced_pod(name, namespace))
    except ApiException as e:
        if e.status == 404:
            return
        raise
    has = k8s_manifests.owner_of(pod)
    if has != owner:
        raise OperationFailed(f"pod {namespace}/{name} belongs to {f'VNF instance {has}' if has else 'no VNF instance'}"
                              ": not deleted")
    try:
        core.delete_namespaced_pod(name, namespace)
    except ApiException as e:
        if e.status != 404:
            raise
