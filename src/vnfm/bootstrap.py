"""Composition root: builds the whole application (adapters + services + engine) from Settings.

The API server, the CLI's embedded demo and the tests all start vnfm through `build()`.
"""

from __future__ import annotations

import asyncio
import functools
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from vnfm.adapters.db import SqlAlchemyUnitOfWork, fleet_counts, is_busy, make_session_factory, migrate, ping
from vnfm.adapters.db.backups import SqlBackupSchedule
from vnfm.adapters.db.certificates import SqlCertificateWatch
from vnfm.adapters.db.engine import DbLimits, is_memory_url
from vnfm.adapters.db.liveness import SqlLiveness, liveness_engine
from vnfm.adapters.db.outbox import OutboxCommits, outbox_commits
from vnfm.adapters.db.reseal import check_stored, rotate_stored, seal_stored
from vnfm.adapters.infra.bindings import InfraDrivers
from vnfm.adapters.infra.kubernetes import KubernetesInfraDriver
from vnfm.adapters.infra.openstack.driver import HeatInfraDriver
from vnfm.adapters.infra.openstack.keystone import probe_keystone
from vnfm.adapters.infra.simulator import SimCloud, SimConfig, SimulatorInfraDriver
from vnfm.adapters.infra.simulator.k8sapi.server import KubeApiServer
from vnfm.adapters.infra.simulator.twin import TwinAccess, TwinConfig
from vnfm.adapters.kube.nodes import cluster_nodes
from vnfm.adapters.metrics import Metrics
from vnfm.adapters.metrics_backups import register_backups
from vnfm.adapters.mgmt.basic import NoopDriver, VmReadinessDriver
from vnfm.adapters.mgmt.bindings import MgmtDrivers
from vnfm.adapters.mgmt.cnf_nodeport import CnfNodePortDriver
from vnfm.adapters.mgmt.kubeadm import KubeadmDriver
from vnfm.adapters.mgmt.kubespray import KubesprayDriver
from vnfm.adapters.mgmt.private_registry import PrivateRegistryDriver
from vnfm.adapters.nodes.ssh import SshAccess
from vnfm.adapters.notify.auth import notify_tls, probe_callback
from vnfm.adapters.notify.http import HttpNotifier
from vnfm.adapters.remote.egress import EgressPolicy
from vnfm.adapters.remote.http_fetch import fetch_package
from vnfm.adapters.snapshots import FileSnapshotStore, SnapshotStores
from vnfm.adapters.snapshots_s3 import S3SnapshotStore
from vnfm.config import Settings
from vnfm.domain.autoheal import AutohealPolicy
from vnfm.domain.model import Subscription, utcnow
from vnfm.domain.vnfd import Vnfd
from vnfm.service import views, views_v2
from vnfm.service.backups import BackupPolicy, BackupSchedule, Resolvers
from vnfm.service.certificates import WatchPolicy, build_watch
from vnfm.service.fm.alarms import AlarmService
from vnfm.service.fm.autoheal import AutoHeal
from vnfm.service.fm.health import HealthCheck
from vnfm.service.fm.watcher import HealthWatcher, WatchSettings
from vnfm.service.instances import InstanceService
from vnfm.service.lcm.scheduler import LcmEngine
from vnfm.service.packages import PackageService
from vnfm.service.ports import Notifier, OutboxEntry, PackageFiles, UowFactory
from vnfm.service.secrets import SecretBox
from vnfm.service.subscriptions import SubscriptionService
from vnfm.service.vims import VimService

log = logging.getLogger(__name__)


