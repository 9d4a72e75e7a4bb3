"""`modelfleet render` on bad input: one clear line on stderr and exit code 1, never a
traceback; a fatal result from a function fails the command with its message."""

import re
import socket
import time
from collections.abc import Iterator
from concurrent import futures
from pathlib import Path

import grpc
import pytest
import yaml
from click.testing import CliRunner
from crossplane.function import response
from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from crossplane.function.proto.v1 import run_function_pb2_grpc as grpcv1
from modelfleet_cli.discovery import repository_root
from modelfleet_cli.functions import DEVELOPMENT_TIMEOUT_SECONDS, STARTUP_TIMEOUT_SECONDS
from modelfleet_cli.main import main
from render_inputs import development_function

ROOT = repository_root()
assert ROOT is not None
CACHE_XR = {
    "apiVersion": "modelfleet.io/v1alpha1",
    "kind": "ModelCache",
    "metadata": {"name": "qwen", "namespace": "ml-team"},
    "spec": {"source": "HuggingFace", "huggingFace": {"repo": "Qwen/Qwen3-0.6B"}, "sizeGiB": 5},
}


def observed_object(namespace: str = "ml-team", controller_uid: str | None = None) -> dict:
    """A composed Object of CACHE_XR as a file of observed resources holds it."""
    metadata: dict = {
        "name": "qwen-claim",
        "namespace": namespace,
        "annotations": {"crossplane.io/composition-resource-name": "gke-dev-claim"},
    }
    if controller_uid is not None:
        metadata["ownerReferences"] = [
            {
                "apiVersion": "modelfleet.io/v1alpha1",
                "kind": "ModelCache",
                "name": "qwen",
                "uid": controller_uid,
                "controller": True,
            }
        ]
    return {
        "apiVersion": "kubernetes.m.crossplane.io/v1alpha1",
        "kind": "Object",
        "metadata": metadata,
    }


def composition(function: str) -> dict:
    return {
        "apiVersion": "apiextensions.crossplane.io/v1",
        "kind": "Composition",
        "metadata": {"name": "test"},
        "spec": {
            "compositeTypeRef": {"apiVersion": "modelfleet.io/v1alpha1", "kind": "ModelCache"},
            "mode": "Pipeline",
            "pipeline": [{"step": "only", "functionRef": {"name": function}}],
        },
    }


def write(path: Path, *docs: dict) -> str:
    path.write_text(yaml.safe_dump_all(docs))
    return str(path)


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, ["render", *args])
    assert not isinstance(result.exception, Exception) or isinstance(
        result.exception, SystemExit
    ), f"traceback instead of a message: {result.exception!r}"
    return result.exit_code, result.stdout, result.stderr


class Refusing(grpcv1.FunctionRunnerServiceServicer):
    """A function that refuses every XR."""

    def RunFunction(
        self, request: fnv1.RunFunctionRequest, context: grpc.ServicerContext
    ) -> fnv1.RunFunctionResponse:
        rsp = response.to(request)
        response.fatal(rsp, "spec.sizeGiB is too small")
        return rsp


@pytest.fixture
def refusing_function() -> Iterator[str]:
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=1))
    grpcv1.add_FunctionRunnerServiceServicer_to_server(Refusing(), server)
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    try:
        yield f"127.0.0.1:{port}"
    finally:
        server.stop(None)


def test_a_fatal_result_fails_the_command_with_its_message(
    tmp_path: Path, refusing_function: str
) -> None:
    xr = write(tmp_path / "xr.yaml", CACHE_XR)
    comp = write(tmp_path / "comp.yaml", composition("refusing"))
    fns = write(tmp_path / "fns.yaml", development_function("refusing", refusing_function))
    code, out, err = run(xr, comp, fns)
    assert code == 1
    assert out == ""
    assert 'pipeline step "only" returned a fatal result: spec.sizeGiB is too small' in err.replace(
        "'", '"'
    )


