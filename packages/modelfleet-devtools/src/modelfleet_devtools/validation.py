"""Validating what we compose and what users write, against the real schemas.

- Core Kubernetes kinds: `kubernetes-validate` (strict: unknown fields are errors, since the
  API server would silently prune them).
- Custom kinds: the CRD's openAPIV3Schema with a JSON-Schema validator. Upstream CRDs come
  from `../shared/schemas/` beside the repository; our own kinds from `apis/*/definition.yaml`.
- `x-kubernetes-validations` CEL rules are evaluated with cel-python. Our XRDs only use
  standard CEL (has, size, in, contains, endsWith, startsWith, matches); no Kubernetes
  extension library is needed, so none is shimmed. Rules using `oldSelf` (transition rules)
  are skipped: there is no previous object here.
- A provider-kubernetes Object is validated together with the manifest it carries.
"""

import copy
import functools
from pathlib import Path
from typing import Any

import celpy
import jsonschema
import kubernetes_validate
import pytest
import yaml

from modelfleet_devtools.paths import SHARED_SCHEMAS_DIR, xrd_paths

_SAFE_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
KUBERNETES_VERSION = "1.33"
SKIP_REASON = f"upstream CRDs not found at {SHARED_SCHEMAS_DIR}; custom kinds not validated"

# Kinds whose schema ships with kubernetes-validate (group "" or a built-in API group).
_BUILTIN_GROUPS = {
    "",
    "apps",
    "batch",
    "storage.k8s.io",
    "rbac.authorization.k8s.io",
    "networking.k8s.io",
    "policy",
    "autoscaling",
    "scheduling.k8s.io",
}


def _group(api_version: str) -> str:
    return api_version.rpartition("/")[0]


def shared_schemas_present() -> bool:
    return SHARED_SCHEMAS_DIR.is_dir()


def require_shared_schemas() -> None:
    """Skip the calling test, with the reason, when the upstream CRDs are not available."""
    if not shared_schemas_present():
        pytest.skip(SKIP_REASON)


@functools.lru_cache(maxsize=1)
def _custom_schemas() -> dict[tuple[str, str], dict[str, Any]]:
    """openAPIV3Schema by (apiVersion, kind) for upstream CRDs and our XRDs."""
    schemas: dict[tuple[str, str], dict[str, Any]] = {}
    sources: list[Path] = list(xrd_paths())
    if shared_schemas_present():
        sources += sorted(SHARED_SCHEMAS_DIR.glob("*.yaml"))
    for path in sources:
        # The upstream CRDs are large: libyaml's safe loader reads them ~10x faster.
        for doc in yaml.load_all(path.read_text(), Loader=_SAFE_LOADER):
            if not isinstance(doc, dict) or doc.get("kind") not in (
                "CustomResourceDefinition",
                "CompositeResourceDefinition",
            ):
                continue
            spec = doc["spec"]
            for version in spec["versions"]:
                schema = copy.deepcopy(version["schema"]["openAPIV3Schema"])
                if doc["kind"] == "CompositeResourceDefinition":
                    schema = _xr_envelope(schema)
                key = (f"{spec['group']}/{version['name']}", spec["names"]["kind"])
                schemas[key] = schema
    return schemas


def _xr_envelope(schema: dict[str, Any]) -> dict[str, Any]:
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
            out.append(r"\Z")
            continue
        out.append(ch)
    return "".join(out)


def _to_json_schema(node: Any) -> Any:
    """OpenAPI v3 structural schema -> JSON Schema, closing objects that declare their
    properties (the API server would prune anything else)."""
    if isinstance(node, list):
        return [_to_json_schema(n) for n in node]
    if not isinstance(node, dict):
        return node
    out = {
        k: _to_json_schema(v)
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
        "properties" in node
        and "additionalProperties" not in node
        and not node.get("x-kubernetes-preserve-unknown-fields")
    ):
        out["additionalProperties"] = False
    if node.get("x-kubernetes-embedded-resource"):
        out.setdefault("properties", {})
    return out


