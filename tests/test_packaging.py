"""Packaging: every function ships as an xpkg (package/crossplane.yaml) with an image whose
entrypoint is its console script, and that script serves gRPC the way Crossplane calls it,
including requests larger than gRPC's default 4 MiB.

There is no container engine here, so the Dockerfile is checked as text (pinned bases,
locked install of this function, non-root, the console script as entrypoint); its guard and
the console script itself are run for real. All four functions share one Dockerfile
(functions/Dockerfile, `ARG FUNCTION`); each function directory links to it.
"""

import re
import shlex
import subprocess
import sys
import time
import tomllib
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest
import yaml
from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from crossplane.function.proto.v1 import run_function_pb2_grpc as grpcv1
from modelfleet_cli.functions import LoopbackPort

ROOT = Path(__file__).resolve().parents[1]
FUNCTIONS = sorted(
    p.name for p in (ROOT / "functions").iterdir() if (p / "pyproject.toml").exists()
)
MIB = 1024 * 1024
START_TIMEOUT_S = 60


def console_scripts(function: str) -> dict[str, str]:
    pyproject = tomllib.loads((ROOT / "functions" / function / "pyproject.toml").read_text())
    return dict(pyproject["project"].get("scripts", {}))


def dockerfile_instructions(function: str | None) -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) pairs, continuation lines joined, comments dropped, of the
    Dockerfile as built for `function` (`--build-arg FUNCTION=function`; None: not set)."""
    text = (ROOT / "functions" / (function or "") / "Dockerfile").read_text()
    if function is not None:
        text = re.sub(r"\$\{?FUNCTION\}?", function, text)
    joined = re.sub(r"\\\n", " ", text)
    out = []
    for line in joined.splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            word, _, rest = line.partition(" ")
            out.append((word.upper(), rest.strip()))
    return out


def test_there_are_four_functions() -> None:
    assert FUNCTIONS == [
        "compose-inference-cluster",
        "compose-model-cache",
        "compose-model-deployment",
        "compose-model-replica",
    ]


@pytest.mark.parametrize("function", FUNCTIONS)
def test_package_metadata_names_the_function(function: str) -> None:
    meta = yaml.safe_load(
        (ROOT / "functions" / function / "package" / "crossplane.yaml").read_text()
    )
    assert meta["apiVersion"] == "meta.pkg.crossplane.io/v1beta1"
    assert meta["kind"] == "Function"
    assert meta["metadata"]["name"] == function
    annotations = meta["metadata"]["annotations"]
    for key in ("maintainer", "source", "description", "readme"):
        assert annotations.get(f"meta.crossplane.io/{key}"), f"missing meta.crossplane.io/{key}"
    assert meta["spec"]["crossplane"]["version"].startswith(">=v2")


@pytest.mark.parametrize("function", FUNCTIONS)
def test_the_function_installs_a_console_script_named_after_it(function: str) -> None:
    assert function in console_scripts(function)


@pytest.mark.parametrize("function", FUNCTIONS)
def test_each_function_directory_has_a_dockerfile_linking_the_shared_one(function: str) -> None:
    dockerfile = ROOT / "functions" / function / "Dockerfile"
    assert dockerfile.is_symlink()
    assert dockerfile.resolve() == ROOT / "functions" / "Dockerfile"


@pytest.mark.parametrize("function", FUNCTIONS)
def test_dockerfile_entrypoint_is_the_console_script(function: str) -> None:
    instructions = dockerfile_instructions(function)
    entrypoints = [args for word, args in instructions if word == "ENTRYPOINT"]
    assert len(entrypoints) == 1
    [entrypoint] = yaml.safe_load(entrypoints[0])  # exec form, JSON array, no arguments
    # The fixed name the exec form can use is a link, made at build time, to the script.
    script = f"/opt/function/bin/{function}"
    links = [shlex.split(args) for word, args in instructions if word == "RUN" and "ln -s" in args]
    assert [script, entrypoint] in ([w[-2], w[-1]] for w in links), links


def _guard() -> str:
    """The shell text of the build stage's first RUN: the check that FUNCTION is set."""
    return next(args for word, args in dockerfile_instructions(None) if word == "RUN")


def test_a_build_without_function_fails_and_says_how_to_set_it() -> None:
    unset = subprocess.run(["sh", "-c", _guard()], capture_output=True, text=True, env={})
    assert unset.returncode != 0
    assert "--build-arg FUNCTION=" in unset.stderr
    named = subprocess.run(
        ["sh", "-c", _guard()], capture_output=True, env={"FUNCTION": "compose-model-cache"}
    )
    assert named.returncode == 0


def _resolve_args(instructions: list[tuple[str, str]], image: str) -> str:
    defaults = dict(
        args.split("=", 1) for word, args in instructions if word == "ARG" and "=" in args
    )
    return re.sub(r"\$\{(\w+)\}", lambda m: defaults.get(m.group(1), m.group(0)), image)


