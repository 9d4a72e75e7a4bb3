"""Running the real functions on loopback and calling them over gRPC.

Each function is started from its console script (`compose-model-cache --insecure --address
127.0.0.1:PORT`), exactly as a container's entrypoint would run it, or dialled at the address
a Function's `render.crossplane.io/runtime-development-target` annotation names (a function
you run yourself, as `crossplane render` does with the Development runtime).
"""

import contextlib
import shutil
import socket
import sys
import tempfile
import time
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

import grpc
from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from crossplane.function.proto.v1 import run_function_pb2_grpc as grpcv1
from modelfleet_contracts.addresses import port_problem
from modelfleet_contracts.fields import mapping_at

from modelfleet_cli.launch import Launched

# A 1000-cluster fleet's requests are larger than gRPC's 4 MiB default.
MAX_MESSAGE = 64 * 1024 * 1024
CHANNEL_OPTIONS = [
    ("grpc.max_send_message_length", MAX_MESSAGE),
    ("grpc.max_receive_message_length", MAX_MESSAGE),
    # While a function starts, a connection attempt is refused and gRPC backs off
    # exponentially: without a cap a slow start (a loaded machine) would be seen up to ~60 %
    # late, past the startup timeout. On loopback, retrying every second at most is cheap.
    ("grpc.initial_reconnect_backoff_ms", 100),
    ("grpc.max_reconnect_backoff_ms", 1000),
]
RUNTIME = "render.crossplane.io/runtime"
DEVELOPMENT_TARGET = "render.crossplane.io/runtime-development-target"
DEFAULT_DEVELOPMENT_TARGET = "localhost:9443"  # crossplane render's default
CALL_TIMEOUT_SECONDS = 60
# A function we start may take a while to import; one the user runs (the Development runtime)
# is up already or not at all, so it gets a few seconds, not a minute of silence.
STARTUP_TIMEOUT_SECONDS = 60
DEVELOPMENT_TIMEOUT_SECONDS = 5


class FunctionError(RuntimeError):
    """A function could not be started, reached or called."""


class LoopbackPort:
    """A loopback port for a function server we start, held until the server listens on it
    (`release` then). gRPC binds with SO_REUSEPORT, so two servers given the same port share
    it silently and answer each other's calls: a port merely probed free and closed can be
    handed out twice. On Linux the held socket has SO_REUSEPORT and never listens: the server
    can bind the port, no other free-port pick (here or in another process) gets it.
    Elsewhere the port is released at once, a plain probe.

    `ports`: where the port may be (a machine where ports are managed); the first one that
    no socket is bound to, checked by binding without SO_REUSEPORT first. Else any free
    port the kernel picks."""

    def __init__(self, ports: range | None = None) -> None:
        held = sys.platform.startswith("linux")
        self._socket = _bound(0, held) if ports is None else _first_free(ports, held)
        self.port = int(self._socket.getsockname()[1])
        self.address = f"127.0.0.1:{self.port}"
        if not held:
            self.release()

    def release(self) -> None:
        self._socket.close()


class NoFreePort(OSError):
    """Every port of a given range is taken."""


def _bound(port: int, reuse: bool) -> socket.socket:
    sock = socket.socket()
    try:
        if reuse:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
        sock.bind(("127.0.0.1", port))
    except OSError:
        sock.close()
        raise
    return sock


def _first_free(ports: range, held: bool) -> socket.socket:
    for port in ports:
        try:
            _bound(port, reuse=False).close()  # nobody has it, not even a SO_REUSEPORT server
            return _bound(port, reuse=held)
        except OSError:
            continue
    raise NoFreePort(f"no free loopback port in {port_range_text(ports)}")


def port_range_text(ports: range) -> str:
    """`40000-40009`: how a range of ports is written on the command line."""
    return f"{ports.start}-{ports.stop - 1}"


def parse_port_range(text: str) -> range:
    """`FROM-TO` (both included, 1 to 65535), or a single port; ValueError says what is wrong."""
    first, sep, last = text.partition("-")
    try:
        low, high = int(first), int(last) if sep else int(first)
    except ValueError:
        raise ValueError(f"{text!r}: write FROM-TO, e.g. 40000-40009") from None
    if not 1 <= low <= high <= 65535:
        raise ValueError(f"{text!r}: ports go from 1 to 65535, FROM first")
    return range(low, high + 1)


def console_script(name: str) -> str:
    """The function's console script: beside this interpreter (the workspace venv) first,
    then on PATH."""
    beside = Path(sys.executable).parent / name
    found = str(beside) if beside.exists() else shutil.which(name)
    if not found:
        raise FunctionError(f"function {name!r} is not installed here (no console script {name})")
    return found


class _Started:
    """A function process we started (launch.py), its log in a folder of its own."""

    def __init__(self, name: str, port: LoopbackPort) -> None:
        self.port = port  # released once the function listens, or when it is stopped
        self._folder = Path(tempfile.mkdtemp(prefix=f"modelfleet-{name}-"))
        self.process = Launched.start(
            name,
            [console_script(name), "--insecure", "--address", port.address],
            self._folder / "output.log",
        )

    def exit_code(self) -> int | None:
        return self.process.popen.poll()

    def output_tail(self) -> str:
        return self.process.tail()[-2000:].strip()

    def stop(self) -> None:
        self.port.release()
        self.process.stop()
        shutil.rmtree(self._folder, ignore_errors=True)


