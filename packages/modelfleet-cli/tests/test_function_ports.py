"""The loopback port a started function gets is its own: held from the pick until the function
listens, so no other pick takes it meanwhile, and gRPC (which binds with SO_REUSEPORT and so
would share a port with another server silently) can still bind it."""

import socket
import sys
from concurrent import futures
from pathlib import Path

import grpc
import pytest
from click.testing import CliRunner
from modelfleet_cli.exit_codes import ExitCode
from modelfleet_cli.functions import LoopbackPort, parse_port_range, running_functions
from modelfleet_cli.main import main

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


def free_block(size: int) -> range:
    """`size` consecutive loopback ports nobody is bound to now."""
    for start in range(41000, 60000, 97):
        block = range(start, start + size)
        try:
            socks = [socket.create_server(("127.0.0.1", p)) for p in block]
        except OSError:
            continue
        for s in socks:
            s.close()
        return block
    raise AssertionError("no free block of loopback ports")


@linux_only
def test_ports_of_a_range_are_picked_in_order_skipping_a_taken_one():
    block = free_block(4)
    with socket.create_server(("127.0.0.1", block[0])):  # someone else's server
        first = LoopbackPort(block)
        second = LoopbackPort(block)
        try:
            assert (first.port, second.port) == (block[1], block[2])
        finally:
            first.release()
            second.release()


def test_a_range_with_no_free_port_says_so():
    block = free_block(1)
    taken = socket.create_server(("127.0.0.1", block[0]))
    with taken, pytest.raises(OSError, match=f"no free loopback port in {block[0]}-{block[0]}"):
        LoopbackPort(block)


@pytest.mark.parametrize(
    ("text", "ports"),
    [("40000-40009", range(40000, 40010)), ("40000", range(40000, 40001))],
)
def test_a_port_range_is_written_from_to(text, ports):
    assert parse_port_range(text) == ports


@pytest.mark.parametrize("text", ["40009-40000", "0-10", "40000-70000", "a-b", "40000-"])
def test_render_and_simulate_refuse_a_bad_range_as_a_usage_error(text):
    for command in (["render", "x.yaml"], ["simulate", "x"]):
        outcome = CliRunner().invoke(main, [*command, "--function-ports", text])
        assert outcome.exit_code == ExitCode.USAGE, outcome.output
        assert "--function-ports" in outcome.output


def test_started_functions_listen_in_the_range():
    block = free_block(3)
    names = ["compose-inference-cluster", "compose-model-cache"]
    with running_functions(start=names, ports=block) as servers:
        assert {int(servers.target(n).rpartition(":")[2]) for n in names} <= set(block)


def test_render_and_simulate_say_which_function_found_no_port(tmp_path):
    block = free_block(1)
    quickstart = Path(__file__).resolve().parents[3] / "examples" / "quickstart"
    with socket.create_server(("127.0.0.1", block[0])):
        ports = f"{block[0]}-{block[0]}"
        rendered = CliRunner().invoke(
            main, ["render", str(quickstart / "modelcache.yaml"), "--function-ports", ports]
        )
        simulated = CliRunner().invoke(
            main, ["simulate", str(quickstart), "--quiet", "--function-ports", ports]
        )
    for outcome in (rendered, simulated):
        assert outcome.exit_code == ExitCode.INPUT_ERROR
        assert f"no free loopback port in {ports}" in outcome.stderr
