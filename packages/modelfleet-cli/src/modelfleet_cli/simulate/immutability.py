"""Updates the simulated API server refuses, as a real one does: fields fixed at creation.

A Job's pod template, selector, completions and policies (`immutable.JOB_SPEC_IMMUTABLE`),
a RoleBinding's roleRef, a claim's spec but its requested size (which may only grow). The
message names the object and the field the way the API server does; the value it prints
(a Go struct) is shortened to `{...}`.
"""

from typing import Any

from modelfleet_contracts.fields import mapping_at, mapping_path
from modelfleet_contracts.immutable import JOB_SELECTOR, JOB_SPEC_IMMUTABLE
from modelfleet_contracts.quantity import parse_quantity

# What the API server calls each kind in its messages (`<Kind>.<group> "<name>" is invalid`).
_QUALIFIED = {
    "Job": "Job.batch",
    "RoleBinding": "RoleBinding.rbac.authorization.k8s.io",
    "PersistentVolumeClaim": "PersistentVolumeClaim",
}
_CLAIM_MUTABLE = ("resources", "volumeAttributesClassName")


def _job_errors(current: dict[str, Any], new: dict[str, Any]) -> list[str]:
    old_spec, new_spec = mapping_at(current, "spec"), mapping_at(new, "spec")
    return [
        f"spec.{field}: Invalid value: {{...}}: field is immutable"
        for field in (JOB_SELECTOR, *JOB_SPEC_IMMUTABLE)
        if new_spec.get(field) != old_spec.get(field)
    ]


def _role_binding_errors(current: dict[str, Any], new: dict[str, Any]) -> list[str]:
    if new.get("roleRef") != current.get("roleRef"):
        return ["roleRef: Invalid value: {...}: cannot change roleRef"]
    return []


def _claim_errors(current: dict[str, Any], new: dict[str, Any]) -> list[str]:
    old_spec, new_spec = mapping_at(current, "spec"), mapping_at(new, "spec")
    fixed = {k: v for k, v in old_spec.items() if k not in _CLAIM_MUTABLE}
    if fixed != {k: v for k, v in new_spec.items() if k not in _CLAIM_MUTABLE}:
        return [
            "spec: Forbidden: spec is immutable after creation except resources.requests "
            "and volumeAttributesClassName for bound claims"
        ]
    # Compared by value, whatever the spelling (`1Ti` > `1000Gi` > `1T`), as the server does.
    before = parse_quantity(mapping_path(old_spec, "resources", "requests").get("storage"))
    after = parse_quantity(mapping_path(new_spec, "resources", "requests").get("storage"))
    if before is not None and after is not None and after < before:
        return [
            "spec.resources.requests.storage: Forbidden: field can not be less than previous value"
        ]
    return []


_CHECKS = {
    "Job": _job_errors,
    "RoleBinding": _role_binding_errors,
    "PersistentVolumeClaim": _claim_errors,
}


def refused_update(current: dict[str, Any], new: dict[str, Any]) -> str | None:
    """Why the API server refuses to turn `current` into `new`, or None when it does not."""
    kind = str(new.get("kind") or "")
    check = _CHECKS.get(kind)
    errors = check(current, new) if check else []
    if not errors:
        return None
    name = mapping_at(new, "metadata").get("name")
    listed = errors[0] if len(errors) == 1 else f"[{', '.join(errors)}]"
    return f'{_QUALIFIED[kind]} "{name}" is invalid: {listed}'
