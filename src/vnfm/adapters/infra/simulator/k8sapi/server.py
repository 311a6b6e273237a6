"""The HTTPS listener of the simulated clusters' Kubernetes API: one per process, serving every
cluster of the simulated cloud under `/clusters/<vnfInstanceId>` (the VIM's server URL names that
path, so `kubectl` and the `kubernetes` client talk to it as to any API server). TLS with a serving
certificate signed by the simulator's CA (pki.py); the VIM carries that CA.

The listener starts on the first `endpoint()` call (the twin's VIM-token step asks for it when a
cluster driver registers the cluster as a VIM), on the configured host and port (port 0: any free
port, which a later process does not get again: set a fixed port to keep VIM URLs valid across
restarts; the port a process took is also remembered in the data dir and taken again by the next
one when free. The composition root starts the listener at once when the port is known)."""

from __future__ import annotations

import json
import logging
import ssl
import tempfile
import threading
import weakref
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, unquote, urlsplit

from vnfm.adapters.infra.simulator.k8sapi import pki, watch
from vnfm.adapters.infra.simulator.k8sapi.routes import Answer, Request, answer

log = logging.getLogger(__name__)
PREFIX = "/clusters/"
PORT_FILE = "port"
MAX_BODY = 8 * 1024 * 1024


@dataclass(frozen=True)
class Endpoint:
    url: str  # https://host:port/clusters/<instance id>
    ca_pem: str


class KubeApiServer:
    """The listener and the map from cluster (VNF instance id) to the simulated cloud keeping it."""

    def __init__(self, directory: Path | None = None, host: str = "127.0.0.1", port: int = 0,
                 root_cluster: str | None = None) -> None:
        self.directory = directory
        self.host = host
        self.port = port
        # the cluster served at the root of the listener too (paths without /clusters/<id>), as a real
        # API server serves: for a kubeconfig whose server URL a client replaced by host:port
        self.root_cluster = root_cluster
        self.stopping = threading.Event()  # ends the watches being served
        self.default_sim: Any = None  # the cloud asked about clusters this process has not seen yet
        self._sims: weakref.WeakValueDictionary[str, Any] = weakref.WeakValueDictionary()
        self._lock = threading.Lock()
        self._httpd: ThreadingHTTPServer | None = None
        self._ca_pem = ""
        self._tmp: tempfile.TemporaryDirectory[str] | None = None

    # ------------------------------------------------------------------ lifecycle
    def start(self) -> None:
        with self._lock:
            if self._httpd is not None:
                return
            self.stopping.clear()
            directory = self.directory
            if directory is None:
                self._tmp = tempfile.TemporaryDirectory(prefix="vnfm-kube-api-")
                directory = Path(self._tmp.name)
            files = pki.ensure(directory, [self.host])
            ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            ctx.minimum_version = ssl.TLSVersion.TLSv1_2
            ctx.load_cert_chain(str(files.cert_file), str(files.key_file))
            httpd = self._bind(directory)
            httpd.daemon_threads = True
            httpd.socket = ctx.wrap_socket(httpd.socket, server_side=True)
            self._ca_pem = files.ca_pem
            self._httpd = httpd
            if self.directory is not None:  # the next process takes the same port: registered VIMs stay valid
                (directory / PORT_FILE).write_text(str(self.bound_port))
            threading.Thread(target=httpd.serve_forever, name="sim-kube-api", daemon=True).start()
            log.info("simulated Kubernetes API listening on https://%s:%d", self.host, self.bound_port)

    def _bind(self, directory: Path) -> ThreadingHTTPServer:
        """The configured port; with port 0, the port an earlier process of this data dir used when
        it is free, else any free port."""
        port = self.port
        remembered = directory / PORT_FILE
        if not port and self.directory is not None and remembered.exists():
            try:
                return ThreadingHTTPServer((self.host, int(remembered.read_text().strip())), _handler(self))
            except (OSError, ValueError):
                log.warning("simulated Kubernetes API: port of %s not available, taking another", remembered)
        return ThreadingHTTPServer((self.host, port), _handler(self))

    @property
    def remembered(self) -> bool:
        """An earlier process of this data dir served on a port that registered VIMs may name."""
        return self.directory is not None and (self.directory / PORT_FILE).exists()

    def stop(self) -> None:
        with self._lock:
            self.stopping.set()
            if self._httpd is not None:
                self._httpd.shutdown()
                self._httpd.server_close()
                self._httpd = None

    @property
    def bound_port(self) -> int:
        assert self._httpd is not None
        return int(self._httpd.server_address[1])

    @property
    def base_url(self) -> str:
        self.start()
        host = self.host if self.host not in ("", "0.0.0.0", "::") else "127.0.0.1"  # noqa: S104 - a wildcard bind
        host = f"[{host}]" if ":" in host else host
        return f"https://{host}:{self.bound_port}"

    def endpoint(self, sim: Any, instance_id: str) -> Endpoint:
        """The API endpoint of the cluster of VNF instance `instance_id` kept by `sim`."""
        self.start()
        self._sims[instance_id] = sim
        return Endpoint(f"{self.base_url}{PREFIX}{instance_id}", self._ca_pem)

    def sim_of(self, instance_id: str) -> Any:
        return self._sims.get(instance_id) or self.default_sim