@dataclass
class App:
    settings: Settings
    uow: Any
    packages: PackageService
    instances: InstanceService
    vims: VimService
    subscriptions: SubscriptionService
    alarms: AlarmService
    engine: LcmEngine
    mgmt: MgmtDrivers
    sim: SimCloud
    infra_drivers: InfraDrivers
    notifier: Notifier | None = None
    extras: dict[str, Any] = field(default_factory=dict)
    metrics: Metrics = field(default_factory=Metrics)
    db_ping: Callable[[], None] = lambda: None
    watcher: HealthWatcher | None = None
    backups: BackupSchedule | None = None
    _backups_stop: asyncio.Event = field(default_factory=asyncio.Event)

    async def start(self) -> None:
        if self.notifier is not None:
            self.notifier.wake()  # what the outbox still holds (this process's, or left overdue)
        if self.settings.run_engine:
            await self.engine.start()
            if self.watcher is not None:
                self.watcher.start()
            if self.backups is not None:  # one etcd backup task per process (service/backups.py)
                self.extras["backups_task"] = asyncio.create_task(self.backups.run(self._backups_stop))
            if self.settings.cert_check_interval > 0:  # one watch task per process (service/certificates.py)
                stop = self.extras["cert_watch_stop"] = asyncio.Event()
                self.extras["cert_watch_task"] = asyncio.create_task(self.extras["cert_watch"].run(stop))

    async def stop_backup_schedule(self) -> None:
        """Stop this process's etcd backup task (its rounds; `backups.round()` still runs one)."""
        if "backups_task" in self.extras:
            self._backups_stop.set()
            await self.extras.pop("backups_task")

    async def stop(self) -> None:
        if "cert_watch_task" in self.extras:
            self.extras["cert_watch_stop"].set()
            await self.extras.pop("cert_watch_task")
        await self.stop_backup_schedule()
        if self.watcher is not None:
            await self.watcher.stop()
        await self.engine.stop()
        self.engine.liveness.close()
        kube_api = self.extras.get("kube_api")
        if isinstance(kube_api, KubeApiServer):
            kube_api.stop()
        if self.notifier is not None and hasattr(self.notifier, "close"):
            self.notifier.close(5.0)


def backup_store(settings: Settings, keep: int) -> Any:
    """Where the scheduled etcd backups are kept: `<data dir>/etcd-backups`, or the S3 store."""
    s3 = settings.etcd_backup_s3
    root = settings.data_dir / "etcd-backups"  # apart from the upgrades' snapshots: bounds of their own
    return FileSnapshotStore(root, keep=keep) if s3 is None else S3SnapshotStore(s3, keep=keep)


def snapshot_store(settings: Settings) -> SnapshotStores:
    """The upgrades' and heals' etcd snapshots; the scheduled backups' are read too (a restore's source)."""
    return SnapshotStores(FileSnapshotStore(settings.data_dir / "etcd-snapshots"),
                          backup_store(settings, settings.etcd_backup_keep))


def default_mgmt_drivers(settings: Settings) -> MgmtDrivers:
    """The built-in management drivers, the operator's bindings, and installed plug-ins."""
    reg = MgmtDrivers(MgmtDrivers.parse_bindings(settings.driver_bindings))
    reg.register("noop", NoopDriver)
    reg.register("vm-readiness", VmReadinessDriver)
    reg.register("kubeadm", lambda: KubeadmDriver(snapshot_store(settings)))
    reg.register("kubespray", KubesprayDriver)
    reg.register("private-registry", PrivateRegistryDriver)
    reg.register("cnf-nodeport", CnfNodePortDriver)
    reg.load_entry_points()
    return reg


def default_infra_drivers(sim: SimCloud, vim_of: Any, twin: TwinConfig | None = None,
                          kube_ready_timeout: float = 600.0, *, simulator: bool = True) -> InfraDrivers:
    """The built-in VIM types (the simulated cloud while `simulator` is on, OpenStack/Heat,
    Kubernetes) with their node access, and installed plug-ins; any other VIM type's hosts are
    reached over SSH."""
    infra = InfraDrivers(default_nodes=SshAccess(), vim_of=vim_of)
    if simulator:
        infra.register("simulator", lambda: SimulatorInfraDriver(sim))
        infra.register_nodes("simulator", TwinAccess(sim, twin))
    infra.register("openstack", HeatInfraDriver)
    infra.register("kubernetes", lambda: KubernetesInfraDriver(ready_timeout=kube_ready_timeout))
    infra.load_entry_points()
    return infra


