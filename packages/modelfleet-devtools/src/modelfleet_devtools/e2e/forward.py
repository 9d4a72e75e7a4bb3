"""A TCP forwarder: a loopback service (the registry, the Hub) offered on another address.

A node in its network namespace cannot reach the host's loopback. The suite's services stay
on loopback; a forwarder on the host end of the node's veth pair carries the node's
connections to them, byte for byte, as a network path to a mirror would.
"""

from __future__ import annotations

import contextlib
import socket
import threading
from dataclasses import dataclass, field


def _pipe(source: socket.socket, sink: socket.socket) -> None:
    with contextlib.suppress(OSError):
        while data := source.recv(1 << 16):
            sink.sendall(data)
    with contextlib.suppress(OSError):
        sink.shutdown(socket.SHUT_WR)


@dataclass
class Forwarder:
    """Accepts on `listen` (host, port) and connects each connection to `target`."""

    listen: tuple[str, int]
    target: tuple[str, int]
    _server: socket.socket | None = None
    _open: set[socket.socket] = field(default_factory=set)

    @property
    def address(self) -> str:
        return f"{self.listen[0]}:{self.listen[1]}"

    def start(self) -> Forwarder:
        server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        server.bind(self.listen)
        server.listen(64)
        self._server = server
        threading.Thread(target=self._accept, name=f"forward {self.address}", daemon=True).start()
        return self

    def _accept(self) -> None:
        assert self._server is not None
        while True:
            try:
                client, _ = self._server.accept()
            except OSError:
                return  # closed by stop()
            try:
                upstream = socket.create_connection(self.target, timeout=10)
            except OSError:
                client.close()
                continue
            upstream.settimeout(None)
            self._open.update((client, upstream))
            for a, b in ((client, upstream), (upstream, client)):
                threading.Thread(target=_pipe, args=(a, b), daemon=True).start()

    def stop(self) -> None:
        if self._server is not None:
            # close() alone leaves the socket listening while the accept thread is blocked in
            # it, so the next node on the same address could not bind; shutdown wakes it.
            with contextlib.suppress(OSError):
                self._server.shutdown(socket.SHUT_RDWR)
            self._server.close()
        for sock in list(self._open):
            with contextlib.suppress(OSError):
                sock.close()
        self._open.clear()


def forward(host: str, target_port: int) -> Forwarder:
    """Offer 127.0.0.1:`target_port` on `host`, at the same port number."""
    return Forwarder((host, target_port), ("127.0.0.1", target_port)).start()


def _address(text: str) -> tuple[str, int]:
    host, _, port = text.rpartition(":")
    return host, int(port)


def main(argv: list[str] | None = None) -> None:
    """`python -m modelfleet_devtools.e2e.forward LISTEN TARGET`: forward until killed, as a
    process of its own (one started inside a node's network namespace offers the host's
    loopback registry on the node's own loopback, where Crossplane speaks plain HTTP)."""
    import sys
    import time

    listen, target = (argv if argv is not None else sys.argv[1:])[:2]
    Forwarder(_address(listen), _address(target)).start()
    while True:
        time.sleep(3600)


if __name__ == "__main__":
    main()
