"""The console-script entry point every function shares: the SDK's standard flags, with a
request size limit large enough for a 1000-cluster fleet, and a serve loop that shuts down
cleanly on SIGTERM (what Kubernetes sends) and SIGINT (Ctrl-C).

This loop owns its event loop: a signal stops accepting new calls, lets the calls in flight
finish within a grace period, and returns, so the process exits 0 with nothing on stderr.
(The SDK's own loop, `crossplane.function.runtime.serve`, schedules the server's stop from
its SIGTERM handler as a task nothing awaits and leaves SIGINT to KeyboardInterrupt: it
prints "Task was destroyed but it is pending!" and exits 143.)
"""

import asyncio
import signal
from collections.abc import Callable, Sequence
from typing import Any

import click
import grpc
from crossplane.function import cli as sdkcli
from crossplane.function import logging as sdklogging
from crossplane.function import runtime
from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from crossplane.function.proto.v1 import run_function_pb2_grpc as grpcv1
from crossplane.function.proto.v1beta1 import run_function_pb2_grpc as grpcv1beta1
from grpc_reflection.v1alpha import reflection

from modelfleet_contracts.addresses import port_problem
from modelfleet_contracts.edge.replay import Encoded
from modelfleet_contracts.edge.runner import SafeRunner

# A 1000-cluster request (every Object echoing its manifest) is over gRPC's default 4 MiB.
DEFAULT_MAX_MESSAGE_MIB = 64

# How long calls in flight may run on after SIGTERM/SIGINT (the SDK's figure; well inside
# Kubernetes' default 30 s termination grace period).
SHUTDOWN_GRACE_SECONDS = runtime.SHUTDOWN_GRACE_PERIOD_SECONDS

STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT)


def _encode(rsp: fnv1.RunFunctionResponse | Encoded) -> bytes:
    return rsp.SerializeToString()


def _add_runner(runner: grpcv1.FunctionRunnerServiceServicer, server: grpc.aio.Server) -> None:
    """Serve `runner` as the SDK's generated v1 registration does, but for the response
    serializer: a replayed answer comes already encoded (replay.Encoded)."""
    service = fnv1.DESCRIPTOR.services_by_name["FunctionRunnerService"].full_name
    handlers = {
        "RunFunction": grpc.unary_unary_rpc_method_handler(
            runner.RunFunction,
            request_deserializer=fnv1.RunFunctionRequest.FromString,
            response_serializer=_encode,
        )
    }
    server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(service, handlers),))
    server.add_registered_method_handlers(service, handlers)


def build_server(
    runner: grpcv1.FunctionRunnerServiceServicer,
    address: str,
    *,
    credentials: grpc.ServerCredentials | None,
    insecure: bool,
    options: Sequence[tuple[str, Any]],
) -> grpc.aio.Server:
    """A server for `runner` (v1 and v1beta1 with reflection, as the SDK serves), bound to
    `address`; insecure wins over credentials, as in the SDK."""
    server = grpc.aio.server(options=options)
    _add_runner(runner, server)
    grpcv1beta1.add_FunctionRunnerServiceServicer_to_server(
        runtime.BetaFunctionRunner(wrapped=runner), server
    )
    reflection.enable_server_reflection(runtime.SERVICE_NAMES, server)
    if insecure:
        server.add_insecure_port(address)
    elif credentials is not None:
        server.add_secure_port(address, credentials)
    else:
        raise click.UsageError("give --tls-server-certs-dir, or --insecure to serve without mTLS")
    return server


async def serve_until_signalled(
    server: grpc.aio.Server,
    *,
    grace: float = SHUTDOWN_GRACE_SECONDS,
    started: Callable[[], None] | None = None,
) -> signal.Signals:
    """Serve until SIGTERM or SIGINT, then stop: new calls are refused at once, calls in
    flight get `grace` seconds. Returns the signal that stopped it."""
    loop = asyncio.get_running_loop()
    received: asyncio.Future[signal.Signals] = loop.create_future()

    def on_signal(sig: signal.Signals) -> None:
        if not received.done():
            received.set_result(sig)

    for sig in STOP_SIGNALS:
        loop.add_signal_handler(sig, on_signal, sig)
    try:
        await server.start()
        if started is not None:
            started()
        sig = await received
        await server.stop(grace)
        return sig
    finally:
        for sig in STOP_SIGNALS:
            loop.remove_signal_handler(sig)


def run(
    runner: grpcv1.FunctionRunnerServiceServicer,
    *,
    debug: bool,
    address: str,
    tls_certs_dir: str | None,
    insecure: bool,
    max_recv_message_size: int,
    max_send_message_size: int | None,
) -> None:
    """What `crossplane.function.cli.run` does, with our serve loop."""
    sdklogging.configure(level=sdklogging.Level.DEBUG if debug else sdklogging.Level.INFO)
    log = sdklogging.get_logger()
    if isinstance(runner, SafeRunner):
        runner.log_calls = debug
    send = max_recv_message_size if max_send_message_size is None else max_send_message_size
    options = [
        ("grpc.max_receive_message_length", max_recv_message_size * 1024 * 1024),
        ("grpc.max_send_message_length", send * 1024 * 1024),
    ]

    if not insecure and not tls_certs_dir:
        raise click.UsageError("give --tls-server-certs-dir, or --insecure to serve without mTLS")
    try:
        credentials = None if insecure else runtime.load_credentials(tls_certs_dir)  # type: ignore[arg-type]
    except OSError as exc:
        raise click.UsageError(f"--tls-server-certs-dir: {exc}") from None

    async def main() -> None:
        # The server is built inside the running loop: grpc.aio binds to the current loop.
        server = build_server(
            runner, address, credentials=credentials, insecure=insecure, options=options
        )
        sig = await serve_until_signalled(
            server, started=lambda: log.info("Serving", address=address, insecure=insecure)
        )
        log.info("Stopped", signal=sig.name, grace_seconds=SHUTDOWN_GRACE_SECONDS)

    asyncio.run(main())


def _checked_address(_ctx: click.Context, _param: click.Parameter, value: str) -> str:
    """Refuse a port gRPC would silently wrap (a usage error, exit 2); 0 binds any free port."""
    problem = port_problem(value, lowest=0)
    if problem is not None:
        raise click.BadParameter(problem)
    return value


def function_cli(
    make_runner: Callable[[], grpcv1.FunctionRunnerServiceServicer], name: str
) -> click.Command:
    """A click command serving the runner with the SDK's standard flags
    (`--insecure`, `--address`, `--debug`, `--tls-server-certs-dir`, message sizes)."""

    @click.command(name=name, help=f"Serve the {name} composition function over gRPC.")
    @sdkcli.standard_options
    def command(**kwargs: Any) -> None:
        run(make_runner(), **kwargs)

    # Raise the SDK's default (4 MiB) where the option is declared, so `--help` tells the truth
    # and the flag and its environment variable still override it.
    for param in command.params:
        if param.name == "max_recv_message_size":
            param.default = DEFAULT_MAX_MESSAGE_MIB
        if param.name == "address":
            # The SDK's default, 0.0.0.0:9443, is every interface (what a Pod needs).
            param.help = (
                "Address at which to listen for gRPC connections; the default is every "
                "interface: give 127.0.0.1:PORT to listen on loopback only."
            )
            param.callback = _checked_address
    return command