def default_sim_cloud(settings: Settings) -> SimCloud:
    """The simulated cloud of the data dir, with the latencies of the settings. The JSON state
    file of earlier versions (`simcloud.json`) is imported once into the new store."""
    config = SimConfig(boot_time=settings.sim_boot_time, api_latency=settings.sim_step_time,
                       mgmt_cidr=settings.sim_mgmt_cidr, public_cidr=settings.sim_public_cidr,
                       external_pool=settings.sim_external_pool, external_prefix=settings.sim_external_prefix,
                       internal_pool=settings.sim_internal_pool)
    return SimCloud.at(settings.sim_state_file, config, migrate_from=settings.data_dir / "simcloud.json",
                       lock_timeout=settings.sim_lock_timeout)


def build(settings: Settings | None = None, *, notifier: Notifier | None = None,
          sim: SimCloud | None = None, mgmt: MgmtDrivers | None = None, twin: TwinConfig | None = None) -> App:
    settings = settings or Settings()
    settings.data_dir.mkdir(parents=True, exist_ok=True)
    migrate(settings.database_url)
    session_factory = make_session_factory(settings.database_url, db_limits(settings))
    box = SecretBox.from_settings(settings.data_dir, settings.secret_key or None)

    def uow() -> SqlAlchemyUnitOfWork:
        return SqlAlchemyUnitOfWork(session_factory, box)

    seal_stored(uow(), box)
    _rotate_secrets(uow, box)
    metrics = Metrics()
    egress = EgressPolicy.of(settings.egress_allow_networks, settings.egress_deny_networks)
    tls = notify_tls(settings.notify_client_cert, settings.notify_client_key)
    probe = functools.partial(probe_callback, policy=egress, verify=tls) if settings.probe_callbacks else None
    subscriptions = SubscriptionService(uow, probe=probe, box=box, tls_cert=settings.notify_client_cert is not None)
    if notifier is None:
        notifier = _default_notifier(uow, subscriptions, settings, metrics, egress, session_factory.kw["bind"])
    packages = PackageService(uow, settings.package_cache, notifier=notifier, worker_id=settings.worker_id,
                              fetch=functools.partial(fetch_package, policy=egress))
    vims = VimService(uow, box, simulator=settings.simulator,
                      probes={"openstack": functools.partial(probe_keystone, policy=egress)})
    vims.ensure_default()
    if sim is None:
        sim = default_sim_cloud(settings)
    twin = twin or TwinConfig(default_latency=settings.sim_node_step_time, cert_validity_s=settings.sim_cert_validity)
    if twin.kube_api is None:
        twin.kube_api = KubeApiServer(settings.data_dir / "sim-kube-api", settings.sim_kube_api_host,
                                      settings.sim_kube_api_port)
    twin.kube_api.default_sim = sim
    if settings.simulator and (settings.sim_kube_api_port or twin.kube_api.remembered):
        twin.kube_api.start()  # registered VIMs name this port: serve it from the start
    infra_drivers = default_infra_drivers(sim, vims.get, twin, settings.kube_ready_timeout,
                                          simulator=settings.simulator)
    mgmt = mgmt or default_mgmt_drivers(settings)

    vnfd_of: Callable[[str], Vnfd] = packages.vnfd
    def files_of(pkg_id: str) -> PackageFiles | None:
        try:
            return packages.files(pkg_id)
        except Exception:
            log.exception("extracting package %s failed", pkg_id)
            return None

    engine = LcmEngine(
        uow,
        vnfd_of=vnfd_of,
        files_of=files_of,
        infra_drivers=infra_drivers,
        vim_of=vims.get, vim_in=vims.get_in,  # vim_in: the job's load reads the VIM in its unit of work
        mgmt=mgmt,
        liveness=_liveness(settings.database_url, session_factory),
        notifier=notifier,
        vim_registry=vims,
        worker_id=settings.worker_id,
        orphan_after=settings.orphan_after,
        nodes_of=infra_drivers.nodes_of,
        telemetry=metrics,
    )
    _equip(engine, settings)
    _track(metrics, engine, settings.run_engine)
    metrics.watch_fleet(lambda: fleet_counts(session_factory), database=session_factory.kw["bind"].dialect.name,
                        ttl=settings.metrics_cache_seconds)
    instances = InstanceService(
        uow, packages, vims, mgmt,
        submit=(lambda op_id, rb: engine.submit(op_id, rollback=rb)) if settings.run_engine else None,
        notifier=notifier, worker_id=settings.worker_id,
        on_cancel=engine.request_cancel if settings.run_engine else None, infra=infra_drivers,
    )
    extras: dict[str, Any] = {"kube_api": twin.kube_api, "twin": twin,
                              "cert_watch": _cert_watch(settings, uow, notifier, instances, session_factory)}
    return App(settings=settings, uow=uow, packages=packages, instances=instances, vims=vims,
               subscriptions=subscriptions, alarms=(alarms := AlarmService(uow, notifier, settings.worker_id)),
               engine=engine, mgmt=mgmt, sim=sim,
               infra_drivers=infra_drivers, notifier=notifier, metrics=metrics,
               db_ping=lambda: ping(session_factory), extras=extras,
               watcher=_health_watcher(settings, uow, alarms, instances, vims, infra_drivers, vnfd_of, metrics),
               backups=_backups(settings, uow, session_factory, engine, metrics, extras))


