"""`modelfleet simulate DIR`: run a whole fleet locally through the real functions."""

import json
import random
import sys
from dataclasses import asdict
from pathlib import Path
from typing import Any

import click
from modelfleet_contracts.conditions import condition_in, condition_true
from modelfleet_contracts.fields import list_at, mapping_at

from modelfleet_cli.discovery import repository_compositions
from modelfleet_cli.exit_codes import ExitCode
from modelfleet_cli.functions import FunctionError, running_functions
from modelfleet_cli.output import whole_numbers_as_int
from modelfleet_cli.pipeline import Caller, PipelineError
from modelfleet_cli.port_option import function_ports_option
from modelfleet_cli.simulate import faults as f
from modelfleet_cli.simulate.clusters import workload_clusters
from modelfleet_cli.simulate.control_plane import ControlPlane
from modelfleet_cli.simulate.edits import EditError, apply_edit, edits_from_settings
from modelfleet_cli.simulate.fleet import FleetError, load_fleet, load_settings, xr_id
from modelfleet_cli.simulate.grid_drawing import draw
from modelfleet_cli.simulate.objects import key_of
from modelfleet_cli.simulate.phase_grid import PhaseGrid
from modelfleet_cli.simulate.timeline import Progress, Timeline
from modelfleet_cli.simulate.verdict import (
    CONTAINED,
    FAILING,
    NO_EFFECT,
    SURVIVED,
    assess,
)

DEFAULT_ROUNDS = 30
FUNCTIONS = (
    "compose-inference-cluster",
    "compose-model-cache",
    "compose-model-deployment",
    "compose-model-replica",
    "compose-model-service",
)


def _ready(xr: dict[str, Any]) -> bool:
    return condition_true(mapping_at(xr, "status"), "Ready")


def _why_not_ready(plane: ControlPlane) -> str:
    """The first XR that is not Ready and the condition that says why."""
    for xr in plane.xrs():
        if _ready(xr):
            continue
        for c in list_at(mapping_at(xr, "status"), "conditions"):
            if c.get("type") != "Ready" and c.get("status") == "False":
                return f"{xr_id(xr)}: {c.get('type')}={c.get('reason')}: {c.get('message', '')}"
        ready = condition_in(mapping_at(xr, "status"), "Ready")
        return f"{xr_id(xr)}: Ready={ready.get('status', 'Unknown')} {ready.get('message', '')}"
    return "no XR left"


def _recheck_after(plane: ControlPlane) -> dict[str, int | None]:
    """XR -> the TTL in seconds its last reconcile asked for (see ControlPlane)."""
    return {xr_id(plane.store[k]): plane.recheck_after.get(k) for k in plane.xr_keys()}


def _inventory(plane: ControlPlane) -> dict[str, Any]:
    """What is on each workload cluster at the end (kind, namespace, name, and the facts
    tests look at), plus the cluster's event log."""
    out = {}
    for name, cluster in plane.clusters.items():
        objects = []
        for (kind, namespace, obj_name), obj in sorted(cluster.objects.items()):
            entry: dict[str, Any] = {"kind": kind, "namespace": namespace, "name": obj_name}
            spec, status = mapping_at(obj, "spec"), mapping_at(obj, "status")
            if kind == "LeaderWorkerSet":
                entry["size"] = mapping_at(spec, "leaderWorkerTemplate").get("size")
            if kind in ("Deployment", "LeaderWorkerSet"):
                entry["replicas"] = spec.get("replicas")
                entry["readyReplicas"] = status.get("readyReplicas")
            if kind == "PersistentVolumeClaim":
                entry["phase"] = status.get("phase")
                entry["terminating"] = bool(mapping_at(obj, "metadata").get("deletionTimestamp"))
            if kind == "Job":
                entry["conditions"] = [c.get("type") for c in list_at(status, "conditions")]
            if kind == "HTTPRoute":
                entry["backends"] = {
                    str(b.get("name")): b.get("weight", 1)
                    for rule in list_at(spec, "rules")
                    for b in list_at(rule, "backendRefs")
                }
                entry["accepted"] = [
                    c.get("status")
                    for p in list_at(status, "parents")
                    for c in list_at(p, "conditions")
                    if c.get("type") == "Accepted"
                ]
            objects.append(entry)
        out[name] = {"objects": objects, "events": cluster.events}
    return out


def sanitize_secrets_setting(settings: dict[str, Any]) -> bool:
    """`sanitizeSecrets` of simulation.yaml: whether the simulated provider-kubernetes runs
    with --sanitize-secrets (default true, as docs/getting-started.md installs it)."""
    value = settings.get("sanitizeSecrets", True)
    if not isinstance(value, bool):
        raise FleetError(f"simulation.yaml: sanitizeSecrets must be true or false, not {value!r}")
    return value