@functools.cache
def _validator(api_version: str, kind: str) -> jsonschema.Draft7Validator | None:
    schema = _custom_schemas().get((api_version, kind))
    if schema is None:
        return None
    return jsonschema.Draft7Validator(_to_json_schema(schema))


def _schema_errors(validator: jsonschema.Draft7Validator, obj: dict[str, Any]) -> list[str]:
    return [
        f"{'.'.join(str(p) for p in e.absolute_path) or '<root>'}: {e.message}"
        for e in sorted(validator.iter_errors(obj), key=lambda e: list(map(str, e.path)))
    ]


# Kubernetes makes property names usable in CEL by escaping them: a CEL keyword `k` becomes
# `__k__`, and `__`, `.`, `-`, `/` become `__underscores__`, `__dot__`, `__dash__`,
# `__slash__` (map keys under additionalProperties are not escaped). Upstream rules rely on
# it, e.g. Crossplane's Usage: `has(self.of.resourceRef.__namespace__)`.
_CEL_KEYWORDS = frozenset(
    [
        "true",
        "false",
        "null",
        "in",
        "as",
        "break",
        "const",
        "continue",
        "else",
        "for",
        "function",
        "if",
        "import",
        "let",
        "loop",
        "package",
        "namespace",
        "return",
        "var",
        "void",
        "while",
    ]
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


def _builtin_errors(manifest: dict[str, Any]) -> list[str]:
    try:
        kubernetes_validate.validate(manifest, KUBERNETES_VERSION, strict=True)
    except kubernetes_validate.ValidationError as exc:
        where = ".".join(str(p) for p in exc.path) or "<root>"
        return [f"{where}: {exc.message}"]
    except (kubernetes_validate.SchemaNotFoundError, kubernetes_validate.InvalidSchemaError) as exc:
        return [f"no Kubernetes {KUBERNETES_VERSION} schema: {exc}"]
    return []


def validate_manifest(manifest: dict[str, Any]) -> list[str]:
    """Errors of one manifest (empty when valid). An Object's remote manifest is validated too.

    Custom kinds whose CRD is unavailable (no `../shared/schemas`) are not checked; use
    `require_shared_schemas()` in tests that must not pass silently without them.
    """
    api_version = str(manifest.get("apiVersion", ""))
    kind = str(manifest.get("kind", ""))
    if not api_version or not kind:
        return ["<root>: apiVersion and kind are required"]
    metadata = manifest.get("metadata")
    name = metadata.get("name", "<unnamed>") if isinstance(metadata, dict) else "<unnamed>"
    label = f"{kind} {name}"
    if _group(api_version) in _BUILTIN_GROUPS:
        errors = _builtin_errors(manifest)
    else:
        validator = _validator(api_version, kind)
        if validator is None:
            if _group(api_version) == "modelfleet.io":
                return [f"{label}: no schema known for {api_version} {kind}"]
            return []  # a custom kind whose CRD we do not have: nothing to check against
        schema = _custom_schemas()[(api_version, kind)]
        errors = _schema_errors(validator, manifest) + cel_errors(schema, manifest)
    errors = [f"{label}: {e}" for e in errors]
    if kind == "Object" and api_version.startswith("kubernetes."):
        inner = manifest.get("spec", {}).get("forProvider", {}).get("manifest")
        if isinstance(inner, dict):
            errors += [f"{label} -> {e}" for e in validate_manifest(inner)]
    return errors


def assert_valid(manifest: dict[str, Any]) -> None:
    """Fail with every error of `manifest`."""
    errors = validate_manifest(manifest)
    assert not errors, "invalid manifest:\n  " + "\n  ".join(errors)


def validate_xr(xr: dict[str, Any]) -> list[str]:
    """Errors of a Modelfleet XR against its XRD: OpenAPI schema and CEL rules."""
    return validate_manifest(xr)


def assert_valid_xr(xr: dict[str, Any]) -> None:
    errors = validate_xr(xr)
    assert not errors, "invalid XR:\n  " + "\n  ".join(errors)