def _track(metrics: Metrics, engine: LcmEngine, run_engine: bool) -> None:
    metrics.track_in_flight(lambda: len(engine.running))
    metrics.track_heartbeat(lambda: engine.heartbeat.stats.last_lag, lambda: engine.heartbeat.stats.max_lag)
    if run_engine:
        metrics.track_engine(lambda: engine.is_running)


def _backups(settings: Settings, uow: Any, factory: Any, engine: LcmEngine, metrics: Metrics,
             extras: dict[str, Any]) -> BackupSchedule | None:
    """The process's etcd backup schedule and its gauges (None: etcd_backup_round 0, or no engine)."""
    table = extras["etcd_backups"] = SqlBackupSchedule(factory)
    register_backups(metrics.registry, table.all_recorded)
    if settings.etcd_backup_round <= 0 or not settings.run_engine:
        return None

    def get_instance(inst_id: str) -> Any:
        with uow() as u:
            return u.instances.get(inst_id)

    def store_for(keep: int) -> Any:
        return backup_store(settings, keep)

    res = Resolvers(vnfd_of=engine.vnfd_of, files_of=engine.files_of, vim_of=engine.vim_of,
                    nodes_of=engine.nodes_of or (lambda vim: None), mgmt=engine.mgmt, store_for=store_for)
    policy = BackupPolicy(interval=settings.etcd_backup_interval, keep=settings.etcd_backup_keep,
                          round_every=settings.etcd_backup_round)
    return BackupSchedule(table, get_instance, res, policy, settings.worker_id)


def _cert_watch(settings: Settings, uow: Any, notifier: Notifier, instances: InstanceService, factory: Any) -> Any:
    policy = WatchPolicy(settings.cert_check_interval, settings.cert_warn_days * 86400,
                         settings.cert_renew_days * 86400, settings.cert_auto_renew)
    return build_watch(uow, notifier, instances, SqlCertificateWatch(factory), policy, settings.worker_id)


def _health_watcher(settings: Settings, uow: Any, alarms: AlarmService, instances: InstanceService,
                    vims: VimService, infra: InfraDrivers, vnfd_of: Callable[[str], Vnfd],
                    metrics: Metrics) -> HealthWatcher | None:
    """The process's node-health watcher with the automatic heal (None: health_interval 0)."""
    if settings.health_interval <= 0:
        return None

    policy = AutohealPolicy(after=settings.autoheal_after, max_unhealthy_share=settings.autoheal_max_unhealthy,
                            max_heals=settings.autoheal_max_per_hour)
    check = HealthCheck(infra, vims.get, vnfd_of, cluster_nodes)
    return HealthWatcher(uow, alarms, check, settings.worker_id, vims.list,
                         WatchSettings(interval=settings.health_interval, batch=settings.health_batch,
                                       absent_grace=settings.health_absent_grace),
                         on_checked=AutoHeal(instances.heal, alarms, policy, metrics), telemetry=metrics)


def _equip(engine: LcmEngine, settings: Settings) -> None:
    engine.stages.snapshots = snapshot_store(settings)
    engine.store.patience.busy = is_busy  # the engine waits out a busy database, requests get a 503


def db_limits(settings: Settings) -> DbLimits:
    return DbLimits(lock_timeout=settings.db_lock_timeout, statement_timeout=settings.db_statement_timeout,
                    idle_in_transaction_timeout=settings.db_idle_in_transaction_timeout,
                    pool_size=settings.db_pool_size, max_overflow=settings.db_pool_overflow,
                    pool_timeout=settings.db_pool_timeout)


