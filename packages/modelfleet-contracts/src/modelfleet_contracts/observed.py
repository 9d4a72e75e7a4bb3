"""What functions act on of an observed provider-kubernetes Object, as small plain facts.

An observed Object carries its manifest twice (as composed, and echoed with the remote
object), server bookkeeping and conditions: hundreds of values, of which a function decides
on a handful. The edge (`edge.observed.read_observed`) takes those few straight from the
protobuf Struct; a core decides on these facts only.
"""

from dataclasses import dataclass


@dataclass(frozen=True)
class Condition:
    type: str
    status: str
    reason: str = ""
    message: str = ""


@dataclass(frozen=True)
class ObservedObject:
    """The remote object's status as provider-kubernetes last saw it
    (`status.atProvider.manifest.status`), and why the Object itself is failing."""

    remote_seen: bool = False  # the remote status is a non-empty mapping
    remote_phase: str = ""
    remote_conditions: tuple[Condition, ...] = ()
    remote_succeeded: int = 0
    remote_failed: int = 0
    # The message of the Object's first False condition (Synced/Ready) that has one.
    failure_message: str = ""

    def remote_condition(self, typ: str, status: str = "True") -> Condition | None:
        for c in self.remote_conditions:
            if c.type == typ and c.status == status:
                return c
        return None
