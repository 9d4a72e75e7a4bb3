"""Reading Kubernetes objects from a YAML stream or a directory of YAML files, with errors a
user can act on (which file, which line) instead of tracebacks."""

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml

YAML_SUFFIXES = (".yaml", ".yml", ".json")


class LoadError(ValueError):
    """A path that cannot be read as Kubernetes objects."""


def _documents(path: Path) -> list[dict[str, Any]]:
    try:
        text = path.read_text()
    except OSError as exc:
        raise LoadError(f"cannot read {path}: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise LoadError(f"cannot read {path}: not a UTF-8 text file") from None
    try:
        docs = list(yaml.safe_load_all(text))
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" (line {mark.line + 1}, column {mark.column + 1})" if mark else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise LoadError(f"{path}{where}: invalid YAML: {problem}") from None
    objects = []
    for i, doc in enumerate(docs, start=1):
        if doc is None:
            continue
        if not isinstance(doc, Mapping) or not doc.get("apiVersion") or not doc.get("kind"):
            raise LoadError(f"{path}: document {i} is not a Kubernetes object (apiVersion, kind)")
        objects.append(dict(doc))
    return objects


def load_objects(path: str | Path) -> list[dict[str, Any]]:
    """Every object in `path`: a YAML stream, or a directory whose *.yaml/*.yml/*.json files
    are read in name order (not recursively)."""
    path = Path(path)
    if path.is_dir():
        files = sorted(p for p in path.iterdir() if p.is_file() and p.suffix in YAML_SUFFIXES)
        return [obj for file in files for obj in _documents(file)]
    if not path.exists():
        raise LoadError(f"{path}: no such file or directory")
    return _documents(path)


def load_one(path: str | Path, what: str) -> dict[str, Any]:
    """The single object a file holds (the XR, the Composition); a directory is bad input
    (exit 1, as simulate given a file), not a usage error."""
    if Path(path).is_dir():
        raise LoadError(f"{path} is a directory: expected a file holding one {what}")
    objects = load_objects(path)
    if len(objects) != 1:
        raise LoadError(f"{path}: expected exactly one {what}, found {len(objects)} objects")
    return objects[0]


def of_kind(objects: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [obj for obj in objects if obj.get("kind") == kind]
