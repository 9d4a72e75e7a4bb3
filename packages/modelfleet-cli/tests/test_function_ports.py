"""The loopback port a started function gets is its own: held from the pick until the function
listens, so no other pick takes it meanwhile, and gRPC (which binds with SO_REUSEPORT and so
would share a port with another server silently) can still bind it."""

import socket
import sys
from concurrent import futures

import grpc
import pytest
from modelfleet_cli.functions import LoopbackPort

linux_only = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="the port is held on Linux only"
)


def test_two_grpc_servers_share_a_port_silently_which_is_why_ports_are_held():
    first = grpc.server(futures.ThreadPoolExecutor(max_workers=1))
    second = grpc.server(futures.ThreadPoolExecutor(max_workers=1))
    try:
        port = first.add_insecure_port("127.0.0.1:0")
        first.start()
        assert second.add_insecure_port(f"127.0.0.1:{port}") == port
    finally:
        first.stop(None)
        second.stop(None)


@linux_only
def test_a_held_port_is_refused_to_any_other_bind():
    port = LoopbackPort()
    try:
        with socket.socket() as probe, pytest.raises(OSError):
            probe.bind(("127.0.0.1", port.port))  # what a free-port pick's bind meets
    finally:
        port.release()
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", port.port))  # released: free again


@linux_only
def test_a_grpc_server_binds_a_held_port_and_answers_there():
    port = LoopbackPort()
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=1))
    try:
        assert server.add_insecure_port(port.address) == port.port
        server.start()
        with grpc.insecure_channel(port.address) as channel:
            grpc.channel_ready_future(channel).result(timeout=60)
    finally:
        port.release()
        server.stop(None)