class FunctionServers:
    """The functions a pipeline needs: started on demand (or dialled at a given target),
    called by name, and stopped on `close`. Usable as a pipeline `Caller`. `ports`: the
    loopback ports those we start may listen on (default: any free one)."""

    def __init__(
        self,
        targets: Mapping[str, str] | None = None,
        startup_timeout: float = STARTUP_TIMEOUT_SECONDS,
        development_timeout: float = DEVELOPMENT_TIMEOUT_SECONDS,
        ports: range | None = None,
    ) -> None:
        self._targets = dict(targets or {})
        self._ports = ports
        self._started: dict[str, _Started] = {}
        self._stubs: dict[str, grpcv1.FunctionRunnerServiceStub] = {}
        self._channels: list[grpc.Channel] = []
        self._timeout = startup_timeout
        self._development_timeout = development_timeout

    def start(self, names: Iterable[str]) -> None:
        """Start every named function that has no target yet (in parallel), and wait until
        each of them (and each given target) answers."""
        for name in names:
            if name in self._targets:
                continue
            try:
                port = LoopbackPort(self._ports)
            except NoFreePort as exc:
                raise FunctionError(
                    f"function {name}: {exc} (each function started needs one)"
                ) from None
            self._started[name] = _Started(name, port)
            self._targets[name] = port.address
        for name in names:
            if name not in self._stubs:
                self._connect(name)

    def target(self, name: str) -> str:
        """The address the named function is (or will be) dialled at."""
        return self._targets[name]

    def _connect(self, name: str) -> None:
        target = self._targets[name]
        started = self._started.get(name)
        channel = grpc.insecure_channel(target, options=CHANNEL_OPTIONS)
        ready = grpc.channel_ready_future(channel)
        timeout = self._timeout if started is not None else self._development_timeout
        deadline = time.monotonic() + timeout
        while True:
            try:
                ready.result(timeout=0.2)
                break
            except grpc.FutureTimeoutError:
                exited = started is not None and started.exit_code() is not None
                if exited or time.monotonic() > deadline:
                    ready.cancel()
                    channel.close()
                    raise FunctionError(self._startup_failure(name, target, started)) from None
        if started is not None:
            started.port.release()  # it listens: the port is its own now
        self._channels.append(channel)
        self._stubs[name] = grpcv1.FunctionRunnerServiceStub(channel)

    def _startup_failure(self, name: str, target: str, started: _Started | None) -> str:
        if started is None:
            return f"function {name}: nothing answers at {target} (is it running?)"
        code = started.exit_code()
        tail = started.output_tail()
        how = f"exited with code {code}" if code is not None else "did not start in time"
        return f"function {name} {how} (address {target})" + (f": {tail}" if tail else "")

    def __call__(self, name: str, req: fnv1.RunFunctionRequest) -> fnv1.RunFunctionResponse:
        if name not in self._stubs:
            self.start([name])
        try:
            rsp: fnv1.RunFunctionResponse = self._stubs[name].RunFunction(
                req, timeout=CALL_TIMEOUT_SECONDS
            )
        except grpc.RpcError as exc:
            code = exc.code().name if hasattr(exc, "code") else "UNKNOWN"
            details = exc.details() if hasattr(exc, "details") else str(exc)
            raise FunctionError(f"calling function {name}: {code}: {details}") from exc
        return rsp

    call = __call__

    def close(self) -> None:
        for channel in self._channels:
            channel.close()
        for started in self._started.values():
            started.stop()
        self._channels.clear()
        self._stubs.clear()
        self._started.clear()


@contextlib.contextmanager
def running_functions(
    targets: Mapping[str, str] | None = None,
    start: Iterable[str] = (),
    ports: range | None = None,
) -> Iterator[FunctionServers]:
    """Function servers for the duration of a `with` block; `start` names those to start
    (and wait for) up front, the others start on their first call, on `ports` if given."""
    servers = FunctionServers(targets, ports=ports)
    try:
        servers.start(list(start))
        yield servers
    finally:
        servers.close()


def development_targets(functions: Iterable[Mapping[str, Any]]) -> dict[str, str]:
    """Function name -> address, for Functions annotated with the Development runtime (at
    their target annotation, else crossplane render's default localhost:9443). Other
    Functions are started from their console scripts."""
    targets = {}
    for fn in functions:
        metadata = mapping_at(fn, "metadata")
        annotations = mapping_at(metadata, "annotations")
        if annotations.get(RUNTIME) != "Development":
            continue
        target = annotations.get(DEVELOPMENT_TARGET)
        address = target if isinstance(target, str) and target else DEFAULT_DEVELOPMENT_TARGET
        problem = port_problem(address)
        if problem is not None:
            raise FunctionError(
                f"function {metadata.get('name', '')}: {DEVELOPMENT_TARGET} {problem}"
            )
        targets[str(metadata.get("name", ""))] = address
    return targets
