"""What exists on a cluster keeps what Kubernetes fixed at its creation: an upgrade of the
function (or a changed input) never asks the API server for an impossible change.

A Job's pod template (and the other fields of `immutable.JOB_SPEC_IMMUTABLE`) cannot change
once the Job is created; nor can a claim's class or access modes (`CLAIM_SPEC_IMMUTABLE`).
A function version that composes another template for a Job that already exists (another
hydrator argument, image or env; so does a user's new `hydration.image` or `.resources`,
which leave the fingerprint alone), or another class for a claim that exists (the cluster's
class renamed, `storage.storageClassName` edited), would have provider-kubernetes update the
object and the API server refuse it (`spec.template: Invalid value: ...: field is
immutable`), leaving the Object Synced=False for good, until someone deletes the object.

The rule: when provider-kubernetes reports an object of the apiVersion, kind and very name
being composed (it fetches the remote object by the composed name and echoes it in
`status.atProvider.manifest`; after a rename it still echoes the previous object, so the
name must match), each fixed field the function composes takes the value the API server
returned (or is left out, when the object has none); fixed fields it does not compose stay
out of the manifest, which then leaves them alone. Everything else is composed fresh:
metadata (labels, the pinned-revision annotation the hydrator reads) and the mutable spec (a
Job's backoffLimit, activeDeadlineSeconds, podReplacementPolicy; a claim's requested size,
which may only grow: claim_size.py keeps a larger one).
A Job of another name (a new source: its name carries the fingerprint), or an object not
reported yet, is composed as it is now, so an Object left Synced=False by such a refusal
recovers at its next reconcile.

The observed values carry the server's defaults: sent back they equal what is there, so
neither client-side apply (a JSON merge patch of the manifest) nor server-side apply changes
anything. What the server generated from a Job's uid (its template's controller-uid and
job-name labels) is left out, as is the echoed `creationTimestamp: null`: a Job re-created
under the same name (deleted behind provider-kubernetes' back) would be refused with another
uid's labels, and a merge patch that omits them leaves the existing Job's own in place.

A Job that failed for good keeps its template too: it runs no pod again whatever it is
asked. Deleting its Object is how it is retried (docs/modelcache.md), and the Job created
then, with nothing reported for the new Object, gets the current template.
"""

import copy
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from modelfleet_contracts.fields import mapping_at, mapping_path
from modelfleet_contracts.immutable import (
    CLAIM_SPEC_IMMUTABLE,
    JOB_GENERATED_TEMPLATE_LABELS,
    JOB_SPEC_IMMUTABLE,
)
from modelfleet_contracts.stamps import DROP, Stamp, Verbatim

FIXED_SPEC_FIELDS = {"Job": JOB_SPEC_IMMUTABLE, "PersistentVolumeClaim": CLAIM_SPEC_IMMUTABLE}

# What `existing_object` reads of an echoed spec as plain data, so that the edge converts
# only that (a claim's status, its volume name and a Job's mutable fields are of no use
# here). A Job's pod template is not converted: the edge hands it over as composable
# `Verbatim` protobuf (`TEMPLATE`), which is written back as it is.
TEMPLATE = "template"
ECHOED_SPEC_READ: dict[str, Any] = {
    **{field: None for fields in FIXED_SPEC_FIELDS.values() for field in fields},
    "resources": {"requests": {"storage": None}},
}
del ECHOED_SPEC_READ[TEMPLATE]


@dataclass(frozen=True)
class Existing:
    """A remote object as provider-kubernetes last reported it on its cluster."""

    api_version: Any  # as echoed; compared with the composed manifest's, never trusted
    kind: str
    name: str
    fixed: dict[str, Any]  # its FIXED_SPEC_FIELDS, without what the server generated
    # A claim's `spec.resources.requests.storage` as the server holds it (None: not
    # reported). Not fixed, but it may only grow: claim_size.py.
    request: Any = None


def _template_as_composable(template: Mapping[str, Any]) -> dict[str, Any]:
    """The observed pod template without the labels generated from the Job's uid and name
    and without the empty `creationTimestamp` the API server echoes in it."""
    kept = {k: v for k, v in template.items() if k != "metadata"}
    metadata = {
        k: v
        for k, v in mapping_at(template, "metadata").items()
        if k not in ("creationTimestamp", "labels")
    }
    labels = {
        k: v
        for k, v in mapping_at(mapping_at(template, "metadata"), "labels").items()
        if k not in JOB_GENERATED_TEMPLATE_LABELS
    }
    if labels:
        metadata["labels"] = labels
    if metadata:
        kept["metadata"] = metadata
    return kept