@pytest.mark.parametrize("function", FUNCTIONS)
def test_dockerfile_base_images_and_tools_are_pinned(function: str) -> None:
    instructions = dockerfile_instructions(function)
    stages = {args.split()[-1] for word, args in instructions if word == "FROM" and " AS " in args}
    bases = [
        _resolve_args(instructions, args.split()[0])
        for word, args in instructions
        if word == "FROM" and args.split()[0] not in stages
    ]
    assert bases
    for image in bases:
        tag = image.partition(":")[2]
        assert "@sha256:" in image or re.match(r"\d+\.\d+\.\d+", tag), f"{image} is not pinned"
        assert "latest" not in tag
    runs = " ".join(args for word, args in instructions if word == "RUN")
    assert re.search(r"\buv==\d+\.\d+\.\d+", runs), "uv must be installed at a pinned version"
    assert "uv sync --frozen" in runs and "--no-dev" in runs
    assert re.search(rf'--package "?{function}"?(\s|$)', runs), (
        "the image must install this function only"
    )


@pytest.mark.parametrize("function", FUNCTIONS)
def test_dockerfile_runs_as_non_root_on_the_function_port(function: str) -> None:
    instructions = dockerfile_instructions(function)
    users = [args for word, args in instructions if word == "USER"]
    assert users and users[-1].split(":")[0] not in ("root", "0")
    assert ("EXPOSE", "9443") in instructions


def test_dockerignore_keeps_local_environments_out_of_the_build_context() -> None:
    ignored = (ROOT / ".dockerignore").read_text().split()
    assert ".venv" in ignored and ".git" in ignored


class Served:
    """A console script running as `uv run <script> --insecure --address 127.0.0.1:PORT`."""

    def __init__(self, script: str) -> None:
        self.script = script
        # Held until the script listens: four servers start at once, each on its own port.
        self.port = LoopbackPort()
        self.address = self.port.address
        # The command docs/development.md gives for serving a function; --frozen so that
        # running tests never rewrites uv.lock.
        self.command = ["uv", "run", "--frozen", script, "--insecure", "--address", self.address]
        self.process = subprocess.Popen(
            self.command,
            cwd=ROOT,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )

    def channel(self) -> grpc.Channel:
        """A channel with gRPC's default limits, like Crossplane's client: it sends any size
        and refuses responses over 4 MiB."""
        channel = grpc.insecure_channel(self.address)
        try:
            grpc.channel_ready_future(channel).result(timeout=START_TIMEOUT_S)
            self.port.release()  # it listens: the port is its own now
        except grpc.FutureTimeoutError:
            self.stop()
            raise AssertionError(
                f"`{shlex.join(self.command)}` did not serve within {START_TIMEOUT_S}s: "
                f"{self.process.stderr.read() if self.process.stderr else ''}"
            ) from None
        return channel

    def stop(self) -> None:
        self.port.release()
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


@pytest.fixture(scope="module")
def served() -> Iterator[dict[str, Served]]:
    """All four console scripts, started at once so they boot in parallel."""
    servers = {function: Served(function) for function in FUNCTIONS}
    try:
        yield servers
    finally:
        for server in servers.values():
            server.stop()


def run_function(channel: grpc.Channel, req: fnv1.RunFunctionRequest) -> fnv1.RunFunctionResponse:
    stub = grpcv1.FunctionRunnerServiceStub(channel)
    return stub.RunFunction(req, timeout=120)


@pytest.mark.parametrize("function", FUNCTIONS)
def test_console_script_serves_run_function(function: str, served: dict[str, Served]) -> None:
    # An XR with an empty spec: every function must answer (a condition saying why), not fail.
    xr = {"apiVersion": "modelfleet.io/v1alpha1", "kind": "X", "metadata": {"name": "probe"}}
    req = fnv1.RunFunctionRequest(meta=fnv1.RequestMeta(tag="probe"))
    req.observed.composite.resource.update(xr)
    with served[function].channel() as channel:
        rsp = run_function(channel, req)
    assert rsp.meta.tag == "probe"
    assert served[function].process.poll() is None


def benchmark_request(function: str, script: str, size: int) -> fnv1.RunFunctionRequest:
    """The request a benchmark script builds at `size`, built in a child process: it runs the
    function in-process at that size, and the session audit (which validates every manifest
    composed in this process) would spend a minute re-validating a thousand clusters."""
    folder = ROOT / "functions" / function / "benchmarks"
    code = (
        f"import sys; sys.path.insert(0, {str(folder)!r}); import {script}; "
        f"sys.stdout.buffer.write({script}.build_request({size}).SerializeToString())"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, check=True)
    return fnv1.RunFunctionRequest.FromString(out.stdout)


def test_a_1000_cluster_request_over_4_mib_is_served_and_answered_under_4_mib(
    served: dict[str, Served],
) -> None:
    req = benchmark_request("compose-model-cache", "bench_cache", 1000)
    assert req.ByteSize() > 4 * MIB, "the scenario must exceed gRPC's default 4 MiB"
    with served["compose-model-cache"].channel() as channel:
        started = time.monotonic()
        rsp = run_function(channel, req)
        elapsed = time.monotonic() - started
    assert rsp.ByteSize() < 4 * MIB
    assert rsp.desired.composite.ready == fnv1.READY_TRUE, [c.message for c in rsp.conditions]
    # One claim per cluster, and each finished Job's Object (watching it, never deleted).
    assert len(rsp.desired.resources) == 2000
    assert elapsed < 120
