"""Slow clients against one `vnfm server` while another client is answered (issue 24.3; a benchmark).

Starts a server (default settings unless the environment says otherwise: VNFM_HTTP_HEAD_TIMEOUT,
VNFM_HTTP_BODY_TIMEOUT, VNFM_HTTP_MAX_CONNECTIONS), then keeps `--clients` slow connections open
for `--seconds`: each one, when the server closes it, reconnects (as a slowloris does). The mix:

- head: a request head sent but for its final blank line;
- body: a complete head announcing 100 bytes of body, one byte sent;
- trickle: a request head sent one byte every second (never completes before the head timeout);
- idle: a connection that sends nothing;
- garbage: a line that is no HTTP, sent again on a new connection each time the server closes it
  (the client-driven log lines: "Invalid HTTP request received").

Meanwhile a well-behaved client GETs `/vnflcm/v1/api_versions` and a list of instances every
0.2 s (a new connection each time, so the connection limit counts too). Prints: the good client's
requests answered / failed and their p50 / p99 / max latency, the slow connections the server
closed and reconnects made, and the server log's lines and bytes (the log must stay bounded).

    .venv/bin/python bench/slow_clients.py [--clients 300] [--seconds 90]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.fleet_load import SERVER, free_port, wait_up  # noqa: E402

KINDS = ("head", "body", "trickle", "idle", "garbage")
HEAD = b"GET /vnflcm/v1/api_versions HTTP/1.1\r\nHost: x\r\nAccept: application/json\r\n"
BODY = (b"POST /vnfpkgm/v1/vnf_packages HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        b"Content-Length: 100\r\n\r\n{")


async def slow(kind: str, port: int, until: float, counts: Counter[str]) -> None:
    """One slow client: holds a connection the server has to cut; reconnects when it is cut."""
    while time.monotonic() < until:
        try:
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
        except OSError:
            counts["connect_refused"] += 1
            await asyncio.sleep(1.0)
            continue
        counts["connections"] += 1
        try:
            if kind == "head":
                writer.write(HEAD)
            elif kind == "body":
                writer.write(BODY)
            elif kind == "garbage":
                writer.write(b"\x16\x03\x01 not http at all\r\n\r\n")
            await writer.drain()
            trickle = iter(HEAD * 100)
            while time.monotonic() < until:
                if kind == "trickle":
                    writer.write(bytes([next(trickle)]))
                    await writer.drain()
                try:
                    data = await asyncio.wait_for(reader.read(4096), timeout=1.0)
                except TimeoutError:
                    continue
                if not data:  # the server closed it
                    counts[f"closed_{kind}"] += 1
                    break
                counts[f"answered_{kind}"] += 1  # e.g. 400 to garbage, then closed
        except OSError:
            counts[f"closed_{kind}"] += 1
        finally:
            writer.close()
        await asyncio.sleep(0.05 if kind == "garbage" else 0.2)


async def good(url: str, until: float, lat: list[float], errors: Counter[str]) -> None:
    while time.monotonic() < until:
        for path in ("/vnflcm/v1/api_versions", "/vnflcm/v1/vnf_instances"):
            t0 = time.perf_counter()
            try:
                async with httpx.AsyncClient(base_url=url, timeout=10, trust_env=False) as c:
                    r = await c.get(path)
                if r.status_code == 200:
                    lat.append(time.perf_counter() - t0)
                else:
                    errors[str(r.status_code)] += 1
            except httpx.HTTPError as e:
                errors[type(e).__name__] += 1
        await asyncio.sleep(0.2)


async def campaign(url: str, port: int, clients: int, seconds: float) -> tuple[list[float], Counter[str], Counter[str]]:
    until = time.monotonic() + seconds
    counts: Counter[str] = Counter()
    lat: list[float] = []
    errors: Counter[str] = Counter()
    tasks = [asyncio.create_task(slow(KINDS[i % len(KINDS)], port, until, counts)) for i in range(clients)]
    await asyncio.sleep(2.0)  # every slow client connected first
    await good(url, until, lat, errors)
    await asyncio.gather(*tasks)
    return lat, errors, counts


def pct(xs: list[float], p: float) -> float:
    return sorted(xs)[min(len(xs) - 1, int(len(xs) * p))] if xs else float("nan")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--clients", type=int, default=300)
    ap.add_argument("--seconds", type=float, default=90.0)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="vnfm-slow-") as tmp:
        port = free_port()
        log = Path(tmp) / "server.log"
        env = {**os.environ, "VNFM_AUTH_TOKEN": "", "VNFM_DATA_DIR": tmp, "VNFM_PORT": str(port)}
        with open(log, "wb") as out:
            p = subprocess.Popen([sys.executable, "-c", SERVER, "server"], env=env, stdout=out, stderr=out)
            try:
                url = f"http://127.0.0.1:{port}"
                wait_up(url, p)
                t0 = time.perf_counter()
                lat, errors, counts = asyncio.run(campaign(url, port, args.clients, args.seconds))
                wall = time.perf_counter() - t0
                alive = p.poll() is None
            finally:
                p.terminate()
                p.wait(20)
        text = log.read_bytes()
        if os.environ.get("SLOW_KEEP_LOG"):
            Path(os.environ["SLOW_KEEP_LOG"]).write_bytes(text)
    closed = sum(v for k, v in counts.items() if k.startswith("closed_"))
    print(f"{args.clients} slow clients for {wall:.0f} s: the good client had {len(lat)} answers, "
          f"{sum(errors.values())} failures {dict(errors)}; latency p50 {pct(lat, 0.5) * 1000:.0f} ms, "
          f"p99 {pct(lat, 0.99) * 1000:.0f} ms, max {max(lat, default=float('nan')) * 1000:.0f} ms")
    print(f"  slow connections made {counts['connections']}, closed by the server {closed} "
          f"({ {k: v for k, v in counts.items() if k.startswith(('closed_', 'answered_'))} }), "
          f"refused {counts['connect_refused']}; server alive at the end: {alive}")
    lines = text.count(b"\n")
    print(f"  server log: {lines} lines, {len(text):,} bytes")


if __name__ == "__main__":
    main()
