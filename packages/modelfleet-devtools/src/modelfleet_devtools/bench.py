"""RunFunction benchmark harness: latency and peak memory beside the decode/encode floor.

The floor is what any function pays for a request of that size: decoding the request bytes
and encoding a response as large as the one the function returned. A function's own work
is the gap between its latency and that floor, so the table reports the ratio.

`run_script` is every function benchmark script's command line; its --write-docs puts each
table, as printed, into its section of docs/benchmarks.md (`docs_sections`).
"""

import argparse
import gc
import json
import os
import platform
import statistics
import time
import tracemalloc
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path
from typing import Any, Protocol

from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from google.protobuf.internal import api_implementation

from modelfleet_devtools.docs_sections import (
    BENCHMARKS_DOC,
    SectionError,
    check_sections,
    script_command,
    section_name,
    write_sections,
)
from modelfleet_devtools.world import observed_object

MIB = 1024 * 1024
OBJECT_API = "kubernetes.m.crossplane.io/v1alpha1"
# The field manager Crossplane applies composed resources as (and the composition's digest).
COMPOSED_MANAGER = "apiextensions.crossplane.io/composed/" + "0" * 64
GRPC_DEFAULT_LIMIT = 4 * MIB


class Runner(Protocol):
    def run(self, req: fnv1.RunFunctionRequest) -> fnv1.RunFunctionResponse: ...


@dataclass(frozen=True)
class Row:
    size: int
    request_bytes: int
    response_bytes: int
    latency_ms: float
    floor_ms: float
    peak_mib: float
    floor_peak_mib: float

    @property
    def ratio(self) -> float:
        return self.latency_ms / self.floor_ms if self.floor_ms else float("inf")


def _elapsed_ms(fn: Callable[[], object]) -> float:
    gc.collect()
    start = time.perf_counter()
    fn()
    return (time.perf_counter() - start) * 1000


def _paired_medians_ms(
    fn: Callable[[], object], floor: Callable[[], object], repeats: int
) -> tuple[float, float]:
    """Median latency of `fn` and of `floor`, sampled alternately so that both see the same
    machine load (on a shared machine, timing one block after the other skews the ratio)."""
    samples: list[float] = []
    floor_samples: list[float] = []
    for _ in range(repeats):
        samples.append(_elapsed_ms(fn))
        floor_samples.append(_elapsed_ms(floor))
    return statistics.median(samples), statistics.median(floor_samples)


def _peak_mib(fn: Callable[[], object]) -> float:
    gc.collect()
    tracemalloc.start()
    try:
        fn()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return peak / MIB


