"""The simulated cloud's node access: a twin that carries out the same typed steps as the SSH
executor, on state kept in the SimCloud extras of the instance (key "k8s").

State (JSON): cluster (endpoint, CA, bootstrap token hash), nodes (role, ready, addresses, labels,
cordoned), pods and pdbs, etcd members (name, peer URL, healthy), per-host HAProxy backends,
keepalived and /etc/hosts blocks (host-local state is keyed by server id, so a healed VM starts
clean), service accounts (token hashes only), notes such as the registered VIM (no secrets), faults.

Faults (set in the state's "faults" or through `set_faults`): `never_ready` node names, a pod
disruption budget that blocks a drain (`add_pdb`), and an unreachable host (the server's
`ssh_reachable`, from the simulator's fault injection).
"""

from __future__ import annotations

import asyncio
import functools
import inspect
from collections.abc import Callable, Collection, Mapping, Sequence
from typing import Any

from vnfm.adapters.infra.simulator.lookups import HostBrief
from vnfm.adapters.infra.simulator.twin import operator
from vnfm.adapters.infra.simulator.twin.base import KEY, TwinConfig, empty
from vnfm.adapters.infra.simulator.twin.handlers import ALL_HANDLERS, OPERATOR_HANDLERS
from vnfm.nodesteps.base import HostKeyChanged, NodeStep, StepExecutor, StepFailed, StepResult
from vnfm.nodesteps.kubeadm import KubeadmJoin

TwinHandler = Callable[..., Any]
_KEYS = frozenset(empty())


@functools.cache
def _awaits(handler: TwinHandler) -> bool:
    return inspect.iscoroutinefunction(handler)