def simulate_fleet(
    directory: Path,
    *,
    rounds: int | None,
    fault_texts: tuple[str, ...],
    timeline: Timeline,
    progress: Progress,
    call: Caller,
    seed: int | None = None,
    grid: PhaseGrid | None = None,
) -> dict[str, Any]:
    """Run the simulation, calling functions through `call`; the machine-readable result
    (raises FleetError / FaultError on bad input). `seed`: shuffle the order in which
    composed resources are applied, reproducibly (None: sorted by name). `grid`: where every
    cluster's phase is recorded after each round."""
    fleet = load_fleet(directory)
    settings = load_settings(directory)
    faults = f.faults_from_settings(settings.get("faults")) + [
        f.parse_fault(t) for t in fault_texts
    ]
    limit = rounds or int(settings.get("rounds", DEFAULT_ROUNDS))
    edits = edits_from_settings(settings.get("edits"))
    late = [e for e in edits if e.round > limit]
    if late:
        raise EditError(
            f"edit {late[0].describe()}: round {late[0].round} is past the round limit "
            f"({limit}): raise --rounds (or `rounds` in simulation.yaml)"
        )
    too_late = f.past_the_limit(faults, limit)
    if too_late is not None:
        raise f.FaultError(too_late)
    compositions = repository_compositions()
    if not compositions:
        raise FleetError("cannot find this repository's Compositions (apis/*/composition.yaml)")
    plane = ControlPlane(fleet, compositions, call, workload_clusters(fleet, settings), faults)
    plane.order = random.Random(seed) if seed is not None else None
    plane.providers.sanitize_secrets = sanitize_secrets_setting(settings)
    progress.limit = limit
    plane.on_step = progress.step
    noted = refused = 0
    while plane.round < limit:
        for change in (e for e in edits if e.round == plane.round + 1):
            why_not = apply_edit(plane.store, change)
            if why_not:
                timeline.note(change.round, f"edit of {change.target} refused: {why_not}")
            else:
                timeline.note(change.round, f"edited {change.describe()}")
        plane.run_round()
        for fault, first in plane.applied.items():
            if first == plane.round:
                timeline.note(plane.round, f"fault injected: {fault}")
        for loss in plane.losses[noted:]:
            timeline.note(plane.round, f"LOST {loss.what} on {loss.cluster} ({loss.owner})")
        noted = len(plane.losses)
        for refusal in plane.refusals[refused:]:
            timeline.tell(refusal.round, refusal.what, refusal.message)
        refused = len(plane.refusals)
        xrs = plane.xrs()
        timeline.record(plane.round, xrs, _recheck_after(plane))
        if grid is not None:
            grid.record(plane.round, xrs)
        ready = sum(1 for x in xrs if _ready(x))
        progress.update(plane.round, limit, ready, len(xrs))
        edited = all(e.round <= plane.round for e in edits)
        if plane.all_ready() and plane.faults_settled() and edited:
            break
    progress.done()
    all_ready = plane.all_ready()
    verdicts = assess(plane, timeline.messages, timeline.history, all_ready)
    return {
        "seed": seed,
        "result": "Ready" if all_ready else "RoundLimit",
        "reason": "" if all_ready else _why_not_ready(plane),
        "rounds": plane.round,
        "roundLimit": limit,
        "xrs": {
            xr_id(x): {
                "kind": x["kind"],
                "namespace": x["metadata"].get("namespace", ""),
                "name": x["metadata"]["name"],
                "ready": _ready(x),
                "history": timeline.history.get(xr_id(x), []),
                "status": x.get("status", {}),
                "recheckAfterSeconds": plane.recheck_after.get(key_of(x)),
            }
            for x in plane.xrs()
        },
        "deleted": sorted(i for i in timeline.history if i not in {xr_id(x) for x in plane.xrs()}),
        "events": [asdict(e) for e in plane.events],
        "faults": [asdict(v) for v in verdicts],
        "losses": [asdict(x) for x in plane.losses],
        "refusals": [asdict(x) for x in plane.refusals],
        "clusters": _inventory(plane),
        "ignored": fleet.ignored,
    }


def _checked_faults(texts: tuple[str, ...]) -> tuple[str, ...]:
    """A `--fault` that cannot be understood is a bad option value: a usage error (exit 2),
    like `--rounds 0`; a bad fault in simulation.yaml is bad input (exit 1)."""
    for text in texts:
        try:
            f.parse_fault(text)
        except f.FaultError as exc:
            raise click.BadParameter(str(exc), param_hint="--fault") from None
    return texts


