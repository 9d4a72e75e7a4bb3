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
    def command(**kwargs: object) -> None:
        sdkcli.run(make_runner(), **kwargs)  # type: ignore[arg-type]

    # Raise the SDK's default (4 MiB) where the option is declared, so `--help` tells the truth
    # and the flag and its environment variable still override it.
    for param in command.params:
        if param.name == "max_recv_message_size":
            param.default = DEFAULT_MAX_MESSAGE_MIB
    return command
