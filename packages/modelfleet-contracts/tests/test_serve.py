"""Every function's console script: the SDK's flags with our 64 MiB default, and a clean
shutdown on SIGTERM and SIGINT (exit 0, calls in flight finished, nothing but logs)."""

import json
import signal
import subprocess
import sys
import threading
from pathlib import Path

import grpc
import pytest
from click.testing import CliRunner
from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from crossplane.function.proto.v1 import run_function_pb2_grpc as grpcv1
from modelfleet_cli.functions import STARTUP_TIMEOUT_SECONDS, LoopbackPort
from modelfleet_contracts.edge.serve import DEFAULT_MAX_MESSAGE_MIB, function_cli

SCRIPTS = [
    "compose-inference-cluster",
    "compose-model-cache",
    "compose-model-deployment",
    "compose-model-replica",
    "compose-model-service",
]
# What the SDK's loop left on stderr at shutdown, and what a crash leaves.
NOISE = ("destroyed", "never awaited", "Traceback", "Exception")

# A function whose every call takes a while: the call is in flight when the signal arrives.
SLOW_FUNCTION = """
import asyncio, sys
from modelfleet_contracts.edge.serve import function_cli

class Slow:
    async def RunFunction(self, req, context):
        print("call started", flush=True)
        await asyncio.sleep(1.5)
        from crossplane.function.proto.v1 import run_function_pb2 as fnv1
        return fnv1.RunFunctionResponse()

function_cli(lambda: Slow(), "slow")(sys.argv[1:])
"""


def test_the_default_request_limit_is_64_mib_and_help_says_so():
    command = function_cli(lambda: None, "compose-test")  # type: ignore[arg-type,return-value]
    option = next(p for p in command.params if p.name == "max_recv_message_size")
    assert option.default == DEFAULT_MAX_MESSAGE_MIB == 64
    help_text = CliRunner().invoke(command, ["--help"]).output
    assert "[default: 64]" in help_text
    assert "--insecure" in help_text and "--address" in help_text
    # All interfaces by default (the SDK's address), and how to narrow it.
    assert "0.0.0.0:9443" in help_text and "127.0.0.1:PORT" in help_text


def test_serving_without_credentials_or_insecure_is_a_usage_error_not_a_traceback():
    command = function_cli(lambda: None, "compose-test")  # type: ignore[arg-type,return-value]
    result = CliRunner().invoke(command, ["--address", "127.0.0.1:0"])
    assert result.exit_code == 2
    assert "--tls-server-certs-dir" in result.output and "--insecure" in result.output


@pytest.mark.parametrize(
    "address",
    [
        pytest.param("127.0.0.1:99999", id="past 65535 (gRPC would serve on 34463)"),
        pytest.param("127.0.0.1:65536", id="one past the highest port"),
        pytest.param("127.0.0.1:-1", id="negative"),
        pytest.param("127.0.0.1:http", id="not a number"),
        pytest.param("[::1]:70000", id="IPv6 loopback past 65535"),
    ],
)
def test_an_out_of_range_port_is_a_usage_error(address: str) -> None:
    command = function_cli(lambda: None, "compose-test")  # type: ignore[arg-type,return-value]
    result = CliRunner().invoke(command, ["--insecure", "--address", address])
    assert result.exit_code == 2
    assert f"{address}: port" in result.output and "from 0 to 65535" in result.output


def test_an_out_of_range_port_is_refused_by_the_real_console_script() -> None:
    done = subprocess.run(
        [
            str(Path(sys.executable).parent / SCRIPTS[0]),
            "--insecure",
            "--address",
            "127.0.0.1:99999",
        ],
        capture_output=True,
        text=True,
        timeout=STARTUP_TIMEOUT_SECONDS,
    )
    assert done.returncode == 2 and "Serving" not in done.stdout
    assert "127.0.0.1:99999: port '99999' is not a number from 0 to 65535" in done.stderr