@click.command(help="Reconcile a whole fleet (the XRs in DIR) locally, round after round.")
@click.argument("directory", metavar="DIR", type=click.Path(path_type=Path))
@click.option(
    "--rounds",
    type=click.IntRange(min=1),
    default=None,
    help=f"Round limit (default: simulation.yaml's `rounds`, else {DEFAULT_ROUNDS}).",
)
@click.option(
    "--fault",
    "fault_texts",
    multiple=True,
    metavar="KIND:TARGET[@ROUND[+ROUNDS]]",
    callback=lambda _ctx, _param, texts: _checked_faults(texts),
    help="Inject a fault (repeatable): " + ", ".join(f.KINDS) + ".",
)
@click.option(
    "--output", type=click.Choice(["timeline", "json"]), default="timeline", show_default=True
)
@click.option(
    "--seed",
    type=int,
    default=None,
    help="Apply each XR's composed resources in an order shuffled by this seed (default: "
    "sorted by name). The same inputs and seed give the same run.",
)
@click.option("--quiet", is_flag=True, help="No progress line on stderr.")
@click.option(
    "--timeline",
    "timeline_svg",
    metavar="FILE.svg",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Also draw every cluster's phase per round, as each XR reports it, and each "
    "ModelService's traffic split, into FILE.svg (the same run draws the same bytes).",
)
@function_ports_option
def simulate(
    directory: Path,
    rounds: int | None,
    fault_texts: tuple[str, ...],
    output: str,
    seed: int | None,
    quiet: bool,
    timeline_svg: Path | None,
    function_ports: range | None,
) -> None:
    as_json = output == "json"
    timeline = Timeline(out=None if as_json else sys.stdout)
    progress = Progress(enabled=not quiet)
    grid = PhaseGrid() if timeline_svg is not None else None
    try:
        # A bad directory fails before any function starts.
        load_fleet(directory)
        with running_functions(start=FUNCTIONS, ports=function_ports) as servers:
            result = simulate_fleet(
                directory,
                rounds=rounds,
                fault_texts=fault_texts,
                timeline=timeline,
                progress=progress,
                call=servers,
                seed=seed,
                grid=grid,
            )
    except (FleetError, f.FaultError, EditError, FunctionError, PipelineError) as exc:
        progress.done()
        click.echo(f"modelfleet simulate: {exc}", err=True)
        sys.exit(ExitCode.INPUT_ERROR)
    if grid is not None and timeline_svg is not None:
        title = f"modelfleet simulate {directory.name}: each cluster's phase and split per round"
        try:
            timeline_svg.write_text(draw(grid, title))
        except OSError as exc:
            click.echo(f"modelfleet simulate: {timeline_svg}: {exc.strerror}", err=True)
            sys.exit(ExitCode.INPUT_ERROR)
    if as_json:
        click.echo(json.dumps(whole_numbers_as_int(result), indent=2, sort_keys=True))
    else:
        print_summary(result)
    sys.exit(exit_code(result))


def exit_code(result: dict[str, Any]) -> ExitCode:
    """A fault not survived or without effect says more than a round limit (a fault no
    fleet recovers from ends at the limit by design: its verdict is `contained`), so it
    wins."""
    if any(verdict["verdict"] in FAILING for verdict in result["faults"]):
        return ExitCode.FAULT_NOT_SURVIVED
    return ExitCode.OK if result["result"] == "Ready" else ExitCode.ROUND_LIMIT


def _verdict_text(verdict: dict[str, Any]) -> str:
    if verdict["verdict"] == NO_EFFECT:
        return "did not take effect (nothing it targets was there while it was active)"
    if verdict["verdict"] == CONTAINED:
        return (
            "contained (it lasts, so what it holds stays not Ready, by design; nothing "
            "lost, the user was told)"
        )
    return "survived" if verdict["verdict"] == SURVIVED else "NOT survived"


def print_summary(result: dict[str, Any]) -> None:
    for verdict in result["faults"]:
        click.echo(
            f"fault {verdict['fault']}: {_verdict_text(verdict)}"
            + (f", lost {verdict['lost']}" if verdict["lost"] else "")
        )
    if result["result"] == "Ready":
        click.echo(f"all {len(result['xrs'])} XRs Ready after {result['rounds']} rounds")
    else:
        click.echo(
            f"not Ready after {result['rounds']} rounds (limit {result['roundLimit']}): "
            f"{result['reason']}",
            err=True,
        )
