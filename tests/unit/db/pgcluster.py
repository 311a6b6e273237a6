"""A throwaway PostgreSQL cluster for tests: initdb + pg_ctl in a temp dir, unix socket only.

PostgreSQL refuses to run as root, so when the tests run as root the server runs as `nobody`.
Needs the server binaries (Debian/Ubuntu: `apt-get install -y postgresql`).
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa


def find_bindir() -> str | None:
    env = os.environ.get("VNFM_PG_BINDIR")
    if env and os.path.exists(os.path.join(env, "initdb")):
        return env
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=lambda p: int(p.split("/")[4]))
    if found:
        return os.path.dirname(found[-1])
    which = shutil.which("initdb")
    return os.path.dirname(which) if which else None


@dataclass
class PgCluster:
    bindir: str
    base: str
    port: int = 5432
    user: str | None = None  # OS user the server runs as (None: the current one)

    @property
    def datadir(self) -> str:
        return os.path.join(self.base, "data")

    def _run(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        kw: dict[str, Any] = {}
        if self.user is not None:
            pw = pwd.getpwnam(self.user)
            kw = {"user": pw.pw_uid, "group": pw.pw_gid, "extra_groups": []}
        return subprocess.run(list(args), cwd=self.base, capture_output=True, text=True, check=check,
                              env={"PATH": "/usr/bin:/bin", "LC_ALL": "C"}, timeout=60, **kw)

    def start(self) -> None:
        self._run(os.path.join(self.bindir, "initdb"), "-D", self.datadir, "-A", "trust", "-U", "postgres",
                  "--no-locale", "-E", "UTF8", "--no-sync")
        opts = (f"-k {self.base} -p {self.port} -c listen_addresses='' -c fsync=off "
                "-c synchronous_commit=off -c full_page_writes=off -c max_connections=60")
        self._run(os.path.join(self.bindir, "pg_ctl"), "-D", self.datadir, "-o", opts, "-l",
                  os.path.join(self.base, "log"), "-w", "-t", "30", "start")

    def stop(self) -> None:
        self._run(os.path.join(self.bindir, "pg_ctl"), "-D", self.datadir, "-m", "immediate", "stop", check=False)
        shutil.rmtree(self.base, ignore_errors=True)

    def url(self, database: str = "postgres") -> str:
        return f"postgresql+psycopg://postgres@/{database}?host={self.base}&port={self.port}"

    def create_database(self, name: str) -> str:
        engine = sa.create_engine(self.url(), isolation_level="AUTOCOMMIT")
        try:
            with engine.connect() as conn:
                conn.exec_driver_sql(f'DROP DATABASE IF EXISTS "{name}"')
                conn.exec_driver_sql(f'CREATE DATABASE "{name}"')
        finally:
            engine.dispose()
        return self.url(name)


def start_cluster() -> tuple[PgCluster | None, str]:
    """(cluster, "") or (None, reason it is not available)."""
    bindir = find_bindir()
    if bindir is None:
        return None, "PostgreSQL server binaries not found (apt-get install -y postgresql)"
    try:
        import psycopg  # noqa: F401
    except ImportError:
        return None, "psycopg (3) is not installed (pip install 'psycopg[binary]')"
    user = None
    base = tempfile.mkdtemp(prefix="vnfmpg-", dir="/tmp")
    if os.geteuid() == 0:
        user = "nobody"
        pw = pwd.getpwnam(user)
        os.chown(base, pw.pw_uid, pw.pw_gid)
    cluster = PgCluster(bindir=bindir, base=base, user=user)
    try:
        cluster.start()
    except (subprocess.CalledProcessError, subprocess.TimeoutExpired, OSError) as exc:
        detail = getattr(exc, "stderr", "") or str(exc)
        log = os.path.join(base, "log")
        if os.path.exists(log):
            with open(log) as f:
                detail += f.read()[-500:]
        cluster.stop()
        return None, f"could not start a PostgreSQL cluster: {detail.strip()[-500:]}"
    return cluster, ""
