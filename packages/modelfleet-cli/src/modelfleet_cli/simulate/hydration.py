"""The simulated hydration Job: which attempts fail, the status Kubernetes' Job controller
writes when an attempt ends, and the progress the hydrator reports on its Job as it goes.

The simulated model fills half the claim it is staged to (a claim is sized for two copies
while a revision change re-hydrates; the request of a claim we manage, the capacity of a
brought one; 8 GiB when neither is known), in one 5 GiB shard per 5 GiB plus three small
files, and the Job downloads an equal share of it every round. The commit a branch resolves
to is a digest of the repo and revision, so a run is deterministic; a Job of a cache with a
pinned commit fetches that one, like the hydrator. An OCI image's tag resolves to a digest of
the reference the same way (a reference by digest to that digest), and, as the hydrator does
for an image, no file figures are reported before the copy is complete.
"""

import hashlib
from dataclasses import dataclass
from typing import Any

from modelfleet_contracts import hydration
from modelfleet_contracts.api import MODEL_CACHE
from modelfleet_contracts.conditions import Status
from modelfleet_contracts.fields import int_at, list_at, mapping_at, mapping_path
from modelfleet_contracts.labels import NAMESPACE_LABEL, kind_label
from modelfleet_contracts.quantity import parse_quantity

GIB = 1024**3
SHARD = 5 * GIB


@dataclass
class HydrationFault:
    """Pod attempts of matching hydration Jobs that fail (None: every attempt). A cluster
    holds it only while the fault is active: the control plane arms it in the fault's round."""

    failures: int | None
    cache: str = ""  # "<namespace>/<name>" of the ModelCache, or "" for every cache
    attempts_failed: int = 0  # attempts this fault failed so far


def matching_fault(faults: list[HydrationFault], job: dict[str, Any]) -> HydrationFault | None:
    """The first fault that still fails attempts of `job`'s cache."""
    labels = mapping_at(mapping_at(job, "metadata"), "labels")
    cache = "/".join(
        (str(labels.get(NAMESPACE_LABEL, "")), str(labels.get(kind_label(MODEL_CACHE), "")))
    )
    for fault in faults:
        if fault.cache in ("", cache) and (fault.failures is None or fault.failures > 0):
            return fault
    return None


def complete(status: dict[str, Any]) -> None:
    """The attempt succeeded: the Job is Complete."""
    status.update({"active": 0, "succeeded": 1})
    status["conditions"] = [
        Status.true("SuccessCriteriaMet", "CompletionsReached").as_condition(),
        Status.true(
            "Complete", "CompletionsReached", "Reached expected number of succeeded pods"
        ).as_condition(),
    ]


def fail_attempt(job: dict[str, Any], fault: HydrationFault) -> int:
    """`fault` failed the attempt (attempt_failed). The attempts failed."""
    if fault.failures is not None:
        fault.failures -= 1
    fault.attempts_failed += 1
    return attempt_failed(job)


def attempt_failed(job: dict[str, Any]) -> int:
    """The attempt's pod failed; past the backoff limit the Job is Failed. The attempts
    failed."""
    status = job.setdefault("status", {})
    status["failed"] = int_at(status, "failed") + 1
    if status["failed"] > int_at(mapping_at(job, "spec"), "backoffLimit", 6):
        status["active"] = 0
        # As Kubernetes' Job controller writes it (1.31 on): FailureTarget first, then Failed;
        # the API server refuses Failed=True without FailureTarget=True.
        status["conditions"] = [
            Status.true(
                kind, "BackoffLimitExceeded", "Job has reached the specified backoff limit"
            ).as_condition()
            for kind in ("FailureTarget", "Failed")
        ]
    return int(status["failed"])


def claim_bytes(claim: dict[str, Any] | None) -> int:
    """The size of a claim, from its capacity or its request (0 when unknown)."""
    if not claim:
        return 0
    for size in (
        mapping_path(claim, "status", "capacity").get("storage"),
        mapping_path(claim, "spec", "resources", "requests").get("storage"),
    ):
        found = parse_quantity(size)
        if found is not None and found >= 1:
            return int(found)
    return 0


def argument(job: dict[str, Any], flag: str) -> str:
    """The value of the hydrator's `flag` (e.g. `--repo=`) in a Job's command; "" if absent."""
    containers = list_at(mapping_path(job, "spec", "template", "spec"), "containers")
    command = list_at(containers[0], "command") if containers else []
    return next((str(a).split("=", 1)[1] for a in command if str(a).startswith(flag)), "")


def report_progress(job: dict[str, Any], claim: dict[str, Any] | None, share: float) -> None:
    """Write the annotations the hydrator would: `share` (0..1) of the model fetched, never
    less than an earlier attempt reported (downloads resume)."""
    total = claim_bytes(claim) // 2 or 8 * GIB
    metadata = job.setdefault("metadata", {})
    annotations = metadata.setdefault("annotations", {})
    before = annotations.get(hydration.BYTES_DONE, "0")
    done = max(int(total * min(share, 1.0)), int(before) if before.isdigit() else 0)
    shards = -(-total // SHARD)
    files = shards + 3
    values = {
        hydration.BYTES_DONE: str(min(done, total)),
        hydration.BYTES_TOTAL: str(total),
        hydration.FILES_DONE: str(files if done >= total else shards * done // total),
        hydration.FILES_TOTAL: str(files),
    }
    repo, image = argument(job, "--repo="), argument(job, "--image=")
    if image:
        if done < total:
            del values[hydration.FILES_DONE], values[hydration.FILES_TOTAL]
        named = image.partition("@")[2]
        values[hydration.REVISION] = (
            annotations.get(hydration.PINNED_REVISION, "")
            or named
            or "sha256:" + hashlib.sha256(image.encode()).hexdigest()
        )
    if repo:
        pinned = annotations.get(hydration.PINNED_REVISION, "")
        revision = argument(job, "--revision=") or "main"
        values[hydration.REVISION] = (
            pinned or hashlib.sha1(f"{repo}@{revision}".encode()).hexdigest()
        )
    annotations.update(values)
