"""What the fake Hub and the hydrator tests' fake API server share: an HTTP server on
127.0.0.1 only, on a free port, in a daemon thread, that shuts itself down after `lifetime`
seconds even if a test forgets to."""

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Self


class LoopbackServer:
    def __init__(self, handler: type[BaseHTTPRequestHandler], *, lifetime: float) -> None:
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.watchdog = threading.Timer(lifetime, self.stop)
        self.watchdog.daemon = True

    @property
    def endpoint(self) -> str:
        host, port = self.server.server_address[:2]
        return f"http://{host!s}:{port}"

    def __enter__(self) -> Self:
        self.thread.start()
        self.watchdog.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    def stop(self) -> None:
        self.watchdog.cancel()
        self.server.shutdown()
        self.server.server_close()