def _liveness(url: str, session_factory: Any) -> SqlLiveness:
    """Heartbeats and fencing checks on their own pool (an in-memory SQLite database has one
    connection, shared)."""
    if is_memory_url(url):
        return SqlLiveness(session_factory.kw["bind"], owns_engine=False)
    return SqlLiveness(liveness_engine(url))


class _OutboxSource:
    """The notifier's side of the outbox: one process (worker id) claiming and removing rows. The
    subscriptions are read in the unit of work that claimed rows (one read per batch, not one per
    notification): `subscriptions()` routes the batch with them. `quiet()`: no unit of work of this
    process stored a row since a claim found none left (`commits`: this process's count of commits
    that stored rows), so a wake has nothing to read; rows of other processes are found by the
    notifier's poll, which claims regardless."""

    def __init__(self, uow: UowFactory, owner: str, reclaim_after: float,
                 subscriptions: SubscriptionService, commits: OutboxCommits | None = None) -> None:
        self.uow = uow
        self.owner = owner
        self.reclaim_after = reclaim_after
        self._service = subscriptions
        self._subs: list[Subscription] | None = None  # as the latest batch was claimed
        self._commits = commits
        self._drained_at: int | None = None  # `commits.count` read before the latest claim that left none

    def quiet(self) -> bool:
        return self._commits is not None and self._drained_at == self._commits.count

    def claim(self, limit: int) -> list[OutboxEntry]:
        """Rows to deliver. While no subscription exists at all, the rows claimed are removed in the
        same unit of work (nobody can be sent them; routing would remove each in one more)."""
        mark = None if self._commits is None else self._commits.count  # before the claim's read
        self._drained_at = None
        while True:
            with self.uow() as u:
                entries = u.outbox.claim(self.owner, utcnow() - timedelta(seconds=self.reclaim_after), limit)
                if entries:
                    self._subs = self._service.for_delivery(u)
                    if not self._subs:
                        for e in entries:
                            u.outbox.remove(e.id)
                u.commit()
            if self._subs or len(entries) < limit:  # (a full batch removed: there may be more)
                if len(entries) < limit:
                    self._drained_at = mark
                return entries if self._subs else []

    def subscriptions(self) -> list[Subscription]:
        subs = self._subs
        return self._service.for_delivery() if subs is None else subs

    def remove(self, entry_id: str) -> None:
        with self.uow() as u:
            u.outbox.remove(entry_id)
            u.commit()


def _rotate_secrets(uow: Callable[[], SqlAlchemyUnitOfWork], box: SecretBox) -> None:
    """Re-encrypt with the newest key when rotating; then keys that decrypt nothing stored stop the
    start (OperationFailed: `vnfm server` says so in one line, exit 2) before the engine runs."""
    rotated = rotate_stored(uow(), box)
    if rotated:
        log.warning("secret key rotation: %d stored rows re-encrypted with the newest key of secret_key; "
                    "the older keys can go once every process runs with the new list", rotated)
    check_stored(uow(), box)


def _default_notifier(uow: Any, subscriptions: SubscriptionService, settings: Settings,
                      metrics: Metrics, egress: EgressPolicy, engine: Any) -> Notifier:
    def instance_info(instance_id: str) -> dict[str, Any] | None:
        with uow() as u:
            inst = u.instances.get(instance_id)
        return views.instance_info(inst) if inst is not None else None

    def package_info(pkg_id: str) -> dict[str, Any] | None:
        with uow() as u:
            pkg = u.packages.get(pkg_id)
        return views.package_info(pkg) if pkg is not None else None

    source = _OutboxSource(uow, settings.worker_id, settings.notify_reclaim_after, subscriptions,
                           outbox_commits(engine))  # told of this process's commits that stored rows
    return HttpNotifier(source.subscriptions, source, quiet=source.quiet,
                        instance_info=instance_info, package_info=package_info,
                        on_delivery=metrics.notification_delivered, egress=egress, reshape_v2=views_v2.notification,
                        verify=notify_tls(settings.notify_client_cert, settings.notify_client_key))
