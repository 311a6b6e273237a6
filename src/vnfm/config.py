"""Settings, from the environment (VNFM_*) with sensible defaults for the embedded set-up."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path


def _env(name: str, default: str) -> str:
    return os.environ.get(name, default)


@dataclass
class Settings:
    data_dir: Path = field(default_factory=lambda: Path(_env("VNFM_DATA_DIR", "var")))
    database_url: str = ""
    host: str = field(default_factory=lambda: _env("VNFM_HOST", "127.0.0.1"))
    port: int = field(default_factory=lambda: int(_env("VNFM_PORT", "9890")))
    # Simulated cloud latencies (seconds).
    sim_boot_time: float = field(default_factory=lambda: float(_env("VNFM_SIM_BOOT_TIME", "0.05")))
    sim_step_time: float = field(default_factory=lambda: float(_env("VNFM_SIM_STEP_TIME", "0.005")))
    # The simulated clusters' Kubernetes API listener (HTTPS); port 0: any free port, chosen when
    # the first cluster registers as a VIM (a fixed port keeps registered VIM URLs valid across restarts).
    sim_kube_api_host: str = field(default_factory=lambda: _env("VNFM_SIM_KUBE_API_HOST", "127.0.0.1"))
    sim_kube_api_port: int = field(default_factory=lambda: int(_env("VNFM_SIM_KUBE_API_PORT", "0")))
    # How long the Kubernetes infrastructure driver waits for a CNF's pods to be Ready (seconds).
    kube_ready_timeout: float = field(default_factory=lambda: float(_env("VNFM_KUBE_READY_TIMEOUT", "600")))
    # Run the LCM engine in this process (several processes may share one PostgreSQL database).
    run_engine: bool = True
    worker_id: str = field(default_factory=lambda: _env("VNFM_WORKER_ID", f"{os.uname().nodename}-{os.getpid()}"))
    # Occurrences whose owner has not heart-beaten for this long are taken over (FAILED_TEMP).
    orphan_after: float = field(default_factory=lambda: float(_env("VNFM_ORPHAN_AFTER", "30")))
    # Notifications a process stored but did not deliver (it died) are delivered by another after this.
    notify_reclaim_after: float = field(default_factory=lambda: float(_env("VNFM_NOTIFY_RECLAIM_AFTER", "300")))
    # Lists longer than this are paged (SOL013 5.4.2: Link rel="next"); 0 sends every item at once.
    page_size: int = field(default_factory=lambda: int(_env("VNFM_PAGE_SIZE", "1000")))
    # Extra hook bindings: implementation/artifact name -> driver name ("a=b,c=d").
    driver_bindings: str = field(default_factory=lambda: _env("VNFM_DRIVER_BINDINGS", ""))
    max_package_size: int = 512 * 1024 * 1024
    # SOL003: test a subscription's callback URI (GET, expect 204) before accepting it.
    probe_callbacks: bool = field(default_factory=lambda: _env("VNFM_PROBE_CALLBACKS", "1") == "1")
    # When set, every request must carry it in X-Auth-Token (the stock client sends one).
    auth_token: str = field(default_factory=lambda: _env("VNFM_AUTH_TOKEN", ""), repr=False)

    def __post_init__(self) -> None:
        self.data_dir = Path(self.data_dir)
        if not self.database_url:
            self.database_url = os.environ.get("VNFM_DATABASE_URL") or f"sqlite:///{self.data_dir / 'vnfm.db'}"

    @property
    def sim_state_file(self) -> Path:
        return self.data_dir / "simcloud.db"  # SQLite; an older simcloud.json is imported once

    @property
    def package_cache(self) -> Path:
        return self.data_dir / "packages"
