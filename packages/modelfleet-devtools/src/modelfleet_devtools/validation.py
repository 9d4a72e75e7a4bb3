"""Validating what we compose and what users write, against the real schemas.

- Core Kubernetes kinds: `kubernetes-validate` (strict: unknown fields are errors, since the
  API server would silently prune them).
- Custom kinds: the CRD's openAPIV3Schema with a JSON-Schema validator. Upstream CRDs come
  from `../shared/schemas/` beside the repository; our own kinds from `apis/*/definition.yaml`.
- `x-kubernetes-validations` CEL rules are evaluated with cel-python. Our XRDs only use
  standard CEL (has, size, in, contains, endsWith, startsWith, matches); no Kubernetes
  extension library is needed, so none is shimmed. Rules using `oldSelf` (transition rules)
  are skipped: there is no previous object here.
- The schema conversion and the CEL walk are the `modelfleet` CLI's (`modelfleet_cli.xrd`),
  so the CLI refuses an XR exactly as these tests do.
- A provider-kubernetes Object is validated together with the manifest it carries.
"""

import copy
import functools
from pathlib import Path
from typing import Any

import jsonschema
import kubernetes_validate
import pytest
import yaml
from modelfleet_cli.xrd import cel_errors, kubectl_path, to_json_schema, xr_envelope

from modelfleet_devtools.paths import SHARED_SCHEMAS_DIR, SHARED_SCHEMAS_ENV, xrd_paths

_SAFE_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
KUBERNETES_VERSION = "1.33"
SKIP_REASON = (
    f"upstream CRDs not found at {SHARED_SCHEMAS_DIR}; custom kinds not validated "
    f"(set {SHARED_SCHEMAS_ENV} to the folder holding them, see README.md)"
)

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
                    schema = xr_envelope(schema)
                key = (f"{spec['group']}/{version['name']}", spec["names"]["kind"])
                schemas[key] = schema
    return schemas


@functools.cache
def _validator(api_version: str, kind: str) -> jsonschema.Draft7Validator | None:
    schema = _custom_schemas().get((api_version, kind))
    if schema is None:
        return None
    return jsonschema.Draft7Validator(to_json_schema(schema))


def _schema_errors(validator: jsonschema.Draft7Validator, obj: dict[str, Any]) -> list[str]:
    return [
        f"{kubectl_path(e.absolute_path) or '<root>'}: {e.message}"
        for e in sorted(validator.iter_errors(obj), key=lambda e: list(map(str, e.path)))
    ]


def _builtin_errors(manifest: dict[str, Any]) -> list[str]:
    try:
        kubernetes_validate.validate(manifest, KUBERNETES_VERSION, strict=True)
    except kubernetes_validate.ValidationError as exc:
        where = kubectl_path(exc.path) or "<root>"
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
        spec = manifest.get("spec", {})
        inner = spec.get("forProvider", {}).get("manifest")
        if isinstance(inner, dict) and spec.get("managementPolicies") == ["Observe"]:
            # Never applied: the manifest only names what to read (its required fields are
            # the remote object's, not the reader's).
            errors += [f"{label} -> {e}" for e in _identity_errors(inner)]
        elif isinstance(inner, dict):
            errors += [f"{label} -> {e}" for e in validate_manifest(inner)]
    return errors


def _identity_errors(manifest: dict[str, Any]) -> list[str]:
    """What an Observe-only Object's manifest must hold: apiVersion, kind and a name."""
    metadata = manifest.get("metadata")
    named = isinstance(metadata, dict) and isinstance(metadata.get("name"), str)
    if manifest.get("apiVersion") and manifest.get("kind") and named:
        return []
    return ["<root>: an Observe-only manifest needs apiVersion, kind and metadata.name"]


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
