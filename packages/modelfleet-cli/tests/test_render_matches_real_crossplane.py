"""`modelfleet render` says what the real Crossplane CLIs say, on every example XR with its
settled render inputs (examples/*/render/), and on every ModelCacheShard the examples'
ModelCaches compose (render/<cache>-shard-<n>.yaml): both generations accept the inputs, and
the XR's status and conditions and the composed resources are the same.

Where the generations differ, by design (docs/cli.md, "With the real crossplane render"):
CLI v2.5 runs Crossplane's own reconciler, so its XR also carries `Synced`, `Responsive` and
`spec.crossplane.resourceRefs`, and it names a new composed resource (`generateName` plus a
suffix); `modelfleet render` prints what v2.2 prints. CLI v2.5 also sends the functions the
XR as a control plane stores it, with `spec.crossplane` (its `compositionRef`, and
`resourceRefs` naming the observed resources): a function that copies its XR's spec into
what it composes (a ModelCache's into its shards' `spec.cache`) differs here, and only here.
The real CLIs are given the time `modelfleet render` decides at (its default from the inputs,
or `--now`) as `--context-values modelfleet.io/now=...`, so an outcome that depends on the
time (a lost cluster's retry mark) is compared too.
Skipped, with the path and the variable to set, where the real binaries are absent.
"""

import socket
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner
from modelfleet_cli.composed import ANNOTATION_RESOURCE_NAME
from modelfleet_cli.functions import DEVELOPMENT_TARGET
from modelfleet_cli.loading import load_objects
from modelfleet_cli.main import main
from modelfleet_cli.render_now import render_now
from modelfleet_contracts.edge.now import NOW_KEY, format_now, parse_now
from modelfleet_devtools.paths import EXAMPLES_DIR, REPO_ROOT
from modelfleet_devtools.real_crossplane import CLASSIC, ENGINE, GENERATIONS, real_render
from render_inputs import FUNCTIONS as FUNCTION_NAMES
from render_inputs import development_function, required_files
from test_render_examples import COMPOSITIONS, every_example_xr, single
from test_render_now import QUICKSTART, lost_cluster, retry_mark

# Conditions only Crossplane's reconciler (CLI v2.5) reports on a rendered XR.
RECONCILER_ONLY = {"Synced", "Responsive"}


def meaning(stream: str) -> dict[str, Any]:
    """What a render says: the XR's status and conditions, and each composed resource by
    its composition-resource-name (its kind, spec and, when it was observed, its name)."""
    docs = [d for d in yaml.safe_load_all(stream) if d]
    xr, composed = docs[0], [d for d in docs[1:] if d.get("kind") not in ("Result", "Context")]
    status = dict(xr.get("status") or {})
    conditions = {
        c["type"]: (c["status"], c.get("reason"), c.get("message", ""))
        for c in status.pop("conditions", [])
        if c["type"] not in RECONCILER_ONLY
    }
    return {
        "xr": (xr["kind"], xr["metadata"]["name"], xr["metadata"].get("namespace")),
        "status": status,
        "conditions": conditions,
        "composed": {
            d["metadata"]["annotations"][ANNOTATION_RESOURCE_NAME]: (
                d["apiVersion"],
                d["kind"],
                d["metadata"].get("namespace"),
                d.get("spec"),
            )
            for d in composed
        },
    }


def render_args(tmp_path: Path, functions_file: Path, ex: str, file: str, name: str) -> list[str]:
    xr = single(tmp_path, EXAMPLES_DIR / ex / file, name)
    kind = load_objects(xr)[0]["kind"]
    args = [str(xr), str(REPO_ROOT / COMPOSITIONS[kind]), str(functions_file)]
    observed = EXAMPLES_DIR / ex / "render" / f"observed-{name}.yaml"
    if observed.exists():
        args += ["--observed-resources", str(observed)]
    for path in required_files(EXAMPLES_DIR / ex, kind):
        args += ["--required-resources", str(path)]
    return args


