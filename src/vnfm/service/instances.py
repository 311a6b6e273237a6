"""SOL003 VNF instance use cases: create / modify / delete, and the LCM tasks that create
operation occurrences (instantiate, scale, heal, terminate) plus retry / rollback / fail.

Requests are validated and every decision is taken here, synchronously, before an occurrence
exists: a bad request gets a 4xx naming the problem and nothing is stored or started.
"""

from __future__ import annotations

import builtins
import dataclasses
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from vnfm.domain import lcm, model
from vnfm.domain.access import caller_tenant
from vnfm.domain.errors import BadRequest, Conflict, NotFound, UnprocessableEntity, VnfmError
from vnfm.domain.model import InstantiationState, LcmOperation, OpOcc, OpState, VnfInstance, utcnow
from vnfm.domain.scaling import initial_scale_levels, scaled_levels, target_counts
from vnfm.domain.vnfd import Flavour
from vnfm.packaging import k8s_manifests
from vnfm.service import change_pkg, heal_plan, views
from vnfm.service import params as engine_params
from vnfm.service import requests as rq
from vnfm.service.notifications import Notifications
from vnfm.service.packages import PackageService
from vnfm.service.ports import AbstractUnitOfWork as Uow
from vnfm.service.ports import Condition, InfraContext, InfraDriver, MgmtDriver, Notifier, PackageFiles, UowFactory
from vnfm.service.vims import VimService

# additionalParams of a terminate: go ahead although CNF instances run on the cluster's VIM
IGNORE_DEPENDENTS = "ignore_dependent_cnfs"


