"""A gRPC address's port is checked before anything binds or dials it."""

import pytest
from modelfleet_contracts.addresses import port_problem


@pytest.mark.parametrize(
    ("address", "lowest", "refused"),
    [
        pytest.param("127.0.0.1:9443", 1, False, id="a usual port"),
        pytest.param("localhost:65535", 1, False, id="the highest port"),
        pytest.param("127.0.0.1:0", 0, False, id="port 0 for a server (any free port)"),
        pytest.param("127.0.0.1:0", 1, True, id="port 0 to dial"),
        pytest.param("127.0.0.1:99999", 1, True, id="past 65535"),
        pytest.param("dns:///example.org:70000", 1, True, id="a gRPC dns target past 65535"),
        pytest.param("dns:///example.org:7443", 1, False, id="a gRPC dns target"),
        pytest.param("[::1]:9443", 1, False, id="IPv6 loopback"),
        pytest.param("[::1]:99999", 1, True, id="IPv6 loopback past 65535"),
        pytest.param("unix:/tmp/fn.sock", 1, False, id="a unix socket has no port"),
        pytest.param("example.org", 1, False, id="no port (gRPC's default)"),
        pytest.param("127.0.0.1:", 1, True, id="an empty port"),
    ],
)
def test_ports_outside_the_range_are_refused(address: str, lowest: int, refused: bool) -> None:
    problem = port_problem(address, lowest=lowest)
    assert (problem is not None) == refused, problem
    if refused:
        assert problem is not None and problem.startswith(f"{address}: port ")
