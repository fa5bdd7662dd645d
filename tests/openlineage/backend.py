"""A local OpenLineage HTTP backend that can be down, refuse requests, or reject events."""

from __future__ import annotations

import json
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Backend:
    """``refuse`` first requests get HTTP 500; events whose ``reject`` key is true get HTTP 400."""

    def __init__(self, port: int, refuse: int = 0) -> None:
        self.port = port
        self.refuse = refuse
        self.received: list[dict[str, Any]] = []
        self.requests = 0
        self.headers: list[dict[str, str]] = []
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None

    def start(self) -> Backend:
        backend = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                with backend._lock:
                    backend.requests += 1
                    backend.headers.append(dict(self.headers))
                    if backend.refuse > 0:
                        backend.refuse -= 1
                        status = 500
                    elif body.get("reject"):
                        status = 400
                    else:
                        backend.received.append(body)
                        status = 201
                self.send_response(status)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"