class InstanceService:
    def __init__(
        self,
        uow: UowFactory,
        packages: PackageService,
        vims: VimService,
        mgmt: Any,
        *,
        submit: Callable[[str, bool], None] | None = None,
        notifier: Notifier | None = None,
        worker_id: str | None = None,
        on_cancel: Callable[[str], None] | None = None,
        infra: Mapping[str, InfraDriver] | None = None,
    ) -> None:
        self.uow = uow
        self.packages = packages
        self.vims = vims
        self.mgmt = mgmt
        self.submit = submit  # None: another process's engine picks the occurrence up
        self.worker_id = worker_id
        self.notes = Notifications(notifier, worker_id)
        self.on_cancel = on_cancel  # tell this process's engine (another process's sees it itself)
        self.infra = infra or {}  # VIM type -> infrastructure driver (the keys each declares)
        self._elsewhere: dict[str, str] | None = None

    # =============================================================== resources
    def create(self, body: Any) -> VnfInstance:
        req = rq.parse(rq.CreateVnfRequest, body)
        with self.uow() as uow:  # one transaction: the package read, the instance, the package's usage
            pkg = self.packages.find_enabled(req.vnfdId, uow)
            inst = VnfInstance(
                tenant=caller_tenant(),
                vnfd_id=req.vnfdId,
                vnf_pkg_id=pkg.id,
                vnf_provider=pkg.vnf_provider or "",
                vnf_product_name=pkg.vnf_product_name or "",
                vnf_software_version=pkg.vnf_software_version or "",
                vnfd_version=pkg.vnfd_version or "",
                vnf_instance_name=req.vnfInstanceName,
                vnf_instance_description=req.vnfInstanceDescription,
                metadata=req.metadata or {},
            )
            if inst.vnf_instance_name is None:
                inst.vnf_instance_name = f"vnf-{inst.id}"
            uow.instances.add(inst)
            _set_usage(uow, pkg, model.UsageState.IN_USE)
            self.notes.stage(uow, views.identifier_notification("VnfIdentifierCreationNotification", inst.id),
                             tenant=inst.tenant)
            uow.commit()
        self.notes.wake()
        return inst

    def get(self, inst_id: str) -> VnfInstance:
        with self.uow() as uow:
            inst = uow.instances.get(inst_id)
        if inst is None:
            raise NotFound(f"VNF instance {inst_id} does not exist")
        return inst
    def list(self) -> builtins.list[VnfInstance]:
        with self.uow() as uow:
            return uow.instances.list()
    def page(self, conditions: Sequence[Condition], after_id: str | None, limit: int,
             omit: frozenset[str] = frozenset()) -> builtins.list[VnfInstance]:
        """One list page, narrowed in the database (a superset of the matches: see ports.Condition);
        `omit`: API attributes not read (the instances are then partial, see Repository.page)."""
        with self.uow() as uow:
            return uow.instances.page(conditions, after_id, limit, omit)

    def delete(self, inst_id: str) -> None:
        with self.uow() as uow:
            inst = uow.instances.get(inst_id)
            if inst is None:
                raise NotFound(f"VNF instance {inst_id} does not exist")
            lcm.check_can_delete(inst)
            uow.instances.delete(inst_id)
            same_pkg = uow.instances.page([Condition("vnfPkgId", "eq", (inst.vnf_pkg_id,))], None, 2)
            others = [i for i in same_pkg if i.vnf_pkg_id == inst.vnf_pkg_id and i.id != inst_id]
            pkg = None if others else uow.packages.get(inst.vnf_pkg_id)
            if pkg is not None:
                _set_usage(uow, pkg, model.UsageState.NOT_IN_USE)
            self.notes.stage(uow, views.identifier_notification("VnfIdentifierDeletionNotification", inst_id),
                             views.instance_info(inst), tenant=inst.tenant)  # the instance is gone: filters read this
            uow.commit()
        self.notes.wake()

    def modify(self, inst_id: str, body: Any, expect: Callable[[VnfInstance], None] | None = None) -> OpOcc:
        """PATCH: a MODIFY_INFO occurrence. `expect` checks the instance as planned against (If-Match);
        the occurrence is stored only if the instance has not changed since (else 409)."""
        req = rq.parse(rq.VnfInfoModificationRequest, body)
        changes = rq.dump(req)
        if not changes:
            raise BadRequest("VnfInfoModificationRequest changes nothing")
        if "vnfPkgId" in changes:
            raise UnprocessableEntity("changing vnfPkgId is not supported")

        def prepare(inst: VnfInstance, occ: OpOcc) -> None:
            if expect is not None:
                expect(inst)
            if inst.lock_op_id is not None:
                lcm.check_can_start(inst, LcmOperation.MODIFY_INFO)
            _keep_own_vim(inst, changes.get("vimConnectionInfo") or [])

        return self._start(inst_id, LcmOperation.MODIFY_INFO, changes, prepare, check=False)

    # =============================================================== LCM tasks
    def instantiate(self, inst_id: str, body: Any) -> OpOcc:
        req = rq.parse(rq.InstantiateVnfRequest, body)
        params = rq.dump(req)

        def prepare(inst: VnfInstance, occ: OpOcc) -> None:
            vnfd = self.packages.vnfd(inst.vnf_pkg_id)
            flavour = vnfd.flavour(req.flavourId)
            if req.instantiationLevelId:
                flavour.level(req.instantiationLevelId)
            self.mgmt.check(flavour)
            cpds = set(flavour.cps)
            for vl in req.extVirtualLinks or []:
                for cp in vl.extCps:
                    if cp.cpdId not in cpds:
                        raise UnprocessableEntity(
                            f"extVirtualLinks '{vl.id}': cpdId '{cp.cpdId}' is not a CP of flavour '{flavour.id}'"
                        )
            # The request's vimConnectionInfo, else what a PATCH stored before instantiation (SOL003).
            conns = [c.model_dump(exclude_none=True) for c in req.vimConnectionInfo or []] or \
                [dict(c) for c in inst.vim_connection_info]
            choice = self.vims.resolve(conns)
            vim = choice.vim
            known = {str(c.get("id")) for c in conns}
            for vl in req.extVirtualLinks or []:
                if vl.vimConnectionId and vl.vimConnectionId not in known:
                    raise UnprocessableEntity(f"extVirtualLinks '{vl.id}': vimConnectionId '{vl.vimConnectionId}' "
                                              "is not the id of an entry of vimConnectionInfo")
            inst.flavour_id = flavour.id
            inst.instantiation_level_id = req.instantiationLevelId
            inst.ext_virtual_links = [v.model_dump(exclude_none=True) for v in req.extVirtualLinks or []]
            inst.ext_managed_virtual_links = list(req.extManagedVirtualLinks or [])
            inst.additional_params = dict(req.additionalParams or {})
            inst.vnf_configurable_properties.update(req.vnfConfigurableProperties or {})  # isAutohealEnabled
            inst.vim_connection_info = choice.conns  # names the VIM the instance really runs on
            inst.vim_id = vim.id
            if vim.vim_type == "kubernetes":  # a CNF: its manifests are checked before anything is applied
                paths = k8s_manifests.def_files(inst.additional_params)
                if not paths:
                    raise UnprocessableEntity(f"a Kubernetes VIM needs additionalParams.{k8s_manifests.DEF_FILES}")
                k8s_manifests.for_instance(self.packages.files(inst.vnf_pkg_id), inst.additional_params, inst.id)
            self._validate_with_drivers(flavour, "INSTANTIATE", params, inst, occ, vim.vim_type)
            infra = self.infra.get(vim.vim_type) if self.infra is not None else None
            if infra is not None:
                infra.check_instantiate(InfraContext(
                    instance_id=inst.id, op_id=occ.id, vnfd=vnfd, flavour=flavour,
                    package=self._files(inst), vim=vim, ext_virtual_links=inst.ext_virtual_links,
                    additional_params=inst.additional_params))
            # Computes the counts now so that an impossible level fails the request, not the operation.
            levels = initial_scale_levels(flavour, req.instantiationLevelId)
            occ.plan["levels"] = levels
            occ.plan["counts"] = target_counts(flavour, req.instantiationLevelId, levels)
            occ.plan["vim"] = {"id": vim.id, "type": vim.vim_type, "name": vim.name}
            if choice.warning:
                occ.warnings.append(choice.warning)
                occ.events.append({"time": views.ts(utcnow()), "stage": "", "message": choice.warning})

        return self._start(inst_id, LcmOperation.INSTANTIATE, params, prepare)

    def scale(self, inst_id: str, body: Any) -> OpOcc:
        req = rq.parse(rq.ScaleVnfRequest, body)
        params = rq.dump(req)

        def prepare(inst: VnfInstance, occ: OpOcc) -> None:
            flavour = self._flavour(inst)
            out = req.type == "SCALE_OUT"
            new_levels = scaled_levels(flavour, inst.scale_levels, req.aspectId, req.numberOfSteps, out)
            before = target_counts(flavour, inst.instantiation_level_id, inst.scale_levels)
            after = target_counts(flavour, inst.instantiation_level_id, new_levels)
            self._validate_with_drivers(flavour, "SCALE", params, inst, occ)
            if out and (ids := {"vnfc_instance_ids", "vnfcInstanceIds"} & set(req.additionalParams or {})):
                raise BadRequest(f"additionalParams.{min(ids)}: a SCALE_OUT removes no VNFC (only SCALE_IN takes it)")
            plan: dict[str, Any] = {
                "type": req.type,
                "aspect": req.aspectId,
                "old_levels": dict(inst.scale_levels),
                "new_levels": new_levels,
                "counts_before": before,
                "counts": after,
                "before_ids": sorted(inst.resources.ids()),
            }
            if not out:
                remove = self._choose_scale_in(inst, before, after, (req.additionalParams or {}))
                plan["remove"] = [v.id for v in remove]
                plan["removed"] = [dataclasses.asdict(v) for v in remove]
            occ.plan.update(plan)

        return self._start(inst_id, LcmOperation.SCALE, params, prepare)

    def heal(self, inst_id: str, body: Any, *, automatic: bool = False) -> OpOcc:  # automatic: fm/autoheal.py
        req = rq.parse(rq.HealVnfRequest, body)
        params = rq.dump(req)

        def prepare(inst: VnfInstance, occ: OpOcc) -> None:
            occ.is_automatic_invocation, flavour = automatic, self._flavour(inst)
            self._validate_with_drivers(flavour, "HEAL", params, inst, occ)
            heal_plan.plan(req, inst, occ, flavour, mgmt=self.mgmt, vims=self.vims, note=self._note)

        return self._start(inst_id, LcmOperation.HEAL, params, prepare)

    def terminate(self, inst_id: str, body: Any) -> OpOcc:
        req = rq.parse(rq.TerminateVnfRequest, body)
        params = rq.dump(req)

        def prepare(inst: VnfInstance, occ: OpOcc) -> None:
            flavour = self._flavour(inst)
            ignore = (req.additionalParams or {}).get(IGNORE_DEPENDENTS, False)
            if not isinstance(ignore, bool):
                raise BadRequest(f"additionalParams.{IGNORE_DEPENDENTS} must be true or false")
            deps = self.vims.dependents(inst.id)
            if deps and not ignore:
                raise Conflict(f"VNF instance {inst.id} is the cluster of Kubernetes VIM "
                               f"{', '.join(sorted({d.vim_id for d in deps}))}, used by CNF instance(s) "
                               f"{', '.join(d.label for d in deps)}: terminate them first, or set "
                               f"additionalParams.{IGNORE_DEPENDENTS}: true (they can then only be terminated "
                               "and deleted)")
            self._validate_with_drivers(flavour, "TERMINATE", params, inst, occ)
            occ.plan["old"] = [dataclasses.asdict(v) for v in inst.resources.vnfcs]
            if deps:
                self._note(occ, f"{IGNORE_DEPENDENTS}: terminating the cluster under CNF instance(s) "
                                f"{', '.join(d.label for d in deps)}; their resources go with it (terminate and "
                                "delete them: they are told their resources are already gone)")

        return self._start(inst_id, LcmOperation.TERMINATE, params, prepare)

    def change_vnfpkg(self, inst_id: str, body: Any) -> OpOcc:
        req = rq.parse(rq.ChangeCurrentVnfPkgRequest, body)  # a cluster VNF: a Kubernetes upgrade
        occ = self._start(inst_id, LcmOperation.CHANGE_VNFPKG, rq.dump(req),
                          lambda i, o: change_pkg.prepare(self, req, i, o))
        self.packages.set_usage(occ.plan["new"]["vnf_pkg_id"], True)
        return occ

    # =============================================================== occurrences
    def op_get(self, op_id: str) -> OpOcc:
        with self.uow() as uow:
            occ = uow.op_occs.get(op_id)
        if occ is None:
            raise NotFound(f"VNF LCM operation occurrence {op_id} does not exist")
        return occ

    def op_list(self) -> builtins.list[OpOcc]:
        with self.uow() as uow:
            return uow.op_occs.list()
    def op_page(self, conditions: Sequence[Condition], after_id: str | None, limit: int,
                omit: frozenset[str] = frozenset()) -> builtins.list[OpOcc]:
        with self.uow() as uow:
            return uow.op_occs.page(conditions, after_id, limit, omit)

    def retry(self, op_id: str) -> OpOcc:
        return self._resolve(op_id, "retry")
    def rollback(self, op_id: str) -> OpOcc:
        return self._resolve(op_id, "rollback")
    def fail(self, op_id: str) -> OpOcc:
        return self._resolve(op_id, "fail")

    def cancel(self, op_id: str, body: Any) -> OpOcc:
        """SOL003 5.4.17: recorded; the engine stops the occurrence into FAILED_TEMP (GRACEFUL: at a stage end)."""
        req = rq.parse(rq.CancelMode, body)
        with self.uow() as uow:
            occ = uow.op_occs.get_for_update(op_id)
            if occ is None:
                raise NotFound(f"VNF LCM operation occurrence {op_id} does not exist")
            lcm.check_can_cancel(occ)
            occ.is_cancel_pending = True
            occ.cancel_mode = req.cancelMode
            uow.op_occs.save(occ)
            uow.commit()
        if self.on_cancel is not None:
            self.on_cancel(op_id)
        return occ

    def _resolve(self, op_id: str, task: str) -> OpOcc:
        with self.uow() as uow:
            occ = uow.op_occs.get(op_id)
            if occ is None:
                raise NotFound(f"VNF LCM operation occurrence {op_id} does not exist")
            lcm.check_task(occ, task)
            inst = uow.instances.get(occ.vnf_instance_id)
            if task == "fail":
                lcm.transition(occ, OpState.FAILED, error=occ.error)
                occ.owner = None
                if inst is not None and inst.lock_op_id == occ.id:
                    inst.lock_op_id = None
                    uow.instances.save(inst)
            else:
                new = OpState.PROCESSING if task == "retry" else OpState.ROLLING_BACK
                keep_error = occ.error
                lcm.transition(occ, new)
                if task == "rollback":
                    occ.error = keep_error
                occ.owner = self.worker_id if self.submit else None
                occ.epoch += 1  # fences off any runner of an earlier attempt that is still about
                occ.heartbeat = utcnow() if self.submit else None
                if task == "retry":
                    occ.plan.setdefault("retries", 0)
                    occ.plan["retries"] += 1
            uow.op_occs.save(occ)
            self.notes.stage(uow, views.lcm_notification(occ, "RESULT" if task == "fail" else "START"),
                             tenant=occ.tenant)
            uow.commit()
        self.notes.wake()
        if task != "fail" and self.submit is not None:
            self.submit(occ.id, task == "rollback")
        return occ

    # =============================================================== internals
    @staticmethod
    def _note(occ: OpOcc, message: str) -> None:
        """A line of the occurrence's progress log, written when the request is accepted."""
        occ.events.append({"time": views.ts(utcnow()), "stage": "", "message": message})

    def _flavour(self, inst: VnfInstance) -> Flavour:
        if not inst.flavour_id:
            raise Conflict(f"VNF instance {inst.id} is NOT_INSTANTIATED")
        return self.packages.vnfd(inst.vnf_pkg_id).flavour(inst.flavour_id)

    def _files(self, inst: VnfInstance) -> PackageFiles | None:
        try:
            return self.packages.files(inst.vnf_pkg_id)
        except VnfmError:
            return None

    def _validate_with_drivers(self, flavour: Flavour, operation: str, request: dict[str, Any], inst: VnfInstance,
                               occ: OpOcc, vim_type: str | None = None) -> None:
        """The request's additionalParams: every top-level key declared by an owner of this request
        (service/params.py), then each management driver's own checks; the warnings of keys
        accepted but not acted on go into the occurrence's log."""
        drivers: dict[int, MgmtDriver] = {}
        for hook in flavour.hooks:
            driver = self.mgmt.for_hook(flavour, hook)
            if driver is not None:
                drivers.setdefault(id(driver), driver)
        if vim_type is None:
            vim = self.vims.get(inst.vim_id) if inst.vim_id else None
            vim_type = vim.vim_type if vim is not None else None
        infra = self.infra.get(vim_type) if vim_type and vim_type in self.infra else None
        files = self._files(inst)
        notes = engine_params.check(
            operation, request.get("additionalParams"), infra=infra.declared if infra is not None else None,
            drivers=[d.declared for d in drivers.values() if d.declared is not None],
            elsewhere=self._declared_elsewhere(), flavour_id=flavour.id, package=files)
        for driver in drivers.values():
            driver.validate_request(operation, request, inst, flavour, files)
        for n in notes:  # kept with the occurrence (vnfmWarnings) and in its log
            occ.warnings.append(n)
            occ.events.append({"time": views.ts(utcnow()), "stage": "", "message": f"warning: {n}"})

    def _declared_elsewhere(self) -> dict[str, str]:
        if self._elsewhere is None:
            owners: list[tuple[str, Any]] = []
            drivers = getattr(self.mgmt, "drivers", {})
            for name in drivers:
                owners.append((f"management driver '{name}'", getattr(drivers[name], "declared", None)))
            for vim_type in self.infra:
                owners.append((f"infrastructure driver of VIM type '{vim_type}'", self.infra[vim_type].declared))
            self._elsewhere = engine_params.declared_elsewhere(owners)
        return self._elsewhere

    def _choose_scale_in(self, inst: VnfInstance, before: dict[str, int], after: dict[str, int],
                         extra: dict[str, Any]) -> builtins.list[Any]:
        """Which VNFCs a scale-in removes: the request's choice, else the newest of each VDU."""
        shrink = {vdu: before[vdu] - after.get(vdu, 0) for vdu in before if before[vdu] > after.get(vdu, 0)}
        chosen_ids = extra.get("vnfc_instance_ids") or extra.get("vnfcInstanceIds")
        if chosen_ids:
            if not isinstance(chosen_ids, list) or not all(isinstance(i, str) for i in chosen_ids):
                raise BadRequest("additionalParams.vnfcInstanceIds must be a list of VNFC instance ids")
            chosen = []
            for vid in chosen_ids:
                v = inst.resources.by_id(vid)
                if v is None:
                    raise UnprocessableEntity(f"additionalParams.vnfcInstanceIds: {vid} is not a VNFC of this VNF")
                chosen.append(v)
            per_vdu: dict[str, int] = {}
            for v in chosen:
                per_vdu[v.vdu_id] = per_vdu.get(v.vdu_id, 0) + 1
            if per_vdu != shrink:
                raise UnprocessableEntity(
                    f"additionalParams.vnfcInstanceIds removes {per_vdu} but this scale-in removes {shrink} per VDU"
                )
            return chosen
        out = []
        for vdu, n in sorted(shrink.items()):
            vnfcs = inst.resources.of_vdu(vdu)
            out.extend(sorted(vnfcs, key=lambda v: v.seq, reverse=True)[:n])
        return out

    def _start(self, inst_id: str, operation: LcmOperation, params: dict[str, Any],
               prepare: Callable[[VnfInstance, OpOcc], None], *, check: bool = True) -> OpOcc:
        # Phase 1 (no transaction held): validate and plan. `prepare` may read packages and VIMs
        # through their own units of work.
        inst = self.get(inst_id)
        if check:
            lcm.check_can_start(inst, operation)
        seen = _fingerprint(inst)
        occ = OpOcc(vnf_instance_id=inst_id, operation=operation, operation_params=params, tenant=inst.tenant)
        prepare(inst, occ)
        if self.submit is not None:
            occ.owner = self.worker_id
            occ.heartbeat = utcnow()
        # Phase 2 (one short transaction): take the instance's lock and store the occurrence,
        # unless the instance changed since it was planned against.
        with self.uow() as uow:
            current = uow.instances.get(inst_id)
            if current is None:
                raise NotFound(f"VNF instance {inst_id} does not exist")
            if check:
                lcm.check_can_start(current, operation)
            if _fingerprint(current) != seen:
                raise Conflict(f"VNF instance {inst_id} changed while the request was checked; send it again")
            if current.lock_op_id is not None:
                raise Conflict(f"VNF instance {inst_id} has another operation in progress")
            uow.op_occs.add(occ)
            inst.lock_op_id = occ.id
            # One UPDATE takes the lock (only while the row still has none: Conflict otherwise) and
            # writes what the plan changed (the keys that differ from the row as read here).
            uow.instances.save_changes(inst, current)
            self.notes.stage(uow, views.lcm_notification(occ, "START"), tenant=occ.tenant)
            uow.commit()
        self.notes.wake()
        if self.submit is not None:
            self.submit(occ.id, False)
        return occ


