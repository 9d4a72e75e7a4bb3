"""Packaging: every function ships as an xpkg (package/crossplane.yaml) with an image whose
entrypoint is its console script, and that script serves gRPC the way Crossplane calls it,
including requests larger than gRPC's default 4 MiB.

The images are built and run for real in tests/test_release_images.py; here the Dockerfile's
definition is checked as text (the release's own base, this function's staged layers,
non-root, the console script as entrypoint) and the console script itself is run. All four
functions share one Dockerfile (functions/Dockerfile, `ARG FUNCTION`); each function directory
links to it.
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
from modelfleet_cli.launch import Launched
from modelfleet_devtools.release.build import FUNCTION_ENTRYPOINT

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


def test_there_are_five_functions() -> None:
    assert FUNCTIONS == [
        "compose-inference-cluster",
        "compose-model-cache",
        "compose-model-deployment",
        "compose-model-replica",
        "compose-model-service",
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
    # Exec form, no arguments: the link the release stages to bin/<function>.
    assert yaml.safe_load(entrypoints[0]) == [FUNCTION_ENTRYPOINT]


@pytest.mark.parametrize("function", FUNCTIONS)
def test_dockerfile_builds_on_the_release_base_from_this_functions_staged_layers(
    function: str,
) -> None:
    instructions = dockerfile_instructions(function)
    args = dict(a.split("=", 1) for word, a in instructions if word == "ARG" and "=" in a)
    assert [a for word, a in instructions if word == "FROM"] == ["${BASE}"]
    assert "/" not in args["BASE"] and ":" not in args["BASE"], "a local name, no registry"
    copies = [a.split() for word, a in instructions if word == "COPY"]
    assert copies == [
        [f"stage/{function}-deps/", "/usr/local/lib/python3.11/dist-packages/"],
        [f"stage/{function}/", "/usr/local/"],
    ]


@pytest.mark.parametrize("function", FUNCTIONS)
def test_dockerfile_runs_as_non_root_on_the_function_port(function: str) -> None:
    instructions = dockerfile_instructions(function)
    users = [args for word, args in instructions if word == "USER"]
    assert users and users[-1].split(":")[0] not in ("root", "0")
    assert ("EXPOSE", "9443") in instructions


class Served:
    """A console script running as `uv run <script> --insecure --address 127.0.0.1:PORT`
    (modelfleet_cli.launch: its output in `log`)."""

    def __init__(self, script: str, log: Path) -> None:
        self.script = script
        # Held until the script listens: four servers start at once, each on its own port.
        self.port = LoopbackPort()
        self.address = self.port.address
        # The command docs/development.md gives for serving a function; --frozen so that
        # running tests never rewrites uv.lock.
        self.command = ["uv", "run", "--frozen", script, "--insecure", "--address", self.address]
        self.process = Launched.start(script, self.command, log, cwd=ROOT)

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
                f"{self.process.tail()}"
            ) from None
        return channel

    def stop(self) -> None:
        self.port.release()
        self.process.stop()


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Served]]:
    """All four console scripts, started at once so they boot in parallel."""
    logs = tmp_path_factory.mktemp("served")
    servers = {function: Served(function, logs / f"{function}.log") for function in FUNCTIONS}
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
    assert served[function].process.alive()


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


def test_a_5000_cluster_request_over_4_mib_is_served_and_answered_under_2_mib(
    served: dict[str, Served],
) -> None:
    """A ModelCache over 5000 clusters, its 157 shards reporting every cluster Ready: the
    request is over gRPC's default 4 MiB; the response stays under 2 MiB."""
    req = benchmark_request("compose-model-cache", "bench_cache", 5000)
    assert req.ByteSize() > 4 * MIB, "the scenario must exceed gRPC's default 4 MiB"
    with served["compose-model-cache"].channel() as channel:
        started = time.monotonic()
        rsp = run_function(channel, req)
        elapsed = time.monotonic() - started
    assert rsp.ByteSize() < 2 * MIB
    assert rsp.desired.composite.ready == fnv1.READY_TRUE, [c.message for c in rsp.conditions]
    assert len(rsp.desired.resources) == 157  # one ModelCacheShard per 32 clusters
    assert elapsed < 120
