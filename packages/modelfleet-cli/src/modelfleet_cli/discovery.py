"""Finding this repository's Compositions, and the one Crossplane would pick for an XR.

`modelfleet render` and `modelfleet simulate` run the Compositions of the checkout they are
installed from (an editable workspace install), else of the checkout they are run in.
"""

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import yaml
from modelfleet_contracts.fields import mapping_at, mapping_path


def composition_for(
    xr: Mapping[str, Any], compositions: Iterable[Mapping[str, Any]]
) -> dict[str, Any] | None:
    """The Composition Crossplane would pick for `xr`: the one its
    `spec.crossplane.compositionRef` (v2) or `spec.compositionRef` names, else the first whose
    `spec.compositeTypeRef` has the XR's apiVersion and kind."""
    spec = mapping_at(xr, "spec")
    ref = mapping_path(spec, "crossplane", "compositionRef") or mapping_at(spec, "compositionRef")
    wanted_name = ref.get("name")
    candidates = []
    for comp in compositions:
        type_ref = mapping_path(comp, "spec", "compositeTypeRef")
        if type_ref.get("apiVersion") == xr.get("apiVersion") and type_ref.get("kind") == xr.get(
            "kind"
        ):
            candidates.append(dict(comp))
    if wanted_name:
        return next(
            (c for c in candidates if mapping_at(c, "metadata").get("name") == wanted_name), None
        )
    return candidates[0] if candidates else None


def repository_root(start: Path | None = None) -> Path | None:
    """This repository's root: the nearest directory above this package (an editable
    install in the workspace), else above `start` / the current directory, that holds both
    `crossplane-project.yaml` and `apis/`. None when neither is inside the repository."""
    for origin in (Path(__file__).resolve(), (start or Path.cwd()).resolve()):
        for candidate in (origin, *origin.parents):
            if (candidate / "crossplane-project.yaml").is_file() and (candidate / "apis").is_dir():
                return candidate
    return None


def repository_compositions(root: Path | None = None) -> list[dict[str, Any]]:
    """The Compositions in `apis/*/composition.yaml` of this repository (see
    `repository_root`); empty when the repository cannot be found."""
    root = root or repository_root()
    if root is None:
        return []
    compositions = []
    for path in sorted((root / "apis").glob("*/composition.yaml")):
        for doc in yaml.safe_load_all(path.read_text()):
            if isinstance(doc, dict) and doc.get("kind") == "Composition":
                compositions.append(doc)
    return compositions
