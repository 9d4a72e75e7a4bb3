"""A hydration Job that exists keeps what Kubernetes fixes at creation: an upgrade of the
function never asks for an impossible change.

A Job's pod template (and the other fields of `immutable.JOB_SPEC_IMMUTABLE`) cannot change
once the Job is created. A function version that composes another template for a Job that
already exists (another hydrator argument, image or env; so does a user's new
`hydration.image` or `.resources`, which leave the fingerprint alone) would have
provider-kubernetes update the Job and the API server refuse it (`spec.template: Invalid
value: ...: field is immutable`), leaving the Object Synced=False until the Job is deleted.

The rule: when provider-kubernetes reports a Job of the very name being composed (it fetches
the remote object by the composed name and echoes it in `status.atProvider.manifest`; after
a rename it still echoes the previous Job, so the name must match), the composed Job takes
those fields exactly as the API server returned them, and keeps composing the rest fresh:
metadata (labels, the pinned-revision annotation the hydrator reads) and the mutable spec
(backoffLimit, activeDeadlineSeconds, podReplacementPolicy). A Job of another name (a new
source: the name carries the fingerprint) or none reported yet gets the current template,
so an Object left Synced=False by such a refusal recovers at its next reconcile.

The observed values carry the server's defaults: sent back they equal what is there, so
neither client-side apply (a JSON merge patch of the manifest) nor server-side apply changes
anything. What the server generated from the Job's uid (the template's controller-uid and
job-name labels) is left out, as is the echoed `creationTimestamp: null`: a Job re-created
under the same name (deleted behind provider-kubernetes' back) would be refused with another
uid's labels, and a merge patch that omits them leaves the existing Job's own in place.

A Job that failed for good keeps its template too: it runs no pod again whatever it is
asked. Deleting its Object is how it is retried (docs/modelcache.md), and the Job created
then, with no Job reported for the new Object, gets the current template.
"""

import copy
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from modelfleet_contracts.fields import mapping_at
from modelfleet_contracts.immutable import JOB_GENERATED_TEMPLATE_LABELS, JOB_SPEC_IMMUTABLE
from modelfleet_contracts.stamps import Stamp


@dataclass(frozen=True)
class ExistingJob:
    """A hydration Job as provider-kubernetes last reported it on its cluster."""

    name: str
    fixed: dict[str, Any]  # its JOB_SPEC_IMMUTABLE fields, without what the server generated


def _template_as_composable(template: Mapping[str, Any]) -> dict[str, Any]:
    """The observed pod template without the labels generated from the Job's uid and name
    and without the empty `creationTimestamp` the API server echoes in it."""
    kept = {k: copy.deepcopy(v) for k, v in template.items() if k != "metadata"}
    metadata = {
        k: copy.deepcopy(v)
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


def existing_job(echoed: Mapping[str, Any]) -> ExistingJob | None:
    """The Job in an observed Object's `status.atProvider.manifest`, when one is reported
    with its pod template; None when there is none (not created or not observed yet)."""
    name = mapping_at(echoed, "metadata").get("name")
    spec = mapping_at(echoed, "spec")
    template = mapping_at(spec, "template")
    if echoed.get("kind") != "Job" or not isinstance(name, str) or not name or not template:
        return None
    fixed = {field: copy.deepcopy(spec[field]) for field in JOB_SPEC_IMMUTABLE if field in spec}
    fixed["template"] = _template_as_composable(template)
    return ExistingJob(name, fixed)


def keeping_fixed_fields(
    job: Stamp, job_name: str, existing: ExistingJob | None
) -> Stamp | dict[str, Any]:
    """The composed Job Object `job` (of the Job `job_name`), with the fixed fields of the
    Job of that name that exists in place of its own; `job` itself when none exists."""
    if existing is None or existing.name != job_name:
        return job
    obj = job.to_dict()
    spec = obj["spec"]["forProvider"]["manifest"]["spec"]
    for field in JOB_SPEC_IMMUTABLE:
        spec.pop(field, None)  # the existing Job has none: it must not get one
    spec.update(copy.deepcopy(existing.fixed))
    return obj
