"""Many clusters at once, on 1..K server processes (a benchmark: prints figures).

Starts K `vnfm server` processes (zero-latency simulated cloud, one data dir, one database: SQLite
in the data dir, or a throwaway PostgreSQL as the tests start one), onboards the example package,
creates N instances, then POSTs N instantiates (1 master + 2 workers each) at once, spread
round-robin over the processes (at most --concurrency requests in flight), and waits until no
occurrence is STARTING/PROCESSING (one filtered list every 0.5 s: lists are in the database). The
poll's CPU is the server's and is counted in the figures, so it asks for the least the server
builds: the filter's matches with every attribute but `id` excluded (`exclude_fields`), which the
server reads without the occurrences' parameters, errors and changes (nothing unsealed or masked).

Prints per run: wall time (first POST -> last occurrence done), instantiates per second, failures
(a POST that did not answer 202, an occurrence not COMPLETED; a 503 with Retry-After, the database
too busy or the connection cap reached and nothing created, is sent again after that long for up
to 300 s, and counted apart; an instantiate POST whose connection was closed unanswered is sent
again, up to twice, only when the server holds no occurrence for the instance, and counted apart),
the servers' CPU seconds, their
peak RSS (VmHWM), the RSS growth per managed cluster and the largest gap between two heartbeats
of an engine (`vnfm_heartbeat_lag_max_seconds`; set VNFM_ORPHAN_AFTER to shorten the takeover).
CPU and RSS are counted after one warm-up instantiate per process (the first one imports the
Kubernetes client and the drivers: seconds of CPU once per process, not per cluster).

Issue 17's targets: 1,000 clusters in under 60 s with 0 failures; under 1 MB of server RSS per
managed cluster; throughput growing with 1 / 2 / 4 processes on PostgreSQL.

    .venv/bin/python bench/fleet_load.py --clusters 100,1000 [--processes 1] [--db sqlite]
    .venv/bin/python bench/fleet_load.py --clusters 300 --processes 1,2,4 --db postgresql

`--request FILE` instantiates with a user's request file as written (JSON; `#` comments to the end
of a line, as the seeds print them, are dropped) on the package `--package` (an example package's
name), and `--cloud default` keeps the simulated cloud's default boot and step times:

    .venv/bin/python bench/fleet_load.py --clusters 200 --concurrency 200 --cloud default \
        --package kubespray --request bench/requests/simple_kubernetes_param_file.json
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests.unit.db.pgcluster

from bench import reference  # noqa: E402
from bench.list_latency import BODY, postgres_url  # noqa: E402
from vnfm.entrypoints.api.query import VNF_LCM_OP_OCC_ATTRIBUTES  # noqa: E402
from vnfm.examples import example_csar  # noqa: E402

ACTIVE = "(in,operationState,STARTING,PROCESSING,ROLLING_BACK)"
# --tacker-body: as Tacker's kubeadm sample (seed 001) asks, every cluster's CPs on one network that
# the simulated cloud creates on demand (extVirtualLinks[].resourceId).
TACKER_NET = "f0c82461-36b5-4d86-8322-b0bc19cda65f"
TACKER_BODY = {**BODY, "extVirtualLinks": [
    {"id": vl, "resourceId": TACKER_NET,
     "extCps": [{"cpdId": cpd, "cpConfig": [{"cpProtocolData": [{"layerProtocol": "IP_OVER_ETHERNET"}]}]}]}
    for vl, cpd in (("net0_master", "masterNode_CP1"), ("net0_worker", "workerNode_CP2"))]}
SERVER = "import sys; from vnfm.entrypoints.cli.main import main; sys.argv[0] = 'vnfm'; main()"
# The same under cProfile (the event loop's thread only: the engine, request parsing, the simulator).
PROFILED = ("import cProfile, sys; from vnfm.entrypoints.cli.main import main; sys.argv[0] = 'vnfm'; "
            "cProfile.run('main()', sys.argv.pop())")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def proc_cpu(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def db_cpu(url: str | None) -> float:
    """CPU seconds of a local PostgreSQL (the bench's throwaway cluster: its socket dir holds
    data/postmaster.pid): the postmaster with its reaped children, plus the live backends."""
    host = re.search(r"host=([^&]+)", url or "")
    pidfile = Path(host.group(1)) / "data" / "postmaster.pid" if host else None
    if pidfile is None or not pidfile.exists():
        return float("nan")
    root = int(pidfile.read_text().split()[0])
    fields = Path(f"/proc/{root}/stat").read_text().rsplit(")", 1)[1].split()
    total = sum(int(f) for f in fields[11:15]) / os.sysconf("SC_CLK_TCK")  # utime stime cutime cstime
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            f = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(f[1]) == root:
            total += (int(f[11]) + int(f[12])) / os.sysconf("SC_CLK_TCK")
    return total


def proc_kb(pid: int, key: str) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(key + ":"):
            return int(line.split()[1])
    return 0


ZERO_LATENCY = {"VNFM_SIM_BOOT_TIME": "0", "VNFM_SIM_STEP_TIME": "0"}
# a line's `#` comment after the last JSON token (`"...", #Set the uuid of the VIM to use`)
COMMENT = re.compile(r'(?<=[\]\[{}",\w])[ \t]+#[^"\n]*$', re.MULTILINE)


def varied(body: dict[str, Any], unique: str, tag: str) -> dict[str, Any]:
    """`body` with the string at dotted path `unique` suffixed with `tag` (seed 002: "to deploy
    multiple Kubernetes clusters ... set different transferring_inventory_path"); as is if none."""
    if not unique:
        return body
    out = json.loads(json.dumps(body))
    *parents, leaf = unique.split(".")
    node = out
    for key in parents:
        node = node[key]
    node[leaf] = f"{node[leaf]}-{tag}"
    return dict(out)


def request_file(path: str) -> dict[str, Any]:
    """A request file as a user wrote it: JSON, or JSON with the seeds' trailing `#` comments."""
    text = Path(path).read_text()
    try:
        return dict(json.loads(text))
    except json.JSONDecodeError:
        return dict(json.loads(COMMENT.sub("", text)))


@contextmanager
def servers(k: int, data_dir: Path, db_url: str | None, profile: str = "",
            cloud: dict[str, str] = ZERO_LATENCY) -> Iterator[list[tuple[subprocess.Popen[bytes], str]]]:
    procs: list[tuple[subprocess.Popen[bytes], str]] = []
    try:
        for n in range(k):
            port = free_port()
            env = {**os.environ, **cloud, "VNFM_AUTH_TOKEN": "", "VNFM_PROBE_CALLBACKS": "0",
                   "VNFM_WORKER_ID": f"bench-{n}", "VNFM_DATA_DIR": str(data_dir),
                   "VNFM_PORT": str(port), **({"VNFM_DATABASE_URL": db_url} if db_url else {})}
            argv = [sys.executable, "-c", PROFILED, "server", profile] if profile and n == 0 else \
                [sys.executable, "-c", SERVER, "server"]
            p = subprocess.Popen(argv, env=env,
                                 stdout=subprocess.DEVNULL, stderr=open(data_dir / f"server-{n}.log", "wb"))  # noqa: SIM115 (lives as long as the server)
            procs.append((p, f"http://127.0.0.1:{port}"))
            wait_up(procs[-1][1], p)  # one at a time: each runs the migrations at start
        yield procs
    finally:
        for p, _ in procs:
            # SIGINT: uvicorn re-raises the signal after its shutdown; as KeyboardInterrupt it lets
            # cProfile write its file (SIGTERM would end the process first).
            p.send_signal(signal.SIGINT)
        for p, _ in procs:
            try:
                p.wait(timeout=20)
            except subprocess.TimeoutExpired:
                p.kill()


def wait_up(url: str, p: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if p.poll() is not None:
            raise SystemExit(f"server exited ({p.returncode}); see its log in the data dir")
        try:
            if httpx.get(url + "/vnflcm/v1/api_versions", timeout=2, trust_env=False).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.1)
    raise SystemExit(f"server at {url} did not come up")


# The poll's selector: every attribute but `id` left out, so the server builds and sends the least
# (the filter's attributes are read, nothing else: no operationParams decoded, unsealed or masked).
ONLY_IDS = "exclude_fields=" + ",".join(sorted(VNF_LCM_OP_OCC_ATTRIBUTES - {"id"}))


async def count(c: httpx.AsyncClient, flt: str) -> int:
    """How many occurrences match `flt` (every page of the list, items of their `id` only)."""
    total, url = 0, f"/vnflcm/v1/vnf_lcm_op_occs?filter={flt}&{ONLY_IDS}"
    while url:
        r = await c.get(url)
        r.raise_for_status()
        total += len(r.json())
        link = r.headers.get("Link")
        url = link[link.index("<") + 1:link.index(">")] if link else ""
    return total


DRAIN_TIMEOUT_S = 1800.0  # a run that has not drained by then is reported, never waited on forever


async def warm_up(c: httpx.AsyncClient, vnfd: str, body: dict[str, Any]) -> None:
    """One instantiate before anything is measured: the first one imports the Kubernetes client
    and the drivers (seconds of CPU once per process, not per cluster)."""
    inst = (await c.post("/vnflcm/v1/vnf_instances", json={"vnfdId": vnfd})).json()["id"]
    (await c.post(f"/vnflcm/v1/vnf_instances/{inst}/instantiate", json=body)).raise_for_status()
    deadline = time.perf_counter() + 300
    while await count(c, ACTIVE) and time.perf_counter() < deadline:
        await asyncio.sleep(0.2)


async def drive(urls: list[str], n: int, concurrency: int, body: dict[str, Any],
                mark: Callable[[], None] = lambda: None, package: str = "k8s_cluster",
                unique: str = "") -> dict[str, Any]:
    # Idle connections are dropped well before the server's keep-alive timeout (5 s): a request sent
    # on a connection the server is closing at that moment fails unanswered (ReadError), a race
    # that a starved client on a loaded machine loses often enough to show in a 1,000 burst.
    limits = httpx.Limits(max_connections=concurrency * 2, keepalive_expiry=1.0)
    clients = [httpx.AsyncClient(base_url=u, timeout=600, trust_env=False, limits=limits) for u in urls]
    try:
        c0 = clients[0]
        pkg = (await c0.post("/vnfpkgm/v1/vnf_packages", json={})).json()["id"]
        (await c0.put(f"/vnfpkgm/v1/vnf_packages/{pkg}/package_content", content=example_csar(package),
                      headers={"Content-Type": "application/zip"})).raise_for_status()
        vnfd = (await c0.get(f"/vnfpkgm/v1/vnf_packages/{pkg}")).json()["vnfdId"]
        for k, c in enumerate(clients):  # every process imports what the first instantiate needs
            await warm_up(c, vnfd, varied(body, unique, f"warm-up-{k}"))
        mark()  # CPU and RSS are counted from here
        sem = asyncio.Semaphore(concurrency)

        busy: list[int] = []

        async def post(i: int, url: str, payload: dict[str, Any]) -> httpx.Response:
            """POST; a 503 with Retry-After (database busy or the connection cap: nothing created) is
            sent again as told, for up to 300 s."""
            give_up = time.perf_counter() + 300
            while True:
                r = await clients[i % len(clients)].post(url, json=payload)
                if r.status_code != 503 or "Retry-After" not in r.headers or time.perf_counter() > give_up:
                    return r
                busy.append(i)
                await asyncio.sleep(float(r.headers["Retry-After"]))

        async def create(i: int) -> str:
            async with sem:
                r = await post(i, "/vnflcm/v1/vnf_instances", {"vnfdId": vnfd})
                r.raise_for_status()
                return str(r.json()["id"])

        ids = await asyncio.gather(*(create(i) for i in range(n)))
        post_failures: list[str] = []

        unanswered: list[str] = []

        async def never_arrived(i: int, inst: str) -> bool:
            """No occurrence exists for `inst`: the POST was not read (a connection the server
            closed as idle or head-timed-out while a starved client was about to use it)."""
            r = await clients[i % len(clients)].get("/vnflcm/v1/vnf_lcm_op_occs",
                                                    params={"filter": f"(eq,vnfInstanceId,{inst})"})
            return r.status_code == 200 and not r.json()

        async def instantiate(i: int, inst: str) -> None:
            async with sem:
                for attempt in range(3):
                    try:
                        r = await post(i, f"/vnflcm/v1/vnf_instances/{inst}/instantiate", varied(body, unique, str(i)))
                        if r.status_code != 202:
                            post_failures.append(f"{r.status_code} {r.text[:120]}")
                        return
                    except httpx.TransportError as e:  # sent again only when nothing was created
                        if attempt == 2 or not await never_arrived(i, inst):
                            post_failures.append(repr(e))
                            return
                        unanswered.append(repr(e))
                    except httpx.HTTPError as e:
                        post_failures.append(repr(e))
                        return

        t0 = time.perf_counter()
        await asyncio.gather(*(instantiate(i, inst) for i, inst in enumerate(ids)))
        posted = time.perf_counter() - t0
        deadline = time.perf_counter() + DRAIN_TIMEOUT_S
        while await count(c0, ACTIVE + ";(eq,operation,INSTANTIATE)"):
            if time.perf_counter() > deadline:  # reported as failures (not COMPLETED); logs kept
                print(f"  operations still running after {DRAIN_TIMEOUT_S:g} s: not waiting longer")
                break
            await asyncio.sleep(0.5)
        wall = time.perf_counter() - t0
        done = await count(c0, "(eq,operationState,COMPLETED);(eq,operation,INSTANTIATE)") - len(clients)
        return {"wall": wall, "posted": posted, "completed": done, "post_failures": post_failures,
                "busy": len(busy), "unanswered": unanswered}
    finally:
        for c in clients:
            await c.aclose()


def run(n: int, k: int, db: str, concurrency: int, profile: str = "", body: dict[str, Any] = BODY,
        package: str = "k8s_cluster", cloud: dict[str, str] = ZERO_LATENCY, unique: str = "",
        py_spy: str = "") -> None:
    with tempfile.TemporaryDirectory(prefix="vnfm-fleet-") as tmp, \
            (postgres_url() if db == "postgresql" else _none()) as url:
        if db == "postgresql" and url is None:
            return
        with servers(k, Path(tmp), url, profile, cloud) as procs:
            pids = [p.pid for p, _ in procs]
            start: dict[str, float] = {}
            spy: list[subprocess.Popen[bytes]] = []

            def mark() -> None:
                start["rss"] = sum(proc_kb(pid, "VmRSS") for pid in pids)
                start["cpu"] = sum(proc_cpu(pid) for pid in pids)
                start["db"] = db_cpu(url)
                if py_spy:  # the measured window only (after the warm-up), the first server
                    exe = shutil.which("py-spy", path=str(Path(sys.executable).parent)) or "py-spy"
                    spy.append(subprocess.Popen([exe, "record", "--pid", str(pids[0]), "--rate", "200",
                                                 "--gil", "--format", "raw", "--output", py_spy],
                                                stdout=subprocess.DEVNULL))

            try:
                res = asyncio.run(drive([u for _, u in procs], n, concurrency, body, mark, package, unique))
            except BaseException:
                keep_logs(Path(tmp))
                raise
            finally:
                for s in spy:  # SIGINT: py-spy writes what it recorded and exits
                    s.send_signal(signal.SIGINT)
                    s.wait(timeout=60)
            cpu = sum(proc_cpu(pid) for pid in pids) - start["cpu"]
            dbcpu = db_cpu(url) - start["db"]
            rss0 = start["rss"]
            lag = max(heartbeat_lag(u) for _, u in procs)
            rss1 = sum(proc_kb(pid, "VmRSS") for pid in pids)
            hwm = max(proc_kb(pid, "VmHWM") for pid in pids)
        if res["post_failures"] or res["completed"] < n:  # keep the servers' logs to look at
            keep_logs(Path(tmp))
    failed = n - res["completed"]
    print(f"{db}, {k} process(es), {n:,} clusters x 3 nodes: wall {res['wall']:.1f} s "
          f"(POSTs answered in {res['posted']:.1f} s), {res['completed'] / res['wall']:.1f} instantiates/s, "
          f"failures {failed} (POST {len(res['post_failures'])}; 503 + Retry-After answered {res['busy']}; "
          f"sent again after a connection closed unread {len(res['unanswered'])}), "
          f"server CPU {cpu:.1f} s "
          f"({cpu / n * 1000:.0f} ms per cluster)"
          + (f", database CPU {dbcpu:.1f} s ({dbcpu / n * 1000:.0f} ms per cluster, server + database "
             f"{(cpu + dbcpu) / n * 1000:.0f} ms)" if db == "postgresql" else "")
          + f", peak RSS {hwm / 1024:.0f} MB per process, "
          f"RSS growth {(rss1 - rss0) / 1024 / n * 1024:.0f} kB per cluster, "
          f"largest heartbeat lag {lag:.2f} s (takeover after {os.environ.get('VNFM_ORPHAN_AFTER', '30')} s)")
    for f in res["post_failures"][:3]:
        print(f"  e.g. {f}")
    for f in res["unanswered"][:3]:
        print(f"  closed unread, nothing created, sent again: {f}")
    if profile and Path(profile).exists():
        import pstats

        print(f"profile of the first server's event-loop thread ({profile}), by own time:")
        pstats.Stats(profile).sort_stats("tottime").print_stats(15)
        pstats.Stats(profile).sort_stats("cumulative").print_stats(25)


def keep_logs(data_dir: Path) -> None:
    keep = Path(tempfile.mkdtemp(prefix="vnfm-fleet-logs-"))
    for log in data_dir.glob("server-*.log"):
        shutil.copy(log, keep / log.name)
    print(f"  servers' logs kept in {keep}")


def heartbeat_lag(url: str) -> float:
    """The largest gap between two heartbeats of the server's engine since it started (/metrics)."""
    text = httpx.get(url + "/metrics", timeout=10, trust_env=False).text
    for line in text.splitlines():
        if line.startswith("vnfm_heartbeat_lag_max_seconds "):
            return float(line.split()[1])
    return float("nan")


@contextmanager
def _none() -> Iterator[None]:
    yield None


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--clusters", default="100,1000")
    ap.add_argument("--processes", default="1")
    ap.add_argument("--db", default="sqlite", choices=["sqlite", "postgresql"])
    ap.add_argument("--concurrency", type=int, default=100, help="requests in flight at most")
    ap.add_argument("--profile", default="", help="run the first server under cProfile, write the profile here")
    ap.add_argument("--tacker-body", action="store_true",
                    help="instantiate bodies with extVirtualLinks on one shared network, as Tacker's samples")
    ap.add_argument("--request", default="", help="an instantiate request file, as written (overrides --tacker-body)")
    ap.add_argument("--package", default="k8s_cluster", help="the example package to onboard (e.g. kubespray)")
    ap.add_argument("--cloud", default="zero", choices=["zero", "default"],
                    help="the simulated cloud's boot and step times: zero, or its defaults")
    ap.add_argument("--unique", default="", help="a body's string (dotted path) made unique per cluster")
    ap.add_argument("--py-spy", default="", help="record the first server's measured window with py-spy "
                    "(--gil, 200 Hz, collapsed stacks) into this file; bench/profile_table.py groups it")
    args = ap.parse_args()
    body = request_file(args.request) if args.request else TACKER_BODY if args.tacker_body else BODY
    cloud = ZERO_LATENCY if args.cloud == "zero" else {}
    for n in (int(x) for x in args.clusters.split(",")):
        for k in (int(x) for x in args.processes.split(",")):
            run(n, k, args.db, args.concurrency, args.profile, body, args.package, cloud, args.unique,
                args.py_spy)
    print(reference.line())


if __name__ == "__main__":
    main()
