"""`modelfleet render`: one reconcile of one XR, printed like `crossplane render`.

Output, a YAML stream: the XR (apiVersion, kind, name, namespace and the status the pipeline
desired, with its Ready condition and the functions' conditions; `--include-full-xr` adds the
input's metadata and spec), then the composed resources with Crossplane's metadata sorted by
their `crossplane.io/composition-resource-name`, then (with flags) the functions' results
and the final context.
"""

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, NoReturn

import click
from modelfleet_contracts.fields import mapping_at

from modelfleet_cli.composed import ANNOTATION_RESOURCE_NAME, composed_metadata
from modelfleet_cli.discovery import composition_for, repository_compositions, repository_root
from modelfleet_cli.exit_codes import ExitCode
from modelfleet_cli.functions import FunctionError, development_targets, running_functions
from modelfleet_cli.loading import LoadError, load_objects, load_one
from modelfleet_cli.output import yaml_stream
from modelfleet_cli.pipeline import (
    SEVERITY_TEXT,
    PipelineError,
    PipelineResult,
    run_pipeline,
)
from modelfleet_cli.port_option import function_ports_option
from modelfleet_cli.render_now import DEFAULT_NOW, now_context, now_option, render_now
from modelfleet_cli.simulate.fleet import xr_id
from modelfleet_cli.xr_conditions import rfc3339
from modelfleet_cli.xrd import check_xr, unserved

RENDER_API_VERSION = "render.crossplane.io/v1beta1"
# crossplane render stamps every condition with this time: a real one would only be noise.
CONDITION_TIME = DEFAULT_NOW


class RenderError(ValueError):
    """Inputs that cannot be rendered (no Composition for the kind, unknown function...)."""


@dataclass
class RenderOptions:
    include_full_xr: bool = False
    include_function_results: bool = False
    include_context: bool = False


def observed_by_resource_name(
    objects: Sequence[Mapping[str, Any]], xr: Mapping[str, Any] | None = None
) -> dict[str, dict[str, Any]]:
    """Observed composed resources keyed by their composition-resource-name annotation, as
    Crossplane matches them to desired state; refused as CLI v2.5's engine refuses them (in
    another namespace than a namespaced XR, or controlled by another UID than the XR's)."""
    observed = {}
    problems = []
    for obj in objects:
        metadata = mapping_at(obj, "metadata")
        annotations = mapping_at(metadata, "annotations")
        name = annotations.get(ANNOTATION_RESOURCE_NAME)
        if not isinstance(name, str) or not name:
            what = f"{obj.get('kind')} {metadata.get('name', '')}".strip()
            raise RenderError(
                f"observed resource {what} has no {ANNOTATION_RESOURCE_NAME} annotation, so it "
                "cannot be matched to a composed resource"
            )
        if xr is not None:
            problems += _observed_problems(metadata, mapping_at(xr, "metadata"))
        observed[name] = dict(obj)
    if problems:
        raise RenderError(f"invalid observed resources: [{', '.join(problems)}]")
    return observed


def _observed_problems(metadata: Mapping[str, Any], xr_meta: Mapping[str, Any]) -> list[str]:
    """CLI v2.5's words for an observed resource its engine refuses. Without a uid of its
    own the XR gets one from the engine, which no controller reference in a file can know."""
    name = metadata.get("name", "")
    problems = []
    if xr_meta.get("namespace") and metadata.get("namespace") != xr_meta.get("namespace"):
        problems.append(f"observed resource {name} is not in the same namespace as the XR")
    controllers = [
        ref
        for ref in metadata.get("ownerReferences") or []
        if isinstance(ref, Mapping) and ref.get("controller")
    ]
    if any(not xr_meta.get("uid") or ref.get("uid") != xr_meta["uid"] for ref in controllers):
        problems.append(
            f"observed resource {name} has a controller ref but is not controlled by the XR"
        )
    return problems


def rendered_xr(
    xr: Mapping[str, Any], result: PipelineResult, options: RenderOptions
) -> dict[str, Any]:
    """The XR as crossplane render prints it: identity, desired status, Ready and the
    functions' conditions (Synced is not rendered)."""
    metadata = mapping_at(xr, "metadata")
    out: dict[str, Any] = {"apiVersion": xr.get("apiVersion"), "kind": xr.get("kind")}
    if options.include_full_xr:
        out["metadata"] = dict(metadata)
        if "spec" in xr:
            out["spec"] = xr["spec"]
    else:
        out["metadata"] = {k: metadata[k] for k in ("name", "namespace") if metadata.get(k)}
    status = dict(mapping_at(result.desired_composite, "status"))
    conditions: dict[str, dict[str, str]] = {}
    for condition in result.xr_conditions:
        if condition["type"] != "Synced":
            conditions[condition["type"]] = dict(
                condition, lastTransitionTime=rfc3339(CONDITION_TIME)
            )
    status["conditions"] = list(conditions.values())
    out["status"] = status
    return out


