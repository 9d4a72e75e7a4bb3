"""The console-script entry point every function shares: the SDK's standard flags, with a
request size limit large enough for a 1000-cluster fleet."""

from collections.abc import Callable

import click
from crossplane.function import cli as sdkcli
from crossplane.function.proto.v1 import run_function_pb2_grpc as grpcv1

# A 1000-cluster request (every Object echoing its manifest) is over gRPC's default 4 MiB.
DEFAULT_MAX_MESSAGE_MIB = 64


def function_cli(
    make_runner: Callable[[], grpcv1.FunctionRunnerServiceServicer], name: str
) -> click.Command:
    """A click command serving the runner with the SDK's standard flags
    (`--insecure`, `--address`, `--debug`, `--tls-server-certs-dir`, message sizes)."""

    @click.command(name=name, help=f"Serve the {name} composition function over gRPC.")
    @sdkcli.standard_options
    @click.pass_context
    def command(ctx: click.Context, **kwargs: object) -> None:
        source = ctx.get_parameter_source("max_recv_message_size")
        if source is click.core.ParameterSource.DEFAULT:
            kwargs["max_recv_message_size"] = DEFAULT_MAX_MESSAGE_MIB
        sdkcli.run(make_runner(), **kwargs)  # type: ignore[arg-type]

    return command
