"""A tiny notification endpoint (http.server in a thread) for the notifier tests."""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Received:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


@dataclass
class Receiver:
    """Records every request. POSTs to /notify fail with `fail_status` while `fail_first` > 0."""

    fail_first: int = 0
    fail_status: int = 500
    get_status: int = 204
    post_status: int = 204
    token: str = "tok-SECRET-1"
    token_expires_in: int | None = 3600
    gate: threading.Event | None = None  # POSTs wait for it when set
    requests: list[Received] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    changed: threading.Condition = field(default_factory=threading.Condition)
    server: ThreadingHTTPServer | None = None

    @property
    def base(self) -> str:
        assert self.server is not None
        host, port = self.server.server_address[:2]
        return f"http://{host!s}:{port}"

    def posts(self, path: str = "/notify") -> list[Received]:
        with self.lock:
            return [r for r in self.requests if r.method == "POST" and r.path == path]

    def wait_for(self, predicate: Any, timeout: float = 5.0) -> bool:
        with self.changed:
            return self.changed.wait_for(predicate, timeout)

    def start(self) -> Receiver:
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:  # quiet
                return

            def _record(self) -> Received:
                length = int(self.headers.get("Content-Length") or 0)
                rec = Received(self.command, self.path, dict(self.headers.items()), self.rfile.read(length))
                with receiver.lock:
                    receiver.requests.append(rec)
                return rec

            def _answer(self, status: int, body: bytes = b"", ctype: str = "application/json") -> None:
                self.send_response(status)
                if body:
                    self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                if body:
                    self.wfile.write(body)
                with receiver.changed:
                    receiver.changed.notify_all()

            def do_GET(self) -> None:
                self._record()
                self._answer(receiver.get_status)

            def do_POST(self) -> None:
                self._record()
                if self.path == "/token":
                    body: dict[str, Any] = {"access_token": receiver.token, "token_type": "Bearer"}
                    if receiver.token_expires_in is not None:
                        body["expires_in"] = receiver.token_expires_in
                    self._answer(200, json.dumps(body).encode())
                    return
                if receiver.gate is not None:
                    receiver.gate.wait(10)
                with receiver.lock:
                    failing = receiver.fail_first > 0
                    if failing:
                        receiver.fail_first -= 1
                self._answer(receiver.fail_status if failing else receiver.post_status)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, args=(0.02,), daemon=True).start()
        return self

    def stop(self) -> None:
        if self.server is not None:
            self.server.shutdown()
            self.server.server_close()
