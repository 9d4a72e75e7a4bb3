"""The e2e suite's TCP forwarder (modelfleet_devtools.e2e.forward): what a node's stop leaves."""

from __future__ import annotations

import socket
import threading

from modelfleet_devtools.e2e.forward import Forwarder
from modelfleet_devtools.e2e.processes import free_port


def _echo_server() -> tuple[socket.socket, int]:
    server = socket.create_server(("127.0.0.1", 0))

    def serve() -> None:
        with server:
            client, _ = server.accept()
            with client:
                client.sendall(client.recv(1024))

    threading.Thread(target=serve, daemon=True).start()
    return server, server.getsockname()[1]


def test_a_stopped_forwarder_frees_its_address_for_the_next_node() -> None:
    """A node stopped and another started on the same veth address in one session (one
    module's node after another's): the second forwarder binds where the first listened."""
    port = free_port()
    first = Forwarder(("127.0.0.1", port), ("127.0.0.1", 9)).start()
    first.stop()
    second = Forwarder(("127.0.0.1", port), ("127.0.0.1", 9)).start()
    second.stop()


def test_a_forwarder_carries_bytes_both_ways() -> None:
    _, target = _echo_server()
    forwarder = Forwarder(("127.0.0.1", free_port()), ("127.0.0.1", target)).start()
    try:
        with socket.create_connection(forwarder.listen, timeout=10) as client:
            client.sendall(b"ping")
            assert client.recv(1024) == b"ping"
    finally:
        forwarder.stop()