def observed_names(args: list[str]) -> dict[str, str]:
    if "--observed-resources" not in args:
        return {}
    path = args[args.index("--observed-resources") + 1]
    return {
        o["metadata"]["annotations"][ANNOTATION_RESOURCE_NAME]: o["metadata"]["name"]
        for o in load_objects(path)
    }


def the_same_time(args: list[str]) -> str:
    """The real CLIs' flag telling the functions the time `modelfleet render args` tells them."""
    given = parse_now(args[args.index("--now") + 1]) if "--now" in args else None
    observed = (
        load_objects(args[args.index("--observed-resources") + 1])
        if ("--observed-resources" in args)
        else []
    )
    moment = render_now(load_objects(args[0])[0], observed, given)
    return f'--context-values={NOW_KEY}="{format_now(moment)}"'


def real_args(args: list[str]) -> list[str]:
    """`modelfleet render`'s arguments as the real CLIs take them (no `--now`)."""
    told = the_same_time(args)
    if "--now" in args:
        i = args.index("--now")
        args = args[:i] + args[i + 2 :]
    return [*args, told]


@pytest.mark.parametrize("generation", GENERATIONS)
@pytest.mark.parametrize(("ex", "file", "name"), every_example_xr())
def test_every_example_renders_as_the_real_crossplane_cli_renders_it(
    functions_file: Path, tmp_path: Path, generation: str, ex: str, file: str, name: str
) -> None:
    args = render_args(tmp_path, functions_file, ex, file, name)
    real = real_render(generation, real_args(args), cwd=tmp_path)
    assert real.exit_code == 0, real.stderr
    ours = CliRunner().invoke(main, ["render", *args])
    assert ours.exit_code == 0, ours.output
    assert meaning(ours.stdout) == meaning(real.stdout)
    # An observed resource keeps its name in both generations (CLI v2.5 finds it through the
    # resourceRefs it writes, and refuses the inputs if it cannot).
    docs = [d for d in yaml.safe_load_all(real.stdout) if d]
    names = {
        d["metadata"]["annotations"][ANNOTATION_RESOURCE_NAME]: d["metadata"].get("name")
        for d in docs[1:]
    }
    for resource, observed in observed_names(args).items():
        if resource in names:
            assert names[resource] == observed, resource
    if generation == ENGINE and observed_names(args):
        refs = docs[0]["spec"]["crossplane"]["resourceRefs"]
        assert {r["name"] for r in refs} >= set(observed_names(args).values()) & set(names.values())
    if generation == CLASSIC:
        assert "crossplane" not in (docs[0].get("spec") or {})


@pytest.mark.parametrize("generation", GENERATIONS)
@pytest.mark.parametrize("now", [None, "2025-06-01T12:00:10Z", "2026-02-03T04:05:06Z"])
def test_a_render_that_depends_on_the_time_matches_given_the_same_time(
    functions_file: Path, tmp_path: Path, generation: str, now: str | None
) -> None:
    """A lost cluster's retry mark is the time decided at: the real CLIs told it with
    `--context-values` print what `modelfleet render` prints."""
    args = [
        str(QUICKSTART / "inferencecluster.yaml"),
        str(REPO_ROOT / COMPOSITIONS["InferenceCluster"]),
        str(functions_file),
        *("--observed-resources", str(lost_cluster(tmp_path))),
        *("--required-resources", str(QUICKSTART / "render" / "providerconfigs.yaml")),
        *(("--now", now) if now else ()),
    ]
    real = real_render(generation, real_args(args), cwd=tmp_path)
    assert real.exit_code == 0, real.stderr
    ours = CliRunner().invoke(main, ["render", *args])
    assert ours.exit_code == 0, ours.output
    assert meaning(ours.stdout) == meaning(real.stdout)
    # An annotation: not part of what `meaning` compares.
    assert retry_mark(ours.stdout) == retry_mark(real.stdout) is not None


def hostile_cache(name: str | None, namespace: str = "ml-team") -> dict[str, Any]:
    xr = yaml.safe_load((EXAMPLES_DIR / "quickstart" / "modelcache.yaml").read_text())
    xr["metadata"] = {"namespace": namespace} | ({} if name is None else {"name": name})
    return xr


