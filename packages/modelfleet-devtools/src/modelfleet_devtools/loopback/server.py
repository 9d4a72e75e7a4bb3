"""What the fake Hub and the hydrator tests' fake API server share: an HTTP server on
127.0.0.1 only, on a free port, in a daemon thread, that shuts itself down after `lifetime`
seconds even if a test forgets to; and the request handler the fakes share
(`handler_for`)."""

import threading
from collections.abc import Callable, Iterable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any, Self

Dispatch = Callable[[BaseHTTPRequestHandler], None]


def handler_for(dispatch: Dispatch, methods: Iterable[str]) -> type[BaseHTTPRequestHandler]:
    """A handler that hands every request of `methods` ("GET", "HEAD", ...) to `dispatch`
    (the request's method is `h.command`): HTTP/1.1 keep-alive, a client silent for 30 s
    let go (it cannot hold a thread forever), nothing logged on stderr."""

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        timeout = 30

        def log_message(self, format: str, *args: Any) -> None:
            pass

    def serve(h: BaseHTTPRequestHandler) -> None:
        dispatch(h)

    for method in methods:
        setattr(Handler, f"do_{method}", serve)
    return Handler


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
