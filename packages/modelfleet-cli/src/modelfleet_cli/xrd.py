"""Checking an XR against its XRD as the API server does before any function sees it.

- The OpenAPI schema (types, patterns, ranges, enums) with a JSON-Schema validator; `$`
  anchors are made end-of-text, as in the API server's Go RE2.
- The `x-kubernetes-validations` CEL rules, evaluated with cel-python (rules with `oldSelf`
  compare with a previous object, which there is not here: skipped).
- Unknown fields: kubectl's default strict field validation refuses an object with a field its
  schema does not declare (`strict decoding error: unknown field "spec.clusterSelecter"`), and
  so does this check: a misspelt optional field would otherwise be dropped in silence (a
  misspelt `clusterSelector` stages the model on every cluster).

`modelfleet render` and `modelfleet simulate` both check with `check_xr`, so an XR is refused
with the same words by each. The test suite's validator
(modelfleet_devtools.validation) uses the same schema conversion and CEL walk.
"""

import copy
import functools
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import celpy
import jsonschema
import yaml

from modelfleet_cli.discovery import repository_root
from modelfleet_cli.object_meta import metadata_errors

END_OF_TEXT = r"\Z"


def re2_end_of_text(pattern: str) -> str:
    """`pattern` with every `$` anchor made end-of-text, as in the API server's Go RE2.

    JSON-Schema validators use Python's `re`, where `$` also matches before a final
    newline, so `^[a-z]+$` would accept "abc\\n" that Kubernetes rejects.
    """
    out, escaped, in_class = [], False, False
    for ch in pattern:
        if escaped:
            escaped = False
        elif ch == "\\":
            escaped = True
        elif ch == "[":
            in_class = True
        elif ch == "]":
            in_class = False
        elif ch == "$" and not in_class:
            out.append(END_OF_TEXT)
            continue
        out.append(ch)
    return "".join(out)


def to_json_schema(node: Any, *, closed: bool = True) -> Any:
    """OpenAPI v3 structural schema -> JSON Schema. `closed`: objects that declare their
    properties refuse others (the API server would prune them)."""
    if isinstance(node, list):
        return [to_json_schema(n, closed=closed) for n in node]
    if not isinstance(node, dict):
        return node
    out = {
        k: to_json_schema(v, closed=closed)
        for k, v in node.items()
        if not k.startswith("x-kubernetes-") and k != "nullable"
    }
    if isinstance(node.get("pattern"), str):
        out["pattern"] = re2_end_of_text(node["pattern"])
    if node.get("x-kubernetes-int-or-string"):
        out.pop("type", None)
        out["anyOf"] = [{"type": "integer"}, {"type": "string"}]
    if node.get("nullable") and "type" in out:
        out["type"] = [out["type"], "null"]
    if (
        closed
        and "properties" in node
        and "additionalProperties" not in node
        and not node.get("x-kubernetes-preserve-unknown-fields")
    ):
        out["additionalProperties"] = False
    if node.get("x-kubernetes-embedded-resource"):
        out.setdefault("properties", {})
    return out


# Crossplane declares `metadata.name: {type: string, maxLength: 63}` in the CRD it generates
# from every XRD (internal/xcrd), since it writes an XR's name into label values
# (`crossplane.io/composite` on everything composed beneath it); the API server refuses a
# longer name with its words for maxLength.
XR_NAME_MAX = 63


def xr_name_errors(xr: Mapping[str, Any]) -> list[str]:
    """The API server's refusal of an XR name longer than Crossplane's CRD allows."""
    metadata = xr.get("metadata")
    name = metadata.get("name") if isinstance(metadata, Mapping) else None
    if isinstance(name, str) and len(name.encode()) > XR_NAME_MAX:
        return [f"metadata.name: Too long: may not be more than {XR_NAME_MAX} bytes"]
    return []