HOSTILE = [
    # XR, what CLI v2.2 and v2.5 say of it (None: they render it), what modelfleet render says
    pytest.param(
        hostile_cache("qwen3-模型-ü"),
        {CLASSIC: None, ENGINE: "has an invalid name"},
        "metadata.name: Invalid value",
        id="a name with non-ASCII letters",
    ),
    pytest.param(
        hostile_cache("Qwen3_BAD.name"),
        {CLASSIC: None, ENGINE: "has an invalid name"},
        "metadata.name: Invalid value",
        id="a name with capitals and an underscore",
    ),
    pytest.param(
        hostile_cache(None),
        {CLASSIC: None, ENGINE: "cannot find top-level composite resource name label"},
        "metadata.name: Required value",
        id="no name",
    ),
    pytest.param(
        hostile_cache("q" * 300),
        {CLASSIC: None, ENGINE: None},
        "must be no more than 253 characters",
        id="a name of 300 characters (the API server refuses it)",
    ),
    pytest.param(
        hostile_cache("qwen3", namespace="ml team"),
        {CLASSIC: None, ENGINE: None},
        "metadata.namespace: Invalid value",
        id="a namespace with a space (the API server refuses it)",
    ),
]


@pytest.mark.parametrize("generation", GENERATIONS)
@pytest.mark.parametrize(("xr", "real_says", "we_say"), HOSTILE)
def test_render_refuses_what_the_real_cli_or_the_api_server_refuses(
    functions_file: Path,
    tmp_path: Path,
    generation: str,
    xr: dict[str, Any],
    real_says: dict[str, str | None],
    we_say: str,
) -> None:
    path = tmp_path / "xr.yaml"
    path.write_text(yaml.safe_dump(xr, allow_unicode=True))
    quickstart = EXAMPLES_DIR / "quickstart" / "render"
    args = [
        str(path),
        str(REPO_ROOT / COMPOSITIONS["ModelCache"]),
        str(functions_file),
        *("--required-resources", str(quickstart / "clusters.yaml")),
    ]
    real = real_render(generation, args, cwd=tmp_path)
    expected = real_says[generation]
    if expected is None:
        assert real.exit_code == 0, real.stderr
    else:
        assert real.exit_code == 1 and expected in real.stderr, real.stderr
    ours = CliRunner().invoke(main, ["render", *args])
    assert ours.exit_code == 1 and ours.stdout == ""
    assert we_say in ours.stderr


# A user's wrong inputs to a ModelCache's render, compared with both real CLIs: the exit code
# each gives, and words each says on stderr (None: it renders, exit 0). The real CLIs get
# `--timeout=10s`, so a function that does not answer costs seconds, not their default minute.
Args = Callable[[Path, Path], list[str]]
QUICKSTART_RENDER = EXAMPLES_DIR / "quickstart" / "render"
CACHE = str(EXAMPLES_DIR / "quickstart" / "modelcache.yaml")
CACHES = str(REPO_ROOT / COMPOSITIONS["ModelCache"])
CLUSTERS = ["--required-resources", str(QUICKSTART_RENDER / "clusters.yaml")]


def _functions_at(tmp_path: Path, target: Callable[[str], str | None]) -> str:
    """A FUNCTIONS file with the Development runtime, each function at `target(name)` (None:
    left out)."""
    docs = [development_function(n, t) for n in FUNCTION_NAMES if (t := target(n)) is not None]
    path = tmp_path / "functions.yaml"
    path.write_text(yaml.safe_dump_all(docs))
    return str(path)


def _nothing_listens() -> str:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return f"127.0.0.1:{probe.getsockname()[1]}"


def _targets(functions_file: Path) -> dict[str, str]:
    return {
        f["metadata"]["name"]: f["metadata"]["annotations"][DEVELOPMENT_TARGET]
        for f in load_objects(functions_file)
    }


