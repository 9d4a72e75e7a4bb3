"""The simulated hydration Job: which attempts fail, and the status Kubernetes' Job
controller writes when an attempt ends."""

from dataclasses import dataclass
from typing import Any

from modelfleet_contracts.api import MODEL_CACHE
from modelfleet_contracts.conditions import Status
from modelfleet_contracts.fields import int_at, mapping_at
from modelfleet_contracts.labels import NAMESPACE_LABEL, kind_label


@dataclass
class HydrationFault:
    """Pod attempts of matching hydration Jobs that fail (None: every attempt)."""

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
    """The attempt failed; past the backoff limit the Job is Failed. The attempts failed."""
    status = job.setdefault("status", {})
    if fault.failures is not None:
        fault.failures -= 1
    fault.attempts_failed += 1
    status["failed"] = int_at(status, "failed") + 1
    if status["failed"] > int_at(mapping_at(job, "spec"), "backoffLimit", 6):
        status["active"] = 0
        status["conditions"] = [
            Status.true(
                "Failed", "BackoffLimitExceeded", "Job has reached the specified backoff limit"
            ).as_condition()
        ]
    return int(status["failed"])
