"""The gRPC edge shared by every function: decode, delegate to a pure core, never crash.

An unexpected exception in a core must not become an empty desired state (Crossplane
would delete everything composed). The runner therefore keeps every observed composed
resource, reports `Synced`-independent condition `FunctionError` and a Warning, and
returns.

With replays, every call served over gRPC by a server started with `--debug` is logged (the
XR, whether it was answered from a kept response or decided, and the request's key), and at
most once a minute a call
logs at info how many calls were answered from kept responses and how many decided since the
server started, before it counts itself: what a fleet at steady state costs in decisions,
read off the log.
"""

import logging
import time
import traceback
from collections.abc import Callable

import grpc
from crossplane.function import logging as sdklogging
from crossplane.function import resource, response
from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from crossplane.function.proto.v1 import run_function_pb2_grpc as grpcv1

from modelfleet_contracts.edge import structs
from modelfleet_contracts.edge.carry import carry_forward_into
from modelfleet_contracts.edge.readiness import mark_composed_readiness
from modelfleet_contracts.edge.replay import (
    Encoded,
    Replays,
    clock_was_read,
    deciding,
    request_key,
)
from modelfleet_contracts.fields import mapping_at

Core = Callable[[fnv1.RunFunctionRequest, fnv1.RunFunctionResponse], None]

log = logging.getLogger("modelfleet")

# How often, at most, a call logs the replay counts.
REPLAY_SUMMARY_EVERY_SECONDS = 60.0


def keep_observed_resources(req: fnv1.RunFunctionRequest, rsp: fnv1.RunFunctionResponse) -> None:
    """Put every observed composed resource that is not already desired back into the
    desired state, so nothing is deleted while the function cannot decide."""
    observed = req.observed.resources
    desired = rsp.desired.resources
    for name in observed:
        if name not in desired:
            carry_forward_into(desired[name].resource, observed[name].resource)


def keep_observed_status(req: fnv1.RunFunctionRequest, rsp: fnv1.RunFunctionResponse) -> None:
    """Re-assert the XR's observed status fields (not its conditions), so a reconcile that
    cannot decide does not wipe what the last good one reported."""
    observed = structs.to_dict(req.observed.composite.resource)
    status = {k: v for k, v in mapping_at(observed, "status").items() if k != "conditions"}
    if status:
        resource.update(rsp.desired.composite, {"status": status})


def _xr_of(req: fnv1.RunFunctionRequest) -> dict[str, str]:
    """The request's XR as a log line names it: kind, namespace, name."""
    fields = req.observed.composite.resource.fields
    metadata = fields["metadata"].struct_value.fields if "metadata" in fields else {}
    return {
        "kind": fields["kind"].string_value if "kind" in fields else "",
        "namespace": metadata["namespace"].string_value if "namespace" in metadata else "",
        "name": metadata["name"].string_value if "name" in metadata else "",
    }


class SafeRunner(grpcv1.FunctionRunnerServiceServicer):
    """Runs `core`; on an unexpected error keeps what was composed and says so. Given
    `replays`, a request served over gRPC that was answered before gets that answer again
    (replay.py); `run` always decides."""

    def __init__(self, core: Core, name: str, *, replays: Replays | None = None) -> None:
        self._core = core
        self._name = name
        self._replays = replays
        self._summarized_at = time.monotonic()
        # Log a line per call (serve.run sets it from --debug).
        self.log_calls = False

    async def RunFunction(
        self, req: fnv1.RunFunctionRequest, context: grpc.aio.ServicerContext | None = None
    ) -> fnv1.RunFunctionResponse | Encoded:
        """The response, or a replayed one as it was encoded (serve.py's server sends both)."""
        replays = self._replays
        if replays is None:
            return self.run(req)
        self._summarize(replays)  # what was counted before this call
        key = request_key(req)
        rsp: fnv1.RunFunctionResponse | Encoded | None = replays.get(key)
        if rsp is not None:
            answer = "replayed"
        else:
            deciding()
            rsp = self.run(req)
            if clock_was_read():
                answer = "decided, not kept: the answer read the clock"
            elif replays.put(key, rsp):
                answer = "decided, kept"
            else:
                answer = "decided, not kept: not replayable"
        if self.log_calls:
            sdklogging.get_logger().debug(
                "RunFunction", answer=answer, key=key.hex()[:16], **_xr_of(req)
            )
        return rsp

    def _summarize(self, replays: Replays) -> None:
        now = time.monotonic()
        if now - self._summarized_at < REPLAY_SUMMARY_EVERY_SECONDS:
            return
        self._summarized_at = now
        sdklogging.get_logger().info(
            "Replays",
            function=self._name,
            replayed=replays.hits,
            decided=replays.misses,
            kept=len(replays),
            kept_bytes=replays.kept_bytes,
        )

    def run(self, req: fnv1.RunFunctionRequest) -> fnv1.RunFunctionResponse:
        rsp = response.to(req)
        try:
            self._core(req, rsp)
        except Exception as exc:  # last line of defence, reported below
            log.error("%s failed: %s\n%s", self._name, exc, traceback.format_exc())
            rsp = response.to(req)
            keep_observed_resources(req, rsp)
            keep_observed_status(req, rsp)
            response.set_conditions(
                rsp,
                resource.Condition(
                    typ="FunctionError",
                    status="True",
                    reason="InternalError",
                    message=f"{self._name} could not process this resource ({type(exc).__name__}: "
                    f"{exc}); everything composed before is kept unchanged",
                ),
            )
            response.warning(rsp, f"{self._name} internal error: {type(exc).__name__}: {exc}")
            rsp.desired.composite.ready = fnv1.READY_FALSE
            mark_composed_readiness(req, rsp)
        return rsp
