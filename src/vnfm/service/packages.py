"""SOL005 VNF package management use cases: create, upload (onboard), enable/disable, delete, read."""

from __future__ import annotations

import asyncio
import builtins
import io
import shutil
import threading
import zipfile
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from vnfm.domain.access import caller_tenant
from vnfm.domain.errors import BadRequest, Conflict, NotAcceptable, NotFound, UnprocessableEntity, VnfmError
from vnfm.domain.model import OnboardingState, OperationalState, UsageState, VnfPackage
from vnfm.domain.patch import merge_patch
from vnfm.domain.vnfd import Vnfd
from vnfm.packaging.csar import CsarLimits, ExtractedPackage, extract_to, read_csar
from vnfm.packaging.tosca import package_summary, parse_vnfd
from vnfm.service import requests as rq
from vnfm.service import views
from vnfm.service.notifications import Notifications
from vnfm.service.ports import AbstractUnitOfWork, Condition, Notifier, UowFactory

# (uri, userName, password, max_bytes) -> the content
PackageFetcher = Callable[[str, str | None, str | None, int], Awaitable[bytes]]


class PackageService:
    """Onboarding is done synchronously inside the upload request (it takes milliseconds), so a
    bad package is answered with a 4xx naming the problem; the stored package stays CREATED and
    can be uploaded again. Nothing already onboarded is ever touched by a failed upload.
    Subscribers (SOL005 PkgmSubscription) hear of onboarding, enabling/disabling and deletion.
    """

    def __init__(self, uow: UowFactory, cache_dir: Path, limits: CsarLimits | None = None,
                 notifier: Notifier | None = None, worker_id: str | None = None,
                 fetch: PackageFetcher | None = None) -> None:
        self.uow = uow
        self.fetch = fetch  # upload_from_uri: GET the content (user, password, size limit)
        self.notes = Notifications(notifier, worker_id)
        self.cache_dir = Path(cache_dir)
        self.limits = limits or CsarLimits()
        self._vnfd_cache: dict[str, Vnfd] = {}
        self._lock = threading.Lock()

    # --------------------------------------------------------------- create / read / delete
    def create(self, user_defined_data: dict[str, Any] | None = None) -> VnfPackage:
        pkg = VnfPackage(user_defined_data=dict(user_defined_data or {}), tenant=caller_tenant())
        with self.uow() as uow:
            uow.packages.add(pkg)
            uow.commit()
        return pkg

    def get(self, pkg_id: str) -> VnfPackage:
        with self.uow() as uow:
            pkg = uow.packages.get(pkg_id)
        if pkg is None:
            raise NotFound(f"VNF package {pkg_id} does not exist")
        return pkg

    def list(self) -> builtins.list[VnfPackage]:
        with self.uow() as uow:
            return uow.packages.list()

    def page(self, conditions: Sequence[Condition], after_id: str | None, limit: int) -> builtins.list[VnfPackage]:
        with self.uow() as uow:
            return uow.packages.page(conditions, after_id, limit)

    def delete(self, pkg_id: str) -> None:
        with self.uow() as uow:
            pkg = uow.packages.get(pkg_id)
            if pkg is None:
                raise NotFound(f"VNF package {pkg_id} does not exist")
            if pkg.operational_state == OperationalState.ENABLED:
                raise Conflict(f"VNF package {pkg_id} is ENABLED: disable it before deleting")
            if pkg.usage_state == UsageState.IN_USE:
                raise Conflict(f"VNF package {pkg_id} is IN_USE by VNF instances")
            uow.packages.delete(pkg_id)
            if pkg.onboarding_state == OnboardingState.ONBOARDED:
                # the package is gone: filters on its provider/product read the last state given here
                self.notes.stage(uow, views.package_notification(pkg, "PKG_DELETE"), views.package_info(pkg),
                                 tenant=pkg.tenant)
            uow.commit()
        self._vnfd_cache.pop(pkg_id, None)
        shutil.rmtree(self.cache_dir / pkg_id, ignore_errors=True)
        self.notes.wake()

    def modify(self, pkg_id: str, changes: dict[str, Any],
               expect: Callable[[VnfPackage], None] | None = None) -> dict[str, Any]:
        """PATCH with VnfPkgInfoModifications (merge patch); returns the modifications applied.
        `expect` checks the package as it is before anything changes (If-Match); it raises to refuse."""
        allowed = {"operationalState", "userDefinedData"}
        unknown = set(changes) - allowed
        if unknown:
            raise BadRequest(f"unknown attribute(s) in VnfPkgInfoModifications: {', '.join(sorted(unknown))}")
        if not changes:
            raise BadRequest("VnfPkgInfoModifications needs operationalState or userDefinedData")
        with self.uow() as uow:
            pkg = uow.packages.get(pkg_id)
            if pkg is None:
                raise NotFound(f"VNF package {pkg_id} does not exist")
            if expect is not None:
                expect(pkg)
            if "operationalState" in changes:
                try:
                    new = OperationalState(changes["operationalState"])
                except ValueError:
                    raise BadRequest(
                        f"operationalState must be ENABLED or DISABLED, got {changes['operationalState']!r}"
                    ) from None
                if pkg.onboarding_state != OnboardingState.ONBOARDED:
                    raise Conflict(f"VNF package {pkg_id} is {pkg.onboarding_state.value}, not ONBOARDED")
                if pkg.operational_state == new:
                    raise Conflict(f"VNF package {pkg_id} is already {new.value}")
                pkg.operational_state = new
                self.notes.stage(uow, views.package_notification(pkg, "OP_STATE_CHANGE"), tenant=pkg.tenant)
            if "userDefinedData" in changes:
                udd = changes["userDefinedData"]
                if not isinstance(udd, dict):
                    raise BadRequest("userDefinedData must be an object")
                pkg.user_defined_data = merge_patch(pkg.user_defined_data, udd)
            uow.packages.save(pkg)
            uow.commit()
        self.notes.wake()
        return changes

    # --------------------------------------------------------------- onboarding
    def upload(self, pkg_id: str, data: bytes) -> VnfPackage:
        with self.uow() as uow:
            pkg = uow.packages.get(pkg_id)
            if pkg is None:
                raise NotFound(f"VNF package {pkg_id} does not exist")
            if pkg.onboarding_state != OnboardingState.CREATED:
                raise Conflict(
                    f"VNF package {pkg_id} is {pkg.onboarding_state.value}: content can only be "
                    "uploaded to a package in CREATED state"
                )
        if len(data) > self.limits.max_archive_bytes:
            raise UnprocessableEntity(
                f"package content is {len(data)} bytes, over the limit of {self.limits.max_archive_bytes}"
            )
        try:
            csar = read_csar(data, self.limits)
            vnfd = parse_vnfd(csar)
            summary = package_summary(csar, vnfd)
        except VnfmError as exc:
            self._record_failure(pkg_id, exc)
            raise
        with self.uow() as uow:
            pkg = uow.packages.get(pkg_id)
            if pkg is None:
                raise NotFound(f"VNF package {pkg_id} was deleted during upload")
            if pkg.onboarding_state != OnboardingState.CREATED:
                raise Conflict(f"VNF package {pkg_id} was uploaded concurrently")
            for other in uow.packages.by_vnfd_id(vnfd.id):
                if other.id != pkg_id and other.onboarding_state == OnboardingState.ONBOARDED:
                    raise Conflict(f"VNF package {other.id} with vnfdId {vnfd.id} is already onboarded")
            pkg.vnfd_id = vnfd.id
            pkg.vnf_provider = vnfd.provider
            pkg.vnf_product_name = vnfd.product_name
            pkg.vnf_software_version = vnfd.software_version
            pkg.vnfd_version = vnfd.version
            pkg.checksum = summary["checksum"]
            pkg.software_images = summary["softwareImages"]
            pkg.additional_artifacts = summary["additionalArtifacts"]
            pkg.onboarding_state = OnboardingState.ONBOARDED
            pkg.operational_state = OperationalState.ENABLED
            pkg.onboarding_failure_details = None
            uow.packages.put_content(pkg_id, data)
            uow.packages.save(pkg)
            self.notes.stage(uow, views.package_notification(pkg), tenant=pkg.tenant)
            uow.commit()
        self._vnfd_cache[pkg_id] = vnfd
        self.notes.wake()
        return pkg

    async def upload_from_uri(self, pkg_id: str, body: Any) -> VnfPackage:
        """SOL005 9.4.6: fetch the content from `addressInformation`, then onboard it as `upload`
        does. Done within the request (with a deadline), so a failure is the answer and the
        package stays CREATED for another try."""
        req = rq.parse(rq.UploadVnfPkgFromUriRequest, body)
        parts = urlsplit(req.addressInformation)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise BadRequest("addressInformation must be an absolute http(s) URI")
        if req.password and not req.userName:
            raise BadRequest("password is given without userName")
        pkg = self.get(pkg_id)
        if pkg.onboarding_state != OnboardingState.CREATED:
            raise Conflict(f"VNF package {pkg_id} is {pkg.onboarding_state.value}: content can only be "
                           "uploaded to a package in CREATED state")
        if self.fetch is None:
            raise UnprocessableEntity("this VNFM cannot fetch package content from a URI")
        try:
            data = await self.fetch(req.addressInformation, req.userName, req.password,
                                    self.limits.max_archive_bytes)
        except VnfmError as exc:
            self._record_failure(pkg_id, exc)
            raise
        return await asyncio.to_thread(self.upload, pkg_id, data)

    def _record_failure(self, pkg_id: str, exc: VnfmError) -> None:
        with self.uow() as uow:
            pkg = uow.packages.get(pkg_id)
            if pkg is not None and pkg.onboarding_state == OnboardingState.CREATED:
                pkg.onboarding_failure_details = exc.problem()
                uow.packages.save(pkg)
                uow.commit()

    # --------------------------------------------------------------- content access
    def content(self, pkg_id: str) -> bytes:
        pkg = self.get(pkg_id)
        if pkg.onboarding_state != OnboardingState.ONBOARDED:
            raise Conflict(f"VNF package {pkg_id} is {pkg.onboarding_state.value}, not ONBOARDED")
        with self.uow() as uow:
            data = uow.packages.get_content(pkg_id)
        if data is None:
            raise NotFound(f"VNF package {pkg_id} has no content")
        return data

    def vnfd(self, pkg_id: str) -> Vnfd:
        cached = self._vnfd_cache.get(pkg_id)
        if cached is not None:
            return cached
        vnfd = parse_vnfd(read_csar(self.content(pkg_id), self.limits))
        self._vnfd_cache[pkg_id] = vnfd
        return vnfd

    def files(self, pkg_id: str) -> ExtractedPackage:
        """The package extracted to the local cache (extracted once per process and package)."""
        dest = self.cache_dir / pkg_id
        with self._lock:
            if not (dest / ".complete").exists():
                tmp = self.cache_dir / f".{pkg_id}.tmp"
                shutil.rmtree(tmp, ignore_errors=True)
                tmp.mkdir(parents=True)
                extract_to(read_csar(self.content(pkg_id), self.limits), tmp)
                (tmp / ".complete").write_text("ok")
                shutil.rmtree(dest, ignore_errors=True)
                tmp.rename(dest)
        return ExtractedPackage(dest)

    def vnfd_archive(self, pkg_id: str) -> tuple[bytes, str]:
        """GET .../vnfd: the VNFD files (Definitions and TOSCA.meta) as a zip."""
        csar = read_csar(self.content(pkg_id), self.limits)
        buf = io.BytesIO()
        with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
            for name in sorted(csar.files):
                if name.startswith(("Definitions/", "TOSCA-Metadata/")) or name == csar.entry_definitions:
                    zf.writestr(name, csar.files[name])
        return buf.getvalue(), "application/zip"

    def vnfd_text(self, pkg_id: str) -> str:
        csar = read_csar(self.content(pkg_id), self.limits)
        defs = [n for n in csar.files if n.startswith("Definitions/") and n.endswith((".yaml", ".yml"))]
        if len(defs) != 1:
            raise NotAcceptable(  # SOL005 9.4.4.3.2: text/plain only for a single-file VNFD
                f"the VNFD of package {pkg_id} has {len(defs)} files; ask for application/zip instead of text/plain"
            )
        return csar.files[defs[0]].decode()

    def artifact(self, pkg_id: str, path: str) -> bytes:
        csar = read_csar(self.content(pkg_id), self.limits)
        if path not in csar.files:
            raise NotFound(f"artifact {path!r} does not exist in VNF package {pkg_id}")
        return csar.files[path]

    def find_enabled(self, vnfd_id: str, uow: AbstractUnitOfWork | None = None) -> VnfPackage:
        """The ONBOARDED package of `vnfd_id` (409 DISABLED, 422 none); read in `uow` when given."""
        if uow is None:
            with self.uow() as own:
                return self.find_enabled(vnfd_id, own)
        for pkg in uow.packages.by_vnfd_id(vnfd_id):
            if pkg.onboarding_state == OnboardingState.ONBOARDED:
                if pkg.operational_state != OperationalState.ENABLED:
                    raise Conflict(f"VNF package {pkg.id} for vnfdId {vnfd_id} is DISABLED")
                return pkg
        raise UnprocessableEntity(f"no onboarded VNF package has vnfdId {vnfd_id}")

    def set_usage(self, pkg_id: str, in_use: bool) -> None:
        with self.uow() as uow:
            pkg = uow.packages.get(pkg_id)
            state = UsageState.IN_USE if in_use else UsageState.NOT_IN_USE
            if pkg is None or pkg.usage_state == state:
                return  # already so (a package's every instance after its first): nothing to write
            pkg.usage_state = state
            uow.packages.save(pkg)
            uow.commit()