def measure(
    size: int, build_request: Callable[[int], fnv1.RunFunctionRequest], runner: Runner
) -> Row:
    """One row: the function end to end (bytes in, bytes out) against the floor."""
    payload = build_request(size).SerializeToString()
    response = runner.run(fnv1.RunFunctionRequest.FromString(payload))

    def function_call() -> bytes:
        req = fnv1.RunFunctionRequest.FromString(payload)
        return runner.run(req).SerializeToString()

    def floor_call() -> bytes:
        fnv1.RunFunctionRequest.FromString(payload)
        return response.SerializeToString()

    repeats = max(5, min(50, 2000 // max(size, 1)))
    function_call()  # warm caches and imports
    latency_ms, floor_ms = _paired_medians_ms(function_call, floor_call, repeats)
    return Row(
        size=size,
        request_bytes=len(payload),
        response_bytes=response.ByteSize(),
        latency_ms=latency_ms,
        floor_ms=floor_ms,
        peak_mib=_peak_mib(function_call),
        floor_peak_mib=_peak_mib(floor_call),
    )


def format_table(rows: Sequence[Row], axis: str = "clusters") -> str:
    """A Markdown table of the rows; `axis` names what the size counts."""
    lines = [
        f"| {axis} | request | response | latency | floor | ratio | peak mem | floor peak mem |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        flag = " ⚠ >4 MiB" if r.response_bytes >= GRPC_DEFAULT_LIMIT else ""
        lines.append(
            f"| {r.size} | {r.request_bytes / MIB:.2f} MiB "
            f"| {r.response_bytes / MIB:.2f} MiB{flag} "
            f"| {r.latency_ms:.1f} ms | {r.floor_ms:.1f} ms | {r.ratio:.2f}x "
            f"| {r.peak_mib:.1f} MiB | {r.floor_peak_mib:.1f} MiB |"
        )
    return "\n".join(lines)


def require_ready(runner: Runner, req: fnv1.RunFunctionRequest, what: str) -> None:
    """Stop unless the function reports the composite Ready for `req`: a benchmark of the
    steady state must not silently measure an error or a hold path instead."""
    rsp = runner.run(req)
    if rsp.desired.composite.ready != fnv1.READY_TRUE:
        reasons = ", ".join(f"{c.type}={c.reason}: {c.message}" for c in rsp.conditions)
        raise SystemExit(f"{what}: expected the composite Ready, got {reasons or 'no conditions'}")


def fields_v1(tree: Any, *, keyed_lists: bool = False) -> dict[str, Any]:
    """The field set a managedFields entry records for `tree`: every field of a map by name,
    its own fields below it. Lists are recorded as a whole, as a schema without list types
    (an Object's preserved manifest) has them; `keyed_lists`: as Kubernetes' own types
    have them, the items of a list of maps by their key (`name` or `type`)."""
    if isinstance(tree, list) and keyed_lists:
        items = {}
        for index, item in enumerate(tree):
            if not isinstance(item, dict):
                return {}
            key = next((k for k in ("name", "type") if k in item), None)
            label = json.dumps({key: item[key]}) if key else json.dumps(index)
            items[f"k:{label}" if key else f"i:{label}"] = fields_v1(item, keyed_lists=True)
        return items
    if not isinstance(tree, dict):
        return {}
    fields = {f"f:{k}": fields_v1(v, keyed_lists=keyed_lists) for k, v in tree.items()}
    return {".": {}, **fields}


def _owned(obj: dict[str, Any], *fields: str) -> dict[str, Any]:
    return {f: obj[f] for f in fields if f in obj}


def _server_metadata(
    obj: dict[str, Any], applier: str, status_manager: str, *, keyed_lists: bool = False
) -> None:
    """What an API server adds to an object it stores: uid, versions, and managed fields as
    a real one records them, the applier owning the metadata it set and the spec, the
    status writer the status (their size follows the object's, as on a real server)."""
    metadata = obj.setdefault("metadata", {})
    metadata.setdefault("uid", str(uuid.uuid4()))
    metadata.setdefault("resourceVersion", "18446744")
    metadata.setdefault("generation", 1)
    metadata.setdefault("creationTimestamp", "2026-01-01T00:00:00Z")
    if "managedFields" in metadata:
        return
    applied = {
        "metadata": _owned(metadata, "labels", "annotations", "generateName", "ownerReferences")
    } | _owned(obj, "spec", "data", "type")
    entries = [_entry(applier, "Apply", applied, keyed_lists=keyed_lists)]
    if obj.get("status"):
        status = {"status": obj["status"]}
        entries.append(_entry(status_manager, "Update", status, "status", keyed_lists=keyed_lists))
    metadata["managedFields"] = entries


def _entry(
    manager: str,
    operation: str,
    owned: dict[str, Any],
    subresource: str | None = None,
    *,
    keyed_lists: bool = False,
) -> dict[str, Any]:
    entry = {
        "apiVersion": "v1",
        "fieldsType": "FieldsV1",
        "manager": manager,
        "operation": operation,
        "time": "2026-01-01T00:00:00Z",
        "fieldsV1": {
            k: v for k, v in fields_v1(owned, keyed_lists=keyed_lists).items() if k != "."
        },
    }
    if subresource:
        entry["subresource"] = subresource
    return entry


STAMP = "2026-01-01T00:00:00Z"


def as_stored(obj: dict[str, Any], applier: str = "kubectl") -> dict[str, Any]:
    """`obj`, an XR, as Crossplane sends it as a required resource: what Crossplane adds to
    its spec (composition and five composed resources' refs, as an InferenceCluster has) and
    its status (Synced, Ready, Responsive), and the API server's metadata."""
    name = obj.get("metadata", {}).get("name", "")
    refs = [
        {"apiVersion": OBJECT_API, "kind": "Object", "name": f"{name}-{i:012x}"} for i in range(5)
    ]
    obj.setdefault("spec", {})["crossplane"] = {
        "compositionRef": {"name": "inferenceclusters"},
        "compositionRevisionRef": {"name": "inferenceclusters-0a1b2c3"},
        "compositionUpdatePolicy": "Automatic",
        "resourceRefs": refs,
    }
    status = obj.setdefault("status", {})
    status["conditions"] = [
        *(status.get("conditions") or []),
        {"type": "Synced", "status": "True", "reason": "ReconcileSuccess"},
        {"type": "Ready", "status": "True", "reason": "Available"},
        {"type": "Responsive", "status": "True", "reason": "WatchCircuitClosed"},
    ]
    for condition in status["conditions"]:
        condition.setdefault("lastTransitionTime", STAMP)
        condition.setdefault("observedGeneration", 3)
    _server_metadata(obj, applier, "apiextensions.crossplane.io/composite", keyed_lists=True)
    crossplane = {"spec": {"crossplane": obj["spec"]["crossplane"]}}
    obj["metadata"]["managedFields"].append(
        _entry("apiextensions.crossplane.io/composite", "Apply", crossplane)
    )
    return obj


# What a real API server fills in on the remote objects the benchmarks echo (read off a
# request Crossplane sent, functions/compose-model-cache/tests/captured/).
_CONTAINER_DEFAULTS = {
    "imagePullPolicy": "IfNotPresent",
    "terminationMessagePath": "/dev/termination-log",
    "terminationMessagePolicy": "File",
}
_POD_DEFAULTS = {
    "dnsPolicy": "ClusterFirst",
    "schedulerName": "default-scheduler",
    "securityContext": {},
    "terminationGracePeriodSeconds": 30,
}
_JOB_DEFAULTS = {
    "completionMode": "NonIndexed",
    "completions": 1,
    "parallelism": 1,
    "manualSelector": False,
    "suspend": False,
}


def _remote_defaults(manifest: dict[str, Any]) -> None:
    uid = str(uuid.uuid4())
    if manifest.get("kind") == "Job":
        spec = manifest.setdefault("spec", {})
        for key, value in _JOB_DEFAULTS.items():
            spec.setdefault(key, value)
        job = manifest.get("metadata", {}).get("name", "")
        owned = {"batch.kubernetes.io/controller-uid": uid, "controller-uid": uid}
        owned |= {"batch.kubernetes.io/job-name": job, "job-name": job}
        spec["selector"] = {"matchLabels": {"batch.kubernetes.io/controller-uid": uid}}
        template = spec.setdefault("template", {})
        template.setdefault("metadata", {}).setdefault("labels", {}).update(owned)
        pod = template.setdefault("spec", {})
        for key, value in _POD_DEFAULTS.items():
            pod.setdefault(key, value)
        if "serviceAccountName" in pod:
            pod.setdefault("serviceAccount", pod["serviceAccountName"])
        for container in pod.get("containers", []):
            for key, value in _CONTAINER_DEFAULTS.items():
                container.setdefault(key, value)
    elif manifest.get("kind") == "PersistentVolumeClaim":
        spec = manifest.setdefault("spec", {})
        spec.setdefault("volumeMode", "Filesystem")
        spec.setdefault("volumeName", f"pvc-{uid}")
        metadata = manifest.setdefault("metadata", {})
        metadata.setdefault("finalizers", ["kubernetes.io/pvc-protection"])
        metadata.setdefault("annotations", {}).update(
            {
                "pv.kubernetes.io/bind-completed": "yes",
                "pv.kubernetes.io/bound-by-controller": "yes",
            }
        )
    for condition in (manifest.get("status") or {}).get("conditions") or []:
        condition.setdefault("lastProbeTime", STAMP)
        condition.setdefault("lastTransitionTime", STAMP)


def observed_as_stored(
    desired: dict[str, Any], *, remote_status: dict[str, Any] | None, ready: bool | None
) -> dict[str, Any]:
    """A composed Object as Crossplane sends it back once provider-kubernetes observed it:
    the Object and its echoed remote manifest both carry the server-set metadata a real API
    server adds, managed fields included, so request sizes are those of a real fleet rather
    than a minimal fixture."""
    obj = observed_object(desired, remote_status=remote_status, ready=ready)
    manifest = obj["status"]["atProvider"]["manifest"]
    if manifest:
        _remote_defaults(manifest)
        _server_metadata(
            manifest, "provider-kubernetes", "kube-controller-manager", keyed_lists=True
        )
    metadata = obj.setdefault("metadata", {})
    # What the provider's managed reconciler writes on the Object itself.
    reconciler = {
        "annotations": {
            "crossplane.io/external-name": metadata.get("name", ""),
            "crossplane.io/external-create-pending": STAMP,
            "crossplane.io/external-create-succeeded": STAMP,
        },
        "finalizers": ["finalizer.managedresource.crossplane.io"],
    }
    for condition in obj["status"]["conditions"]:
        condition.setdefault("lastTransitionTime", STAMP)
        condition.setdefault("observedGeneration", 1)
    _server_metadata(obj, COMPOSED_MANAGER, "provider-kubernetes")
    metadata.setdefault("annotations", {}).update(reconciler["annotations"])
    metadata.setdefault("finalizers", reconciler["finalizers"])
    metadata["managedFields"].insert(
        1, _entry("provider-kubernetes", "Update", {"metadata": reconciler})
    )
    return obj


def observed_ready(
    desired: dict[str, dict[str, Any]],
    remote_status: Callable[[dict[str, Any]], dict[str, Any] | None] = lambda manifest: None,
) -> dict[str, dict[str, Any]]:
    """Every desired composed resource as observed Ready. provider-kubernetes Objects echo
    their manifest with `remote_status(manifest)`; other kinds (provider configs, Helm
    releases, XRs) carry the server metadata and Ready/Synced conditions."""
    observed: dict[str, dict[str, Any]] = {}
    for name, obj in desired.items():
        manifest = obj.get("spec", {}).get("forProvider", {}).get("manifest")
        if obj.get("kind") == "Object" and isinstance(manifest, dict):
            observed[name] = observed_as_stored(
                obj, remote_status=remote_status(manifest), ready=True
            )
        else:
            seen = observed_object(obj, ready=True)
            del seen["status"]["atProvider"]
            _server_metadata(seen, COMPOSED_MANAGER, "provider-kubernetes")
            observed[name] = seen
    return observed


def exit_status(rows: Sequence[Row]) -> int:
    """A benchmark script's exit status: 0 when every response fits under the 4 MiB
    Crossplane's gRPC client accepts, 1 otherwise."""
    return 0 if all(r.response_bytes < GRPC_DEFAULT_LIMIT for r in rows) else 1


@dataclass(frozen=True)
class Scenario:
    """One table of a benchmark script: its heading, the request it measures at each size and,
    when the script has several tables, the table's name in its docs section's name."""

    title: str
    build_request: Callable[[int], fnv1.RunFunctionRequest]
    table: str | None = None


def scenario_sections(script: Path | str, scenarios: Sequence[Scenario]) -> dict[str, Scenario]:
    """Each scenario of `script` by the name of the docs section its table goes to."""
    sections = {section_name(script, s.table): s for s in scenarios}
    if len(sections) != len(scenarios):
        raise ValueError(f"{script}: two scenarios would write the same docs section")
    return sections


def _arguments(
    doc: str | None, default: Sequence[int], argv: Sequence[str] | None
) -> argparse.Namespace:
    """The sizes a script was asked for and whether to write the docs, which must show the
    full table (so no sizes with --write-docs)."""
    parser = argparse.ArgumentParser(
        description=doc, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "sizes",
        nargs="*",
        type=int,
        help=f"sizes to measure (default: {' '.join(map(str, default))})",
    )
    parser.add_argument(
        "--write-docs",
        action="store_true",
        help="measure every default size and write each table as printed into its section "
        f"of docs/{BENCHMARKS_DOC.name}",
    )
    args = parser.parse_args(argv)
    if args.write_docs and args.sizes:
        parser.error("--write-docs measures every default size: give no sizes with it")
    return args


def provenance(command: str, load_before: float, load_after: float) -> str:
    """The line under a table's heading saying what printed it, when and on what machine."""
    return (
        f"Measured by `{command}` on {datetime.now(UTC):%Y-%m-%d}: {os.cpu_count()} CPUs, "
        f"Python {platform.python_version()}, protobuf {metadata.version('protobuf')} "
        f"({api_implementation.Type()}); 1-minute load average {load_before:.2f} before this "
        f"table, {load_after:.2f} after."
    )


def run_script(
    doc: str | None,
    script: Path | str,
    runner: Runner,
    scenarios: Sequence[Scenario],
    default_sizes: Sequence[int],
    *,
    axis: str = "clusters",
    argv: Sequence[str] | None = None,
    docs: Path = BENCHMARKS_DOC,
) -> int:
    """A benchmark script's command line: prints each scenario's heading, `provenance` line
    and table at the sizes asked (all of `default_sizes` when none are). With --write-docs,
    each table as printed also replaces its section of `docs` (`scenario_sections`), whose
    markers are checked before anything is measured. Returns the exit status
    (`exit_status`)."""
    args = _arguments(doc, default_sizes, argv)
    sizes = tuple(args.sizes) or tuple(default_sizes)
    sections = scenario_sections(script, scenarios)
    if args.write_docs:
        try:
            check_sections(docs, sections)
        except SectionError as err:
            raise SystemExit(f"--write-docs: {err}") from err
    # The command that prints the table: --write-docs only adds where the output goes.
    command = " ".join([script_command(script), *map(str, args.sizes)])
    printed: dict[str, str] = {}
    rows: list[Row] = []
    for name, scenario in sections.items():
        load_before = os.getloadavg()[0]
        measured = [measure(size, scenario.build_request, runner) for size in sizes]
        load_after = os.getloadavg()[0]
        printed[name] = "\n\n".join(
            [
                f"### {scenario.title}",
                provenance(command, load_before, load_after),
                format_table(measured, axis),
            ]
        )
        print(printed[name], end="\n\n", flush=True)
        rows += measured
    if args.write_docs:
        write_sections(docs, printed)
    return exit_status(rows)