class TwinExecutor(StepExecutor):
    """Hosts are addresses (fixed or floating) of VNFC servers of the simulated cloud. `pins` and
    `pin_keys` (address -> pin key) follow the NodeAccess contract for host keys."""

    def __init__(self, sim: Any, instance_id: str, config: TwinConfig | None = None, *,
                 pins: dict[str, str] | None = None, pin_keys: Mapping[str, str] | None = None,
                 handlers: Mapping[type[NodeStep], TwinHandler] | None = None,
                 operators: Collection[str] = ()) -> None:
        self.sim = sim
        self.instance_id = instance_id
        self.config = config or TwinConfig()
        self.pins = pins if pins is not None else {}
        self.pin_keys = dict(pin_keys or {})
        self._handlers = dict(ALL_HANDLERS if handlers is None else handlers)
        self.operators = set(operators)  # addresses of operator hosts (outside the VNF)

    # ------------------------------------------------------------------ state helpers
    def state(self) -> dict[str, Any]:
        return dict(self.sim.extras(self.instance_id).get(KEY) or empty())

    def peek(self, fn: Callable[[dict[str, Any]], Any]) -> Any:
        """`fn(state)` on the state as stored (joined to an open transaction: as it is there), no
        copy made: `fn` must not change it and must copy what it returns of it."""
        return self.sim.peek_extras(self.instance_id, lambda extras: fn(extras.get(KEY) or empty()))

    def tx(self, fn: Callable[[dict[str, Any]], Any]) -> Any:
        def wrap(extras: dict[str, Any]) -> Any:
            st = extras.get(KEY)
            if st is None:
                st = extras[KEY] = empty()
            elif not st.keys() >= _KEYS:
                for k, v in empty().items():
                    st.setdefault(k, v)
            return fn(st)

        return self.sim.update_extras(self.instance_id, wrap)

    def _server(self, host: str, step: NodeStep) -> str:
        """The id of the server at `host`, which must answer on SSH."""
        server = self.sim.host_brief(host)
        if server is None:
            raise StepFailed(host, step, "no server has this address (unreachable)")
        if server.status != "ACTIVE" or not server.ssh_reachable:
            raise StepFailed(host, step, f"host unreachable: server {server.name} does not answer on SSH")
        return str(server.server_id)

    # ------------------------------------------------------------------ the executor contract
    def _operator(self, host: str) -> bool:
        return host in self.operators and self.sim.host_brief(host) is None

    def _host_key(self, host: str, server: HostBrief | None) -> tuple[str, str]:
        """(the SSH host key the host presents, its name), from the look-up of the host."""
        if server is None and host in self.operators:
            if not operator.reachable(self.sim, host):
                raise StepFailed(host, NodeStep(), "host unreachable: the operator host does not answer on SSH")
            return operator.host_key(self.sim, host), host
        if server is None or not server.ssh_reachable or server.status != "ACTIVE":
            raise StepFailed(host, NodeStep(), "host unreachable: cannot read its SSH host key")
        return server.host_key, server.name

    async def verify_host_keys(self, hosts: Sequence[str]) -> None:
        briefs = self.sim.host_briefs(list(dict.fromkeys(hosts)))  # one read for them all
        for host, brief in briefs.items():
            key, name = self._host_key(host, brief)
            pin = self.pin_keys.get(host, f"host:{host}")
            if pin not in self.pins:
                self.pins[pin] = key
            elif self.pins[pin] != key:
                raise HostKeyChanged(f"host key of {name} ({host}) changed since it was pinned; refusing "
                                     "to use it (heal the VNFC if it was legitimately rebuilt)")

    def note(self, key: str, value: Any) -> None:
        def fn(st: dict[str, Any]) -> None:
            st[key] = value

        self.tx(fn)

    async def run(self, host: str, step: NodeStep) -> StepResult:
        if type(step) in OPERATOR_HANDLERS or self._operator(host):
            return await self._run_operator(host, step)
        handler = self._handlers.get(type(step))
        if handler is None:
            raise StepFailed(host, step, f"step {type(step).__name__} is not supported by the twin")
        delay = self.config.step_latency.get(step.kind, self.config.default_latency)
        joining = isinstance(step, KubeadmJoin)
        if joining:
            delay += self.config.join_time
            seen = self.config.observed
            seen["joins_in_flight"] = seen.get("joins_in_flight", 0) + 1
            seen["max_joins_in_flight"] = max(seen.get("max_joins_in_flight", 0), seen["joins_in_flight"])
        try:
            if delay > 0:  # the host answers when the step starts, and still when it acts
                self._server(host, step)
                await asyncio.sleep(delay)
        finally:
            if joining:
                self.config.observed["joins_in_flight"] -= 1
        if _awaits(handler):  # it awaits: its transactions are its own
            result = handler(self, host, self._server(host, step), step)
        else:  # the host check and the step's state change: one transaction
            with self.sim.atomic():
                result = handler(self, host, self._server(host, step), step)
        if asyncio.iscoroutine(result):
            result = await result
        assert isinstance(result, StepResult)
        return result

    async def _run_operator(self, host: str, step: NodeStep) -> StepResult:
        handler = OPERATOR_HANDLERS.get(type(step))
        if not self._operator(host):
            raise StepFailed(host, step, "this step runs on an operator host (outside the VNF), not on a VNFC")
        if handler is None:
            raise StepFailed(host, step, f"step {type(step).__name__} does not run on an operator host")
        self._host_key(host, None)  # reachable (an operator host: no server has its address, checked above)
        delay = self.config.step_latency.get(step.kind, self.config.default_latency)
        if delay > 0:
            await asyncio.sleep(delay)
        result = handler(self, host, operator.SID_PREFIX + host, step)
        if asyncio.iscoroutine(result):
            result = await result
        assert isinstance(result, StepResult)
        return result

    # ------------------------------------------------------------------ test and demo helpers
    def set_faults(self, **faults: Any) -> None:
        def fn(st: dict[str, Any]) -> None:
            st["faults"].update(faults)

        self.tx(fn)

    def add_pod(self, name: str, node: str, *, namespace: str = "default", labels: dict[str, str] | None = None,
                daemonset: bool = False, mirror: bool = False) -> None:
        def fn(st: dict[str, Any]) -> None:
            st["pods"][f"{namespace}/{name}"] = {"name": name, "namespace": namespace, "node": node,
                                                 "labels": dict(labels or {}), "daemonset": daemonset,
                                                 "mirror": mirror}

        self.tx(fn)

    def add_pdb(self, name: str, selector: dict[str, str], max_unavailable: int = 0) -> None:
        def fn(st: dict[str, Any]) -> None:
            st["pdbs"][name] = {"selector": dict(selector), "max_unavailable": max_unavailable}

        self.tx(fn)

    def bind_pv(self, name: str, claim: str | None) -> None:
        """A claim binds (or, None, releases) a PersistentVolume."""
        def fn(st: dict[str, Any]) -> None:
            pv = st["pvs"][name]
            pv["phase"], pv["claim"] = ("Bound", claim) if claim else ("Available", None)

        self.tx(fn)