def xr_envelope(schema: dict[str, Any]) -> dict[str, Any]:
    """An XRD declares spec and status; the XR also has the usual object envelope, and
    Crossplane adds `spec.crossplane` to v2 XRs."""
    properties = dict(schema.get("properties", {}))
    properties.setdefault("apiVersion", {"type": "string"})
    properties.setdefault("kind", {"type": "string"})
    properties.setdefault("metadata", {"type": "object"})
    spec = dict(properties.get("spec", {"type": "object"}))
    spec_props = dict(spec.get("properties", {}))
    spec_props.setdefault(
        "crossplane", {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
    )
    spec["properties"] = spec_props
    properties["spec"] = spec
    return {**schema, "type": "object", "properties": properties}


# Kubernetes makes property names usable in CEL by escaping them: a CEL keyword `k` becomes
# `__k__`, and `__`, `.`, `-`, `/` become `__underscores__`, `__dot__`, `__dash__`,
# `__slash__` (map keys under additionalProperties are not escaped). Upstream rules rely on
# it, e.g. Crossplane's Usage: `has(self.of.resourceRef.__namespace__)`.
_CEL_KEYWORDS = frozenset(
    {
        *("true", "false", "null", "in", "as", "break", "const", "continue", "else", "for"),
        *("function", "if", "import", "let", "loop", "package", "namespace", "return", "var"),
        *("void", "while"),
    }
)
_CEL_ESCAPES = (("__", "__underscores__"), (".", "__dot__"), ("-", "__dash__"), ("/", "__slash__"))


def _cel_property(name: str) -> str:
    if name in _CEL_KEYWORDS:
        return f"__{name}__"
    for raw, escaped in _CEL_ESCAPES:
        name = name.replace(raw, escaped)
    return name


def _cel_value(schema: Any, value: Any) -> Any:
    """`value` with its declared property names escaped as Kubernetes does for CEL."""
    if not isinstance(schema, dict):
        return value
    if isinstance(value, dict):
        properties = schema.get("properties") or {}
        extra = schema.get("additionalProperties")
        return {
            (_cel_property(k) if k in properties else k): _cel_value(properties.get(k, extra), v)
            for k, v in value.items()
        }
    if isinstance(value, list):
        return [_cel_value(schema.get("items"), v) for v in value]
    return value


@functools.cache
def _cel_program(rule: str) -> Any:
    env = celpy.Environment()
    return env.program(env.compile(rule))


def cel_errors(schema: dict[str, Any], value: Any, path: str = "") -> list[str]:
    """Messages of the `x-kubernetes-validations` rules that `value` breaks, walking the
    schema and the value together."""
    errors: list[str] = []
    if not isinstance(schema, dict):
        return errors
    for rule in schema.get("x-kubernetes-validations") or []:
        expr = rule["rule"]
        if "oldSelf" in expr:
            continue
        try:
            ok = _cel_program(expr).evaluate({"self": celpy.json_to_cel(_cel_value(schema, value))})
        except Exception as exc:  # a rule that cannot be evaluated is itself an error
            errors.append(f"{path or '<root>'}: rule {expr!r} could not be evaluated: {exc}")
            continue
        if not bool(ok):
            errors.append(f"{path or '<root>'}: {rule.get('message') or expr}")
    if isinstance(value, dict):
        for key, sub in (schema.get("properties") or {}).items():
            if key in value:
                errors += cel_errors(sub, value[key], f"{path}.{key}" if path else key)
        extra = schema.get("additionalProperties")
        if isinstance(extra, dict):
            for key, item in value.items():
                errors += cel_errors(extra, item, f"{path}.{key}" if path else key)
    elif isinstance(value, list) and isinstance(schema.get("items"), dict):
        for i, item in enumerate(value):
            errors += cel_errors(schema["items"], item, f"{path}[{i}]")
    return errors


def prune_unknown(schema: Any, value: Any, path: str = "") -> list[str]:
    """Remove from `value` the fields its schema does not declare; their paths, as kubectl
    names them (`spec.nodePools[0].gpu.model`)."""
    if not isinstance(schema, dict):
        return []
    found: list[str] = []
    if isinstance(value, dict):
        properties = schema.get("properties")
        extra = schema.get("additionalProperties")
        keeps_unknown = bool(schema.get("x-kubernetes-preserve-unknown-fields"))
        for key in list(value):
            where = f"{path}.{key}" if path else str(key)
            if properties is not None and key in properties:
                found += prune_unknown(properties[key], value[key], where)
            elif isinstance(extra, dict):
                found += prune_unknown(extra, value[key], where)
            elif properties is not None and extra is None and not keeps_unknown:
                found.append(where)
                del value[key]
    elif isinstance(value, list):
        for i, item in enumerate(value):
            found += prune_unknown(schema.get("items"), item, f"{path}[{i}]")
    return found


@functools.cache
def _served(root: Path) -> dict[tuple[str, str], tuple[dict[str, Any], bool]]:
    """Every XRD version in `root`/apis by (apiVersion, kind): the XR schema (with its
    envelope) and whether the XR is namespaced (the XRD's `scope`)."""
    served = {}
    for path in sorted((root / "apis").glob("*/definition.yaml")):
        for doc in yaml.safe_load_all(path.read_text()):
            if not isinstance(doc, dict) or doc.get("kind") != "CompositeResourceDefinition":
                continue
            spec = doc["spec"]
            namespaced = spec.get("scope", "Namespaced") == "Namespaced"
            for version in spec["versions"]:
                schema = xr_envelope(version["schema"]["openAPIV3Schema"])
                key = (f"{spec['group']}/{version['name']}", spec["names"]["kind"])
                served[key] = (schema, namespaced)
    return served


def _schemas(root: Path) -> dict[tuple[str, str], dict[str, Any]]:
    return {key: schema for key, (schema, _) in _served(root).items()}


def unserved(obj: Mapping[str, Any], root: Path | None = None) -> str | None:
    """kubectl's refusal of an object that claims one of our API groups with an apiVersion
    or kind no XRD serves (`modelfleet.io/v1`, `kind: ModelCaches`), naming what
    is served; None for a served one or another API's object."""
    root = root or repository_root()
    if root is None:
        return None
    api_version, kind = str(obj.get("apiVersion", "")), str(obj.get("kind", ""))
    served = sorted(_schemas(root))
    if (api_version, kind) in served:
        return None
    if api_version.rpartition("/")[0] not in {v.rpartition("/")[0] for v, _ in served}:
        return None  # another API's object (a user's own XR and Composition render freely)
    listed = ", ".join(f"{k} ({v})" for v, k in served)
    return (
        f'no matches for kind "{kind}" in version "{api_version}": no CRD serves it '
        f"(served: {listed})"
    )


@functools.cache
def _validator(root: Path, api_version: str, kind: str) -> jsonschema.Draft7Validator:
    schema = _schemas(root)[(api_version, kind)]
    return jsonschema.Draft7Validator(to_json_schema(schema, closed=False))


@dataclass
class XrCheck:
    """What the API server would say of an XR applied with kubectl's default strict field
    validation: unknown fields refuse it first (as decoding does), then errors."""

    kind: str = ""
    errors: list[str] = field(default_factory=list)
    unknown: list[str] = field(default_factory=list)

    @property
    def refused(self) -> bool:
        return bool(self.errors or self.unknown)

    def refusal(self, what: str) -> str:
        """One line: every unknown field, as the API server names them; else the first error
        (and how many there are)."""
        if self.unknown:
            fields = ", ".join(f'unknown field "{path}"' for path in self.unknown)
            return f"{what} cannot be handled as a {self.kind}: strict decoding error: {fields}"
        more = f" ({len(self.errors)} problems)" if len(self.errors) > 1 else ""
        return f"{what} is invalid: {self.errors[0]}{more}"


def kubectl_path(parts: Iterable[str | int]) -> str:
    """A field path as kubectl and the API server write it: `spec.nodePools[0].gpu.count`."""
    out = ""
    for part in parts:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def _message(error: jsonschema.ValidationError) -> str:
    """jsonschema's message, with a pattern shown as the XRD writes it."""
    if error.validator == "pattern" and isinstance(error.validator_value, str):
        written = error.validator_value.replace(END_OF_TEXT, "$")
        return f"{error.instance!r} does not match {written!r}"
    return str(error.message)


def has_definition(xr: Mapping[str, Any], root: Path | None = None) -> bool:
    root = root or repository_root()
    return root is not None and (xr.get("apiVersion"), xr.get("kind")) in _schemas(root)


def check_xr(xr: dict[str, Any], root: Path | None = None) -> XrCheck:
    """Check `xr` as the API server would: unknown fields, its name (Crossplane's CRD allows
    63 bytes) and namespace, then against its XRD in `root` (default: this repository). An
    XR of a kind without an XRD there is not checked (see `unserved` for one that claims
    ours)."""
    root = root or repository_root()
    if root is None or not has_definition(xr, root):
        return XrCheck()
    api_version, kind = str(xr["apiVersion"]), str(xr["kind"])
    schema, namespaced = _served(root)[(api_version, kind)]
    meta_errors = metadata_errors(xr, namespaced=namespaced) + xr_name_errors(xr)
    unknown = prune_unknown(schema, xr)
    errors = meta_errors + [
        f"{kubectl_path(e.absolute_path) or '<root>'}: {_message(e)}"
        for e in sorted(
            _validator(root, api_version, kind).iter_errors(copy.deepcopy(xr)),
            key=lambda e: list(map(str, e.absolute_path)),
        )
    ]
    return XrCheck(kind, errors + cel_errors(schema, xr), unknown)