def render_documents(
    xr: Mapping[str, Any],
    result: PipelineResult,
    observed: Mapping[str, Mapping[str, Any]],
    options: RenderOptions,
) -> list[dict[str, Any]]:
    """Every document `modelfleet render` prints, in order."""
    docs = [rendered_xr(xr, result, options)]
    composed = [
        composed_metadata(desired, xr, name, observed.get(name))
        for name, desired in result.resources.items()
    ]
    composed.sort(key=lambda o: o["metadata"]["annotations"][ANNOTATION_RESOURCE_NAME])
    docs += composed
    if options.include_function_results:
        docs += [
            {
                "apiVersion": RENDER_API_VERSION,
                "kind": "Result",
                "step": r.step,
                "severity": SEVERITY_TEXT.get(r.result.severity, "SEVERITY_UNSPECIFIED"),
                "message": r.result.message,
            }
            for r in result.step_results
        ]
    if options.include_context:
        docs.append({"apiVersion": RENDER_API_VERSION, "kind": "Context", "fields": result.context})
    return docs


def _composition(xr: Mapping[str, Any], path: str | None) -> dict[str, Any]:
    if path is not None:
        composition = load_one(path, "Composition")
        if composition.get("kind") != "Composition":
            raise RenderError(f"{path}: expected a Composition, found a {composition.get('kind')}")
        if mapping_at(composition, "spec").get("mode", "Pipeline") != "Pipeline":
            raise RenderError(f"{path}: render only supports Compositions with mode: Pipeline")
        mismatch = _type_mismatch(composition, xr)
        if mismatch is not None:
            raise RenderError(mismatch)
        return composition
    if repository_root() is None:
        raise RenderError(
            "cannot find this repository's apis/ (run from the Modelfleet checkout, or pass "
            "a COMPOSITION file)"
        )
    found = composition_for(xr, repository_compositions())
    if found is None:
        raise RenderError(
            f"no Composition in this repository's apis/ for {xr.get('apiVersion')} "
            f"{xr.get('kind')} (pass a COMPOSITION file)"
        )
    return found


def _type_mismatch(composition: Mapping[str, Any], xr: Mapping[str, Any]) -> str | None:
    """Both Crossplane CLIs' refusal of a Composition for another type of XR."""
    type_ref = mapping_at(mapping_at(composition, "spec"), "compositeTypeRef")
    for field in ("apiVersion", "kind"):
        if type_ref.get(field) != xr.get(field):
            return (
                f"composition's compositeTypeRef.{field} ({type_ref.get(field)}) does not "
                f"match XR's {field} ({xr.get(field)})"
            )
    return None


def _function_targets(composition: Mapping[str, Any], path: str | None) -> dict[str, str]:
    """Function name -> address to dial, for Functions with the Development runtime; a
    FUNCTIONS file must name every function the pipeline uses (as crossplane render
    insists). The others are started from their console scripts."""
    if path is None:
        return {}
    try:
        loaded = load_objects(path)
    except LoadError as exc:
        raise RenderError(f'cannot load functions from "{path}": {exc}') from None
    for obj in loaded:
        if obj.get("kind") != "Function":
            name = mapping_at(obj, "metadata").get("name", "")
            raise RenderError(
                f'cannot load functions from "{path}": not a function: {obj.get("kind")}/{name}'
            )
    functions = loaded
    names = {str(mapping_at(fn, "metadata").get("name", "")) for fn in functions}
    for step in mapping_at(composition, "spec").get("pipeline") or []:
        name = mapping_at(step, "functionRef").get("name")
        if name not in names:
            raise RenderError(f'unknown Function "{name}" - it is not in {path}')
    return development_targets(functions)


