"""Checking a gRPC address's port before anything binds or dials it. gRPC takes a port past
65535 modulo 65536 (`--address 127.0.0.1:99999` served on 34463), so the serving console
script and `modelfleet render`'s Development targets refuse it instead."""

HIGHEST_PORT = 65535
# gRPC target schemes whose rest is HOST:PORT (unix sockets have no port).
_SCHEMES = ("dns:///", "dns:", "ipv4:", "ipv6:")


def port_problem(address: str, lowest: int = 1) -> str | None:
    """Why `address` (HOST:PORT, [IPv6]:PORT or a gRPC target such as dns:///host:port) has
    no usable port; None when its port is a number from `lowest` to 65535 or it names none.
    A server may bind port 0 (any free port): it passes `lowest=0`."""
    if address.startswith(("unix:", "unix-abstract:")):
        return None
    rest = address
    for scheme in _SCHEMES:
        if rest.startswith(scheme):
            rest = rest.removeprefix(scheme)
            break
    host, colon, port = rest.rpartition(":")
    if not colon or (":" in host and not host.startswith("[")):
        return None  # no port, or a bare IPv6 address
    if not port.isdigit() or not lowest <= int(port) <= HIGHEST_PORT:
        return f"{address}: port {port!r} is not a number from {lowest} to {HIGHEST_PORT}"
    return None
