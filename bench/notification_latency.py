"""Notification delivery through the outbox (a benchmark, not a test: prints figures).

Builds the application on SQLite in a temporary directory, subscribes a local HTTP receiver to
LCM notifications, then creates N VNF instances one after the other: each creation commits a
VnfIdentifierCreationNotification into the outbox and wakes the notifier. Prints how long a
notification takes from the commit to the receiver (p50 / p99 / max), the delivery rate, and
the rows left in the outbox at the end (0 expected). As fast as creations go, notifications
queue up (throughput); with --paced each creation waits for its notification (latency alone).

    .venv/bin/python bench/notification_latency.py [--instances 500] [--paced]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import statistics
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from vnfm.bootstrap import build
from vnfm.config import Settings
from vnfm.examples import example_csar


class Receiver:
    def __init__(self) -> None:
        self.arrived: dict[str, float] = {}
        self.lock = threading.Lock()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:  # noqa: N802
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)))
                with outer.lock:
                    outer.arrived[str(body.get("vnfInstanceId"))] = time.perf_counter()
                self.send_response(204)
                self.end_headers()

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/notify"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--instances", type=int, default=500)
    ap.add_argument("--paced", action="store_true", help="wait for each notification before the next creation")
    args = ap.parse_args()
    logging.basicConfig(level=logging.WARNING)
    receiver = Receiver()
    with tempfile.TemporaryDirectory() as tmp:
        app = build(Settings(data_dir=Path(tmp), probe_callbacks=False,
                             egress_allow_networks=["127.0.0.0/8"]))  # the receiver is local
        assert app.notifier is not None
        asyncio.run(app.subscriptions.create({
            "callbackUri": receiver.url, "filter": {"notificationTypes": ["VnfIdentifierCreationNotification"]}}))
        pkg = app.packages.create()
        vnfd_id = app.packages.upload(pkg.id, example_csar()).vnfd_id
        committed: dict[str, float] = {}
        start = time.perf_counter()
        for _ in range(args.instances):
            inst = app.instances.create({"vnfdId": vnfd_id})  # returns after the commit and the wake
            committed[inst.id] = time.perf_counter()
            while args.paced and inst.id not in receiver.arrived and time.perf_counter() - start < 120:
                time.sleep(0.0005)
        created = time.perf_counter() - start
        if not app.notifier.drain(60):
            raise SystemExit("notifications still pending after 60 s")
        total = time.perf_counter() - start
        with app.uow() as u:
            left = u.outbox.count()
        app.notifier.close(5)
    lat = sorted((receiver.arrived[i] - t) * 1000 for i, t in committed.items() if i in receiver.arrived)
    missing = len(committed) - len(lat)
    print(f"instances created:        {args.instances} in {created:.2f}s{' (paced)' if args.paced else ''}")
    print(f"notifications received:   {len(lat)} (missing {missing}) in {total:.2f}s "
          f"({len(lat) / total:.0f}/s)")
    if lat:
        p99 = lat[min(len(lat) - 1, int(len(lat) * 0.99))]
        print(f"commit -> receiver:       p50 {statistics.median(lat):.1f} ms, p99 {p99:.1f} ms, max {lat[-1]:.1f} ms")
    print(f"outbox rows left:         {left}")
    receiver.server.shutdown()


if __name__ == "__main__":
    main()