WRONG: list[tuple[str, Args, dict[str, tuple[int, str | None]]]] = [
    (
        "a Composition of another kind",
        lambda fns, _: [CACHE, str(REPO_ROOT / COMPOSITIONS["ModelDeployment"]), str(fns),
                        *CLUSTERS],
        dict.fromkeys(
            ("v2.2", "v2.5", "ours"),
            (1, "composition's compositeTypeRef.kind (ModelDeployment) does not match XR's kind "
             "(ModelCache)"),
        ),
    ),
    (
        "a functions file that does not exist",
        lambda _, tmp: [CACHE, CACHES, str(tmp / "functions.yaml"), *CLUSTERS],
        dict.fromkeys(("v2.2", "v2.5", "ours"), (1, "cannot load functions from")),
    ),
    (
        "a Composition given as the functions file",
        lambda _, tmp: [CACHE, CACHES, CACHES, *CLUSTERS],
        dict.fromkeys(("v2.2", "v2.5", "ours"), (1, "not a function: Composition/modelcaches")),
    ),
    (
        "a functions file without the pipeline's function",
        lambda fns, tmp: [
            CACHE,
            CACHES,
            _functions_at(tmp, lambda n: None if n == "compose-model-cache" else _targets(fns)[n]),
            *CLUSTERS,
        ],
        dict.fromkeys(("v2.2", "v2.5", "ours"), (1, 'unknown function "compose-model-cache"')),
    ),
    (
        "a function that is not running",
        lambda _, tmp: [CACHE, CACHES, _functions_at(tmp, lambda n: _nothing_listens()), *CLUSTERS],
        {
            "v2.2": (1, "connect: connection refused"),
            "v2.5": (255, "signal: killed"),  # its internal render is killed at --timeout
            "ours": (1, "nothing answers at 127.0.0.1:"),
        },
    ),
    (
        "no required resources (the clusters the cache selects)",
        lambda fns, _: [CACHE, CACHES, str(fns)],
        dict.fromkeys(("v2.2", "v2.5", "ours"), (0, None)),
    ),
    (
        "an observed file of another XR, cluster-scoped (an InferenceCluster's Objects)",
        lambda fns, _: [
            CACHE, CACHES, str(fns), *CLUSTERS,
            "--observed-resources", str(QUICKSTART_RENDER / "observed-gke-dev.yaml"),
        ],
        {
            "v2.2": (0, None),
            "v2.5": (1, "is not in the same namespace as the XR"),
            "ours": (1, "is not in the same namespace as the XR"),
        },
    ),
    (
        "an observed file of another XR in the same namespace (its shard's Objects)",
        lambda fns, _: [
            CACHE, CACHES, str(fns), *CLUSTERS,
            "--observed-resources", str(QUICKSTART_RENDER / "observed-qwen3-0-6b-shard-0.yaml"),
        ],
        dict.fromkeys(("v2.2", "v2.5", "ours"), (0, None)),
    ),
]  # fmt: skip


def _said(exit_code: int, stderr: str, expected: tuple[int, str | None]) -> None:
    code, words = expected
    assert exit_code == code, stderr
    if words is not None:
        assert words.lower() in stderr.lower(), stderr


@pytest.mark.parametrize(("case", "args", "says"), WRONG, ids=[w[0] for w in WRONG])
def test_wrong_inputs_are_refused_as_the_real_clis_refuse_them(
    functions_file: Path,
    tmp_path: Path,
    case: str,
    args: Args,
    says: dict[str, tuple[int, str | None]],
) -> None:
    argv = args(functions_file, tmp_path)
    renders = {}
    for generation in GENERATIONS:
        real = real_render(generation, [*argv, "--timeout=10s"], cwd=tmp_path)
        _said(real.exit_code, real.stderr, says[generation])
        renders[generation] = real.stdout
    ours = CliRunner().invoke(main, ["render", *argv])
    _said(ours.exit_code, ours.stderr, says["ours"])
    if says["ours"][0] != 0:
        assert ours.stdout == "" and len(ours.stderr.strip().splitlines()) == 1, ours.stderr
    elif says[CLASSIC][0] == 0:  # what is rendered is what CLI v2.2 renders
        assert meaning(ours.stdout) == meaning(renders[CLASSIC])
