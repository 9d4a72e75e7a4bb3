"""Reading a fleet directory: the XRs and Secrets a user would `kubectl apply`."""

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from modelfleet_contracts.api import (
    API_VERSION,
    INFERENCE_CLUSTER,
    MODEL_CACHE,
    MODEL_CACHE_SHARD,
    MODEL_DEPLOYMENT,
    MODEL_REPLICA,
    MODEL_SERVICE,
)

from modelfleet_cli.xrd import check_xr, unserved

SETTINGS_FILE = "simulation.yaml"
# Files in a fleet directory that are not fleet objects.
NOT_FLEET = frozenset({SETTINGS_FILE, "functions.yaml"})
# The order XRs are listed in (timeline, JSON): what others read comes first.
XR_ORDER = (
    INFERENCE_CLUSTER,
    MODEL_CACHE,
    MODEL_CACHE_SHARD,
    MODEL_DEPLOYMENT,
    MODEL_REPLICA,
    MODEL_SERVICE,
)


class FleetError(ValueError):
    """The directory cannot be simulated; the message is one line for the user."""


@dataclass
class Fleet:
    xrs: list[dict[str, Any]] = field(default_factory=list)
    secrets: list[dict[str, Any]] = field(default_factory=list)
    ignored: list[str] = field(default_factory=list)  # "<file>: <kind> <name>"


def xr_id(obj: dict[str, Any]) -> str:
    """`Kind namespace/name` or `Kind name`: how the timeline names an object."""
    metadata = obj.get("metadata")
    metadata = metadata if isinstance(metadata, dict) else {}
    name = metadata.get("name") or "(no name)"
    ns = metadata.get("namespace")
    return f"{obj.get('kind')} {ns}/{name}" if ns else f"{obj.get('kind')} {name}"


def _validate(path: Path, obj: dict[str, Any]) -> None:
    """Refuse an XR the API server would refuse (an unknown field included)."""
    metadata = obj.get("metadata")
    if not isinstance(metadata, dict):
        metadata = obj["metadata"] = {}
    if obj["kind"] != INFERENCE_CLUSTER:
        metadata.setdefault("namespace", "default")
    check = check_xr(obj)
    if check.refused:
        raise FleetError(f"{path}: {check.refusal(xr_id(obj))}")


def load_fleet(directory: Path) -> Fleet:
    if directory.is_file():
        raise FleetError(
            f"{directory} is a file: simulate reads a directory (every *.yaml in it, the "
            "fleet a user would kubectl apply); put the file in a directory of its own"
        )
    if not directory.is_dir():
        raise FleetError(f"{directory}: no such directory")
    files = sorted(
        p for p in directory.iterdir() if p.suffix in (".yaml", ".yml") and p.name not in NOT_FLEET
    )
    fleet = Fleet()
    seen: set[str] = set()
    for path in files:
        try:
            docs = [d for d in yaml.safe_load_all(path.read_text()) if d is not None]
        except yaml.YAMLError as exc:
            mark = getattr(exc, "problem_mark", None)
            where = f" line {mark.line + 1}" if mark is not None else ""
            problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
            raise FleetError(f"{path}:{where}: YAML error: {problem}") from None
        except OSError as exc:
            raise FleetError(f"{path}: cannot read: {exc.strerror}") from None
        for doc in docs:
            if not isinstance(doc, dict) or "kind" not in doc:
                raise FleetError(f"{path}: a document is not a Kubernetes object (no kind)")
            kind, api_version = doc.get("kind"), doc.get("apiVersion")
            refusal = unserved(doc)
            if refusal is not None:
                raise FleetError(f"{path}: {xr_id(doc)}: {refusal}")
            if api_version == API_VERSION and kind in XR_ORDER:
                _validate(path, doc)
                ident = xr_id(doc)
                if ident in seen:
                    raise FleetError(f"{path}: {ident} is defined twice")
                seen.add(ident)
                fleet.xrs.append(doc)
            elif api_version == "v1" and kind == "Secret":
                doc.setdefault("metadata", {}).setdefault("namespace", "default")
                fleet.secrets.append(doc)
            else:
                name = (doc.get("metadata") or {}).get("name", "")
                fleet.ignored.append(f"{path.name}: {api_version} {kind} {name}")
    if not fleet.xrs:
        raise FleetError(
            f"{directory}: no InferenceCluster, ModelCache, ModelDeployment or ModelReplica found"
        )
    fleet.xrs.sort(key=lambda o: (XR_ORDER.index(o["kind"]), xr_id(o)))
    return fleet


def load_settings(directory: Path) -> dict[str, Any]:
    """The optional `simulation.yaml` of a fleet directory ({} when absent)."""
    path = directory / SETTINGS_FILE
    if not path.is_file():
        return {}
    try:
        data = yaml.safe_load(path.read_text())
    except yaml.YAMLError as exc:
        raise FleetError(f"{path}: YAML error: {str(exc).splitlines()[0]}") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise FleetError(f"{path}: expected a mapping of settings")
    return data
