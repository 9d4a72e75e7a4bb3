"""Which XRs a function process answered: one JSON line per call it answered.

The end-to-end harness puts this folder on PYTHONPATH of the function processes it starts, and
names the file in MODELFLEET_E2E_CALL_TRACE; Python imports `sitecustomize` at start-up, so
every gRPC server the function builds gets an interceptor that appends
`{"kind", "namespace", "name", "at", "settled", "key"}` of the request's XR once the function
has answered it. Crossplane calls a function again, with the resources it asked for, until
what it asks for is what it was given: only that call's answer is applied, so a call whose
response asks for nothing the request did not carry is the one that counts (`settled`).
`key` is the SHA-256 of the request's deterministic encoding (hex): two calls with the same
key carried the same content, which is what a function's response replay keys on. The
function's own code is left as its release shipped it (the previous release's too), so the
suite can tell which release's processes reconciled an XR. Standard library and grpc only:
the previous release's environment has nothing else of ours.

Where a folder `requests` exists beside the trace file, each call's request is also written
there, encoded (`<trace name>-<kind>-<name>-<n>.pb`), to compare what was sent call after
call.
"""

from __future__ import annotations

import contextlib
import hashlib
import inspect
import json
import os
import threading
import time
from typing import Any

TRACE = os.environ.get("MODELFLEET_E2E_CALL_TRACE")
_lock = threading.Lock()
_written = [0]


def _settled(request: Any, response: Any) -> bool:
    """The response asks for no resource the request did not carry (the reconcile's last call)."""
    given = _names(request, "extra_resources") | _names(request, "required_resources")
    asked = _names(response.requirements, "extra_resources")
    asked |= _names(response.requirements, "resources")
    return asked <= given


def _names(message: Any, field: str) -> set[str]:
    # An older SDK's messages may lack a field: it carries nothing then.
    return set(getattr(message, field).keys()) if hasattr(message, field) else set()


def _record(request: Any, response: Any) -> None:
    try:
        fields = request.observed.composite.resource.fields
        metadata = fields["metadata"].struct_value.fields
        line = {
            "kind": fields["kind"].string_value,
            "namespace": metadata["namespace"].string_value if "namespace" in metadata else "",
            "name": metadata["name"].string_value,
            "at": round(time.time(), 3),
            "settled": _settled(request, response),
            "key": hashlib.sha256(request.SerializeToString(deterministic=True)).hexdigest(),
        }
        with _lock, open(TRACE or os.devnull, "a") as out:
            out.write(json.dumps(line) + "\n")
            _written[0] += 1
            kept = os.path.join(os.path.dirname(TRACE or os.devnull), "requests")
            if TRACE and os.path.isdir(kept):
                stem = os.path.basename(TRACE).rsplit(".", 1)[0]
                name = f"{stem}-{line['kind']}-{line['name']}-{_written[0]:06d}.pb"
                with open(os.path.join(kept, name), "wb") as encoded:
                    encoded.write(request.SerializeToString())
    except Exception:  # a trace must never fail a call
        pass


def _install() -> None:
    import grpc
    import grpc.aio

    class Traced(grpc.aio.ServerInterceptor):  # type: ignore[misc]
        async def intercept_service(self, continuation: Any, details: Any) -> Any:
            handler = await continuation(details)
            if handler is None or handler.unary_unary is None:
                return handler
            if not details.method.endswith("/RunFunction"):
                return handler
            inner = handler.unary_unary

            async def traced(request: Any, context: Any) -> Any:
                answer = inner(request, context)
                if inspect.isawaitable(answer):
                    answer = await answer
                _record(request, answer)
                return answer

            return grpc.unary_unary_rpc_method_handler(
                traced,
                request_deserializer=handler.request_deserializer,
                response_serializer=handler.response_serializer,
            )

    build = grpc.aio.server
    if getattr(build, "traced", False):  # installed once, whatever imports this again
        return

    def server(*args: Any, interceptors: Any = None, **kwargs: Any) -> Any:
        return build(*args, interceptors=[*(interceptors or ()), Traced()], **kwargs)

    server.traced = True  # type: ignore[attr-defined]
    grpc.aio.server = server


if TRACE:
    with contextlib.suppress(ImportError):  # not a gRPC program: nothing to trace
        _install()