def render_xr(
    xr_path: str,
    composition_path: str | None,
    functions_path: str | None,
    observed_path: str | None,
    required_paths: Sequence[str],
    ports: range | None = None,
    now: datetime | None = None,
) -> tuple[dict[str, Any], PipelineResult, dict[str, dict[str, Any]]]:
    """Load the inputs, run the pipeline through the real functions (those started, on
    `ports` if given) with the context telling them it is `now` (default: from the inputs,
    render_now.py), return the XR, the pipeline's result and the observed resources."""
    xr = load_one(xr_path, "composite resource (XR)")
    _check(xr, xr_path)
    composition = _composition(xr, composition_path)
    targets = _function_targets(composition, functions_path)
    observed = observed_by_resource_name(load_objects(observed_path) if observed_path else [], xr)
    pool = [obj for path in required_paths for obj in load_objects(path)]
    needed = [str(mapping_at(s, "functionRef").get("name")) for s in _steps(composition)]
    with running_functions(targets, start=needed, ports=ports) as functions:
        result = run_pipeline(
            xr,
            composition,
            functions,
            observed=observed,
            required_pool=pool,
            context=now_context(render_now(xr, observed.values(), now)),
            now=CONDITION_TIME,
        )
    return xr, result, observed


def _check(xr: dict[str, Any], path: str) -> None:
    """Refuse an XR the API server would refuse (an unknown field included), with simulate's
    words."""
    refusal = unserved(xr)
    if refusal is not None:
        raise RenderError(f"{path}: {xr_id(xr)}: {refusal}")
    check = check_xr(xr)
    if check.refused:
        raise RenderError(f"{path}: {check.refusal(xr_id(xr))}")


def _steps(composition: Mapping[str, Any]) -> list[Any]:
    steps = mapping_at(composition, "spec").get("pipeline")
    return steps if isinstance(steps, list) else []


EPILOG = """\b
Examples (from the repository root):
  uv run modelfleet render examples/quickstart/inferencecluster.yaml
  uv run modelfleet render examples/quickstart/modelcache.yaml \\
    --required-resources examples/quickstart/render/clusters.yaml
  uv run modelfleet render xr.yaml apis/modelcaches/composition.yaml \\
    examples/functions.yaml   # dial functions you started yourself
"""


@click.command(
    help="Render an XR through its Composition's function pipeline, like `crossplane "
    "render`: the real functions run on loopback (no cluster, no Docker) and the result is "
    "printed as a YAML stream: the XR with its status and conditions, then the composed "
    "resources sorted by composition-resource-name. COMPOSITION defaults to this "
    "repository's Composition for the XR's kind; FUNCTIONS (a YAML file or directory of "
    "Functions) to this repository's functions, started from their console scripts. "
    "Functions annotated render.crossplane.io/runtime: Development are dialled at their "
    "render.crossplane.io/runtime-development-target instead.",
    epilog=EPILOG,
)
@click.argument("xr", type=click.Path())
@click.argument("composition", required=False, type=click.Path())
@click.argument("functions", required=False, type=click.Path())
@click.option(
    "-o",
    "--observed-resources",
    metavar="PATH",
    help="A YAML file or directory of the observed composed resources (matched to desired "
    "ones by their crossplane.io/composition-resource-name annotation).",
)
@click.option(
    "--required-resources",
    "required",
    metavar="PATH",
    multiple=True,
    help="A YAML file or directory of resources the functions may require (InferenceClusters, "
    "ModelCaches, ...). Repeatable.",
)
@click.option(
    "-e",
    "--extra-resources",
    "extra",
    metavar="PATH",
    multiple=True,
    hidden=True,
    help="The older name of --required-resources.",
)
@click.option(
    "-r",
    "--include-function-results",
    is_flag=True,
    help="Also print the functions' results (events) as render.crossplane.io/v1beta1 Result.",
)
@click.option(
    "-x",
    "--include-full-xr",
    is_flag=True,
    help="Print the input XR's metadata and spec along with the rendered status.",
)
@click.option(
    "-c",
    "--include-context",
    is_flag=True,
    help="Also print the final function context as render.crossplane.io/v1beta1 Context.",
)
@now_option
@function_ports_option
def render(
    xr: str,
    composition: str | None,
    functions: str | None,
    observed_resources: str | None,
    required: tuple[str, ...],
    extra: tuple[str, ...],
    include_function_results: bool,
    include_full_xr: bool,
    include_context: bool,
    function_ports: range | None,
    now: datetime | None,
) -> None:
    options = RenderOptions(include_full_xr, include_function_results, include_context)
    try:
        xr_obj, result, observed = render_xr(
            xr,
            composition,
            functions,
            observed_resources,
            [*required, *extra],
            function_ports,
            now,
        )
    except (LoadError, RenderError, PipelineError, FunctionError) as exc:
        _fail(str(exc))
    if result.fatal is not None:
        _fail(f"cannot render composite resource: {result.error}")
    click.echo(yaml_stream(render_documents(xr_obj, result, observed, options)), nl=False)


def _fail(message: str) -> NoReturn:
    click.echo(f"modelfleet render: {message}", err=True)
    raise SystemExit(ExitCode.INPUT_ERROR)