def _handler(server: KubeApiServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        server_version = "vnfm-sim-kube-apiserver"

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base class's name
            log.debug("kube-api %s", format % args)

        def _serve(self) -> None:
            parts = urlsplit(self.path)
            path = unquote(parts.path)
            if path.startswith(PREFIX):
                instance_id, _, rest = path[len(PREFIX):].partition("/")
                base = f"{server.base_url}{PREFIX}{instance_id}"
            elif server.root_cluster:
                instance_id, rest, base = server.root_cluster, path.lstrip("/"), server.base_url
            else:
                return self._send(Answer(404, {"kind": "Status", "apiVersion": "v1", "status": "Failure",
                                               "reason": "NotFound", "code": 404,
                                               "message": "no cluster in the path: /clusters/<id>/..."}))
            length = int(self.headers.get("Content-Length") or 0)
            if length > MAX_BODY:
                return self._send(Answer(413, {"kind": "Status", "apiVersion": "v1", "status": "Failure",
                                               "reason": "RequestEntityTooLarge", "code": 413,
                                               "message": "request body too large"}))
            body = self.rfile.read(length) if length else b""
            req = Request(method=self.command, path="/" + rest.rstrip("/"), query=dict(parse_qsl(parts.query)),
                          headers={k.lower(): v for k, v in self.headers.items()}, body=body)
            sim = server.sim_of(instance_id)
            if sim is None:
                return self._send(Answer(404, {"kind": "Status", "apiVersion": "v1", "status": "Failure",
                                               "reason": "NotFound", "code": 404,
                                               "message": f"no simulated Kubernetes cluster {instance_id}"}))
            if req.method == "GET" and req.query.get("watch") in ("1", "true"):
                return self._watch(sim, instance_id, req, base)
            try:
                self._send(answer(sim, instance_id, req, base))
            except Exception:
                log.exception("simulated Kubernetes API: %s %s failed", self.command, path)
                self._send(Answer(500, {"kind": "Status", "apiVersion": "v1", "status": "Failure",
                                        "reason": "InternalError", "code": 500, "message": "internal error"}))

        def _watch(self, sim: Any, instance_id: str, req: Request, base: str) -> None:
            refused = _serve_watch(self, server, sim, instance_id, req, base)
            if refused is not None:
                self._send(refused)

        def _send(self, a: Answer) -> None:
            data = a.encoded()
            self.send_response(a.status)
            self.send_header("Content-Type", a.content_type)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(data)

        do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = do_HEAD = _serve  # noqa: N815

    return Handler


def _serve_watch(h: BaseHTTPRequestHandler, server: KubeApiServer, sim: Any, instance_id: str, req: Request,
                 base: str) -> Answer | None:
    """A watch: the list first (a failure is answered as such: returned), then events, chunked."""
    accept = ",".join(p for p in req.headers.get("accept", "").split(",") if "as=Table" not in p)
    listing = Request("GET", req.path, {k: v for k, v in req.query.items() if k not in watch.LIST_ONLY},
                      {**req.headers, "accept": accept or "application/json"}, b"")

    def lister() -> tuple[int, dict[str, Any]]:
        a = answer(sim, instance_id, listing, base)
        return a.status, a.body

    first = answer(sim, instance_id, listing, base)
    if first.status != 200:
        return first
    if not str(first.body.get("kind", "")).endswith("List"):
        return Answer(405, {"kind": "Status", "apiVersion": "v1", "status": "Failure", "reason": "MethodNotAllowed",
                            "code": 405, "message": "watch a collection (with a fieldSelector for one object)"})
    h.send_response(200)
    h.send_header("Content-Type", "application/json")
    h.send_header("Transfer-Encoding", "chunked")
    h.send_header("Connection", "close")
    h.end_headers()

    def send(event: dict[str, Any]) -> None:
        data = json.dumps(event).encode() + b"\n"
        h.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
        h.wfile.flush()

    h.close_connection = True
    try:
        watch.stream(req.query, lister, send, server.stopping)
        h.wfile.write(b"0\r\n\r\n")
    except OSError:  # the client went away
        pass
    return None


_shared: KubeApiServer | None = None
_shared_lock = threading.Lock()


def shared() -> KubeApiServer:
    """The process's listener when the composition root configured none (tests, embedded use):
    any free loopback port, a CA in a temporary directory."""
    global _shared
    with _shared_lock:
        if _shared is None:
            _shared = KubeApiServer()
        return _shared
