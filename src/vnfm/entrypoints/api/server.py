"""Running the API server: in the foreground (`vnfm server`) or in a thread (the demo, tests)."""

from __future__ import annotations

import socket
import threading
import time
from dataclasses import dataclass

import uvicorn

from vnfm.config import Settings
from vnfm.entrypoints.api.app import create_app


def serve(settings: Settings) -> None:
    uvicorn.run(create_app(settings), host=settings.host, port=settings.port, log_level="info",
                access_log=False, server_header=False, date_header=False)


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
                            access_log=False, lifespan="on", server_header=False, date_header=False)
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
    return ServerHandle(url=f"http://{settings.host}:{port}", server=server, thread=thread)