@pytest.mark.parametrize(
    ("case", "files", "args", "message"),
    [
        ("the XR file is missing", {}, ["missing.yaml"], "missing.yaml: no such file"),
        (
            "a directory instead of the XR file (bad input, as simulate given a file)",
            {"dir/xr.yaml": yaml.safe_dump(CACHE_XR)},
            ["dir"],
            "dir is a directory: expected a file holding one composite resource (XR)",
        ),
        (
            "the XR is not YAML",
            {"xr.yaml": "kind: [unclosed\n"},
            ["xr.yaml"],
            "invalid YAML",
        ),
        (
            "the file holds two XRs",
            {"xr.yaml": yaml.safe_dump_all([CACHE_XR, CACHE_XR])},
            ["xr.yaml"],
            "expected exactly one composite resource (XR), found 2",
        ),
        (
            "no Composition for the kind",
            {"xr.yaml": yaml.safe_dump(dict(CACHE_XR, apiVersion="example.org/v1", kind="XThing"))},
            ["xr.yaml"],
            "no Composition in this repository's apis/ for example.org/v1 XThing",
        ),
        (
            "the function is not installed",
            {
                "xr.yaml": yaml.safe_dump(CACHE_XR),
                "comp.yaml": yaml.safe_dump(composition("no-such-function")),
            },
            ["xr.yaml", "comp.yaml"],
            "function 'no-such-function' is not installed here",
        ),
        (
            "the FUNCTIONS file lacks a function of the pipeline",
            {
                "xr.yaml": yaml.safe_dump(CACHE_XR),
                "comp.yaml": yaml.safe_dump(composition("compose-model-cache")),
                "fns.yaml": yaml.safe_dump(development_function("other", "127.0.0.1:1")),
            },
            ["xr.yaml", "comp.yaml", "fns.yaml"],
            'unknown Function "compose-model-cache"',
        ),
        (
            "an observed resource without its composition-resource-name",
            {
                "xr.yaml": yaml.safe_dump(CACHE_XR),
                "observed.yaml": yaml.safe_dump(
                    {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}}
                ),
            },
            ["xr.yaml", "--observed-resources", "observed.yaml"],
            "has no crossplane.io/composition-resource-name annotation",
        ),
        (
            "a Development target past port 65535",
            {
                "xr.yaml": yaml.safe_dump(CACHE_XR),
                "comp.yaml": yaml.safe_dump(composition("compose-model-cache")),
                "fns.yaml": yaml.safe_dump(
                    development_function("compose-model-cache", "127.0.0.1:99999")
                ),
            },
            ["xr.yaml", "comp.yaml", "fns.yaml"],
            "127.0.0.1:99999: port '99999' is not a number from 1 to 65535",
        ),
        (
            "an observed resource controlled by another XR (as CLI v2.5 refuses it)",
            {
                "xr.yaml": yaml.safe_dump(CACHE_XR),
                "observed.yaml": yaml.safe_dump(observed_object(controller_uid="1234")),
            },
            ["xr.yaml", "--observed-resources", "observed.yaml"],
            "invalid observed resources: [observed resource qwen-claim has a controller ref but "
            "is not controlled by the XR]",
        ),
        (
            "an observed resource in another namespace (as CLI v2.5 refuses it)",
            {
                "xr.yaml": yaml.safe_dump(CACHE_XR),
                "observed.yaml": yaml.safe_dump(observed_object(namespace="other-team")),
            },
            ["xr.yaml", "--observed-resources", "observed.yaml"],
            "observed resource qwen-claim is not in the same namespace as the XR",
        ),
    ],
)
def test_bad_input_gets_one_clear_line_and_exit_code_1(
    tmp_path: Path, case: str, files: dict[str, str], args: list[str], message: str
) -> None:
    for name, content in files.items():
        (tmp_path / name).parent.mkdir(exist_ok=True)
        (tmp_path / name).write_text(content)
    paths = [str(tmp_path / a) if not a.startswith("-") else a for a in args]
    code, out, err = run(*paths)
    assert code == 1, case
    assert message in err, (case, err)
    assert len(err.strip().splitlines()) == 1, (case, err)
    assert out == "", case


def test_help_names_every_flag() -> None:
    result = CliRunner().invoke(main, ["render", "--help"])
    assert result.exit_code == 0
    for flag in (
        "--observed-resources",
        "--required-resources",
        "--include-function-results",
        "--include-full-xr",
        "--include-context",
    ):
        assert flag in result.output


def test_render_starts_this_repositorys_function_when_none_is_given() -> None:
    """The default path: the Composition from apis/ and the function started from its
    console script (as a newcomer runs it)."""
    xr = str(ROOT / "examples" / "quickstart" / "inferencecluster.yaml")
    code, out, err = run(xr, "--include-context")
    assert code == 0, err
    docs = list(yaml.safe_load_all(out))
    assert docs[0]["kind"] == "InferenceCluster"
    assert docs[-1]["kind"] == "Context"


@pytest.fixture
def closed_loopback_port() -> Iterator[int]:
    """A loopback port nothing listens on: bound and never listening for the whole test, so
    nothing else can take it (a connection to it is refused)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        yield int(s.getsockname()[1])


def test_a_development_target_that_does_not_answer_fails_within_seconds(
    tmp_path: Path, closed_loopback_port: int
) -> None:
    """examples/functions.yaml with nothing running at its targets: the same one line, in
    seconds (it used to be a minute of silence)."""
    target = f"127.0.0.1:{closed_loopback_port}"
    functions = (ROOT / "examples" / "functions.yaml").read_text()
    functions = re.sub(r"localhost:94\d\d", target, functions)
    fns = tmp_path / "functions.yaml"
    fns.write_text(functions)
    xr = str(ROOT / "examples" / "quickstart" / "modelcache.yaml")
    comp = str(ROOT / "apis" / "modelcaches" / "composition.yaml")
    started = time.monotonic()
    code, out, err = run(xr, comp, str(fns))
    elapsed = time.monotonic() - started
    assert code == 1 and out == ""
    assert err.strip() == (
        f"modelfleet render: function compose-model-cache: nothing answers at {target} "
        "(is it running?)"
    )
    # It waits DEVELOPMENT_TIMEOUT_SECONDS (5 s), not the minute a started function gets: half
    # that minute leaves a loaded machine room and still tells the two apart.
    assert DEVELOPMENT_TIMEOUT_SECONDS < 10 and STARTUP_TIMEOUT_SECONDS >= 60
    assert elapsed < STARTUP_TIMEOUT_SECONDS / 2, f"took {elapsed:.1f} s"