def existing_object(echoed: Mapping[str, Any]) -> Existing | None:
    """The Job or claim in an observed Object's `status.atProvider.manifest`, when one is
    reported with its spec; None when there is none (not created or not observed yet).
    Its values are shared, not copied: `keeping_fixed_fields` copies what it writes. A Job's
    template is plain data to make composable, or `Verbatim` already made so by the edge
    (`composable_template`, the same rule on protobuf)."""
    kind, name = echoed.get("kind"), mapping_at(echoed, "metadata").get("name")
    spec = mapping_at(echoed, "spec")
    if not isinstance(kind, str) or kind not in FIXED_SPEC_FIELDS:
        return None
    if not isinstance(name, str) or not name or not spec:
        return None
    template = spec.get(TEMPLATE)
    if kind == "Job" and not (isinstance(template, Verbatim) or mapping_at(spec, TEMPLATE)):
        return None  # a Job always has one: this is not the Job as the server holds it
    fixed = {f: spec[f] for f in FIXED_SPEC_FIELDS[kind] if f in spec}
    if kind == "Job":
        if not isinstance(template, Verbatim):
            fixed[TEMPLATE] = _template_as_composable(mapping_at(spec, TEMPLATE))
        return Existing(echoed.get("apiVersion"), kind, name, fixed)
    request = mapping_path(spec, "resources", "requests").get("storage")
    return Existing(echoed.get("apiVersion"), kind, name, fixed, request)


MANIFEST_SPEC = ("spec", "forProvider", "manifest", "spec")


def _manifest_spec(node: Any) -> Any:
    """What is at spec.forProvider.manifest.spec of an Object's data (or of its holes)."""
    for key in MANIFEST_SPEC:
        node = node.get(key, {}) if isinstance(node, dict) else {}
    return node


def _agrees(composed: Stamp, existing: Existing) -> bool:
    """Every fixed field the composed object sets is as the existing one has it. Read off
    the shape where it can be (a claim on each of 1000 clusters is not built for this)."""
    spec, holes = _manifest_spec(composed.shape.data), _manifest_spec(composed.shape.holes)
    for field in FIXED_SPEC_FIELDS[existing.kind]:
        if field not in spec:
            continue
        hole = holes.get(field) if isinstance(holes, dict) else None
        if hole is not None and not isinstance(hole, str):
            return False  # markers deep inside (a Job's template): built to be compared
        value = composed.values[hole] if isinstance(hole, str) else spec[field]
        if field not in existing.fixed or value != existing.fixed[field]:
            return False
    return True


def keeping_fixed_fields(composed: Stamp, existing: Existing | None) -> Stamp:
    """The composed Object, its fixed fields as the remote object of its kind and name that
    exists has them; `composed` itself when none exists or they agree. A fixed field the
    composed object leaves out stays out: the manifest does not touch it."""
    manifest = composed.shape.data["spec"]["forProvider"]["manifest"]
    identity = (
        manifest.get("apiVersion"),
        manifest.get("kind"),
        mapping_at(manifest, "metadata").get("name"),
    )
    if existing is None or identity != (existing.api_version, existing.kind, existing.name):
        return composed
    if not isinstance(manifest.get("spec"), dict):
        return composed  # an Observe-only view of the user's claim: never written
    if _agrees(composed, existing):
        return composed  # the shared shape is written as is
    # Only what stays is copied; the existing values are written as they are (a Job's
    # template as the protobuf the request carried: `Verbatim`).
    spec = manifest["spec"]
    return composed.replacing(
        MANIFEST_SPEC,
        {
            field: _as_written(existing.fixed[field]) if field in existing.fixed else DROP
            for field in FIXED_SPEC_FIELDS[existing.kind]
            if field in spec
        },
    )


def _as_written(value: Any) -> Any:
    """A value for a response: a Verbatim as it is, plain data copied (never shared with
    the request's)."""
    return value if isinstance(value, Verbatim) else copy.deepcopy(value)