def _set_usage(uow: Uow, pkg: model.VnfPackage, state: model.UsageState) -> None:
    """The package's usage state, written in the instance's transaction (and only when it changes)."""
    if pkg.usage_state != state:
        pkg.usage_state = state
        uow.packages.save(pkg)


def _fingerprint(inst: VnfInstance) -> tuple[Any, ...]:
    return (inst.instantiation_state, inst.lock_op_id, tuple(sorted(inst.scale_levels.items())),
            tuple(sorted((v.id, v.server_id) for v in inst.resources.vnfcs)), inst.flavour_id)


def _keep_own_vim(inst: VnfInstance, entries: list[dict[str, Any]]) -> None:
    """An instantiated VNF's resources stay on the VIM they are on: a modification may add
    vimConnectionInfo entries, not point the entry that names that VIM elsewhere."""
    if inst.instantiation_state != InstantiationState.INSTANTIATED or not inst.vim_id:
        return
    own = inst.vim_connection_id
    for entry in entries:
        if entry.get("id") != own:
            continue
        current = next((c for c in inst.vim_connection_info if c.get("id") == own), {})
        for key in ("vimId", "vimType"):
            if key in entry and entry[key] != current.get(key):
                raise UnprocessableEntity(f"vimConnectionInfo '{own}': its {key} cannot change: the VNF's "
                                          f"resources are on VIM {inst.vim_id}")
