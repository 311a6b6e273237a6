"""Running the API server: in the foreground (`vnfm server`) or in a thread (the demo, tests)."""

from __future__ import annotations

import errno
import logging
import socket
import threading
import time
from dataclasses import dataclass
from typing import Any

import uvicorn

from vnfm.adapters.db import ping_url
from vnfm.config import Settings, SettingsError, check_runtime
from vnfm.domain.errors import OperationFailed
from vnfm.domain.secrets import URL_USERINFO
from vnfm.entrypoints.api.app import create_app
from vnfm.entrypoints.api.auth.mtls import uvicorn_tls_options
from vnfm.entrypoints.api.httpguard import MAX_HEAD, guarded_protocol, install_busy_answer
from vnfm.entrypoints.gcpolicy import settle
from vnfm.entrypoints.logsetup import configure_logging

log = logging.getLogger("vnfm.server")


def http_options(settings: Settings) -> dict[str, Any]:
    """Deadlines for slow clients (`httpguard`, on httptools' C parser when installed, else h11),
    idle keep-alive, a cap on connections and on the size of an incomplete request head; TLS, and
    with `tls_client_ca` the client-certificate check whose protocol builds on the guarded one
    (auth/mtls)."""
    guarded = guarded_protocol(settings.http_head_timeout, settings.http_body_timeout)
    install_busy_answer()
    # The listen backlog as deep as the connection cap (the kernel caps it at net.core.somaxconn):
    # uvicorn's 2048 overflowed in a burst of 5,000 connections, and a connection whose handshake
    # the kernel dropped on overflow is reset later, after its request was sent (ReadError('')).
    # uvicorn's loop "auto": uvloop when installed (a dependency), asyncio's own otherwise.
    return {"http": guarded, "timeout_keep_alive": settings.http_keep_alive,
            "limit_concurrency": settings.http_max_connections, "backlog": max(2048, settings.http_max_connections),
            "h11_max_incomplete_event_size": MAX_HEAD,
            **uvicorn_tls_options(settings, guarded)}


def known_secrets(settings: Settings) -> list[str]:
    """Setting values no log line may show."""
    found = [settings.auth_token, settings.oauth2_introspection_client_secret,
             settings.etcd_backup_s3_access_key, settings.etcd_backup_s3_secret_key]
    found += [k.strip() for k in settings.secret_key.split(",")]
    found += [m["pw"] for m in URL_USERINFO.finditer(settings.database_url)]
    return [s for s in found if s]


def preflight(settings: Settings) -> socket.socket:
    """SettingsError (one line per problem) unless the data dir is writable, the TLS files load, the
    database answers and the port is free; the socket bound to it, for `serve`."""
    check_runtime(settings, ping=ping_url)
    return bind(settings.host, settings.port)


def bind(host: str, port: int) -> socket.socket:
    """A socket bound to host:port (before the engine starts: a port in use is a setting error,
    not a traceback after the engine took over operations)."""
    try:
        family, kind, proto, _, addr = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0]
    except socket.gaierror as exc:
        raise SettingsError([f"setting host (env VNFM_HOST): {host!r} does not resolve ({exc.strerror})"]) from None
    sock = socket.socket(family, kind, proto)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind(addr)
    except OSError as exc:
        sock.close()
        hint = ("another process listens there (another vnfm?): stop it or choose another port"
                if exc.errno == errno.EADDRINUSE else "choose another address or port")
        raise SettingsError([f"setting port (env VNFM_PORT): cannot listen on {host}:{port} ({exc.strerror}): "
                             f"{hint} (--port / --host)"]) from None
    sock.set_inheritable(True)
    return sock


def warn_exposure(settings: Settings) -> None:
    """Loud warnings for what is fine on a laptop and dangerous on a network."""
    if not settings.auth_configured and not settings.loopback_only:
        for _ in range(3):
            log.warning("AUTHENTICATION IS OFF on %s:%d (--insecure-no-auth): anyone who reaches this port can "
                        "register VIMs and terminate every VNF", settings.host, settings.port)
    elif settings.auth_token and not settings.loopback_only:
        log.warning("the static auth_token is for development: it makes every holder an admin of every tenant; "
                    "use OAuth 2.0 clients (oauth2_clients) or an external authorization server")
    if settings.fault_injection and not settings.loopback_only:
        log.warning("the simulator's fault-injection API is mounted (fault_injection): for tests and demos only")


def serve(settings: Settings, sock: socket.socket | None = None) -> None:
    """Run the server on `sock` (preflight's; else it binds host:port itself). A stored secret the
    keys cannot decrypt is a SettingsError, raised before the engine starts."""
    configure_logging(settings.log_level, settings.log_format, known_secrets=known_secrets(settings))
    scheme = "https" if settings.tls else "http"
    log.info("vnfm server on %s://%s:%d (data dir %s, engine %s)", scheme, settings.host, settings.port,
             settings.data_dir, "on" if settings.run_engine else "off")
    warn_exposure(settings)
    try:
        app = create_app(settings)
    except OperationFailed as exc:  # the secret keys do not decrypt what is stored
        raise SettingsError([f"setting secret_key (env VNFM_SECRET_KEY): {exc}"]) from None
    config = uvicorn.Config(app, host=settings.host, port=settings.port, log_config=None,
                            log_level=settings.log_level.lower(), access_log=False, server_header=False,
                            date_header=False, **http_options(settings))
    settle()  # the imports and the application are built: out of the collector's sight from now on
    uvicorn.Server(config).run(sockets=[sock] if sock is not None else None)


@dataclass
class ServerHandle:
    url: str
    server: uvicorn.Server
    thread: threading.Thread

    def stop(self, timeout: float = 10.0) -> None:
        self.server.should_exit = True
        self.thread.join(timeout)


def _free_port(host: str) -> int:
    with socket.socket() as s:
        s.bind((host, 0))
        return int(s.getsockname()[1])


def start_in_thread(settings: Settings, *, timeout: float = 30.0) -> ServerHandle:
    port = settings.port or _free_port(settings.host)
    settings.port = port
    config = uvicorn.Config(create_app(settings), host=settings.host, port=port, log_level="warning",
                            access_log=False, lifespan="on", server_header=False, date_header=False,
                            **http_options(settings))
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, name="vnfm-server", daemon=True)
    thread.start()
    deadline = time.monotonic() + timeout
    while not server.started:
        if not thread.is_alive():
            raise RuntimeError("the vnfm server failed to start; see the log above")
        if time.monotonic() > deadline:
            server.should_exit = True
            raise TimeoutError(f"the vnfm server did not start within {timeout} s")
        time.sleep(0.01)
    scheme = "https" if settings.tls else "http"
    return ServerHandle(url=f"{scheme}://{settings.host}:{port}", server=server, thread=thread)