def _start(argv: list[str]) -> tuple[subprocess.Popen[str], str]:
    port = LoopbackPort()  # held until the script listens: no other server gets it meanwhile
    address = port.address
    proc = subprocess.Popen(
        [*argv, "--insecure", "--address", address],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        with grpc.insecure_channel(address) as channel:
            grpc.channel_ready_future(channel).result(timeout=STARTUP_TIMEOUT_SECONDS)
    except grpc.FutureTimeoutError:
        proc.kill()
        raise AssertionError(
            f"{argv[-1]} did not listen on {address}: {proc.communicate()}"
        ) from None
    finally:
        port.release()
    return proc, address


def _call(address: str, timeout: float = 20) -> fnv1.RunFunctionResponse:
    with grpc.insecure_channel(address) as channel:
        stub = grpcv1.FunctionRunnerServiceStub(channel)
        return stub.RunFunction(fnv1.RunFunctionRequest(), timeout=timeout)


def _stop(proc: subprocess.Popen[str], sig: signal.Signals) -> tuple[int, str, str]:
    proc.send_signal(sig)
    stdout, stderr = proc.communicate(timeout=20)
    return proc.returncode, stdout, stderr


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
@pytest.mark.parametrize("script", SCRIPTS)
def test_a_function_called_once_then_signalled_exits_0_with_nothing_on_stderr(script, sig):
    executable = Path(sys.executable).parent / script
    proc, address = _start([str(executable)])
    try:
        rsp = _call(address)
        # An empty request is bad input: answered (with a reason), never a crash.
        assert rsp.meta is not None
        _, stdout, stderr = _stop(proc, sig)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, stderr
    assert not [n for n in NOISE if n in stderr], stderr
    logged = [json.loads(line) for line in stdout.splitlines()]
    assert [entry["msg"] for entry in logged] == ["Serving", "Stopped"]
    assert logged[-1]["signal"] == sig.name


def test_a_call_in_flight_when_sigterm_arrives_is_answered_before_the_exit():
    proc, address = _start([sys.executable, "-c", SLOW_FUNCTION])
    answered: list[fnv1.RunFunctionResponse] = []
    failed: list[BaseException] = []

    def call() -> None:
        try:
            answered.append(_call(address))
        except grpc.RpcError as exc:
            failed.append(exc)

    caller = threading.Thread(target=call)
    try:
        caller.start()
        assert proc.stdout is not None
        lines = [proc.stdout.readline(), proc.stdout.readline()]  # "Serving", then the call
        assert "call started" in lines[-1], lines
        proc.send_signal(signal.SIGTERM)
        caller.join(timeout=20)
        _, stderr = proc.communicate(timeout=20)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert failed == [] and len(answered) == 1
    assert proc.returncode == 0, stderr
    assert not [n for n in NOISE if n in stderr], stderr


def test_a_request_answered_before_is_sent_the_same_answer_over_v1_and_v1beta1():
    """compose-model-cache's server replays an answer as it was encoded (replay.Encoded):
    what the client decodes is the answer it decided, on either protocol version."""
    from crossplane.function.proto.v1beta1 import run_function_pb2 as fnv1beta1
    from crossplane.function.proto.v1beta1 import run_function_pb2_grpc as grpcv1beta1
    from modelfleet_devtools.requests import run_function_request

    xr = {"apiVersion": "modelfleet.io/v1alpha1", "kind": "ModelCache"}
    xr |= {"metadata": {"name": "qwen", "namespace": "ml-team"}}
    xr["spec"] = {"huggingFace": {"repo": "Qwen/Qwen3-0.6B"}}
    req = run_function_request(xr, tag="replayed")
    executable = Path(sys.executable).parent / "compose-model-cache"
    proc, address = _start([str(executable), "--debug"])
    try:
        with grpc.insecure_channel(address) as channel:
            stub = grpcv1.FunctionRunnerServiceStub(channel)
            decided, replayed = (stub.RunFunction(req, timeout=20) for _ in range(2))
            beta = grpcv1beta1.FunctionRunnerServiceStub(channel).RunFunction(
                fnv1beta1.RunFunctionRequest.FromString(req.SerializeToString()), timeout=20
            )
        _, stdout, stderr = _stop(proc, signal.SIGTERM)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert not [n for n in NOISE if n in stderr], stderr
    # --debug logs each call (in the console format): decided and kept, then replayed twice.
    calls = [line for line in stdout.splitlines() if "RunFunction" in line]
    assert ["replayed" in line for line in calls] == [False, True, True], stdout
    assert "decided, kept" in calls[0]
    assert decided.meta.tag == "replayed" and replayed == decided
    assert fnv1.RunFunctionResponse.FromString(beta.SerializeToString()) == decided
