"""Answering a request answered before with the response given then.

Crossplane polls a settled XR with the same request, poll after poll (its observed
resources, their status and the XR's own unchanged). A function whose response is decided
by its request alone answers such a request as it did, so the response is kept, by a digest
of the request's bytes, and given again: the cost is encoding and hashing the request, about
what decoding it cost, instead of deciding it again.

Only what the request alone decides is kept: a response that asks to be called again after a
time of its own (its TTL other than the SDK's default: the wait depends on the clock) or that
reports a FunctionError is not. The memo holds at most `max_bytes` of responses, the least
recently used going first.
"""

import hashlib
from collections import OrderedDict

from crossplane.function import response
from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from google.protobuf import duration_pb2

DEFAULT_MAX_BYTES = 64 * 1024 * 1024
FUNCTION_ERROR = "FunctionError"


def _default_ttl() -> duration_pb2.Duration:
    ttl = duration_pb2.Duration()
    ttl.FromTimedelta(response.DEFAULT_TTL)
    return ttl


class ResponseMemo:
    """Responses by the digest of the request they answered (see the module)."""

    def __init__(self, max_bytes: int = DEFAULT_MAX_BYTES) -> None:
        self._max_bytes = max_bytes
        self._bytes = 0
        self._kept: OrderedDict[bytes, fnv1.RunFunctionResponse] = OrderedDict()
        self._default_ttl = _default_ttl()
        self.hits = 0

    @staticmethod
    def key(req: fnv1.RunFunctionRequest) -> bytes:
        return hashlib.sha256(req.SerializeToString(deterministic=True)).digest()

    def get(self, key: bytes) -> fnv1.RunFunctionResponse | None:
        """A copy of the response kept for `key`, if any."""
        kept = self._kept.get(key)
        if kept is None:
            return None
        self._kept.move_to_end(key)
        self.hits += 1
        rsp = fnv1.RunFunctionResponse()
        rsp.CopyFrom(kept)
        return rsp

    def put(self, key: bytes, rsp: fnv1.RunFunctionResponse) -> None:
        """Keep a copy of `rsp` for `key`, if the request alone decided it."""
        if rsp.meta.ttl != self._default_ttl:
            return
        if any(c.type == FUNCTION_ERROR for c in rsp.conditions):
            return
        size = rsp.ByteSize()
        if size > self._max_bytes:
            return
        kept = fnv1.RunFunctionResponse()
        kept.CopyFrom(rsp)
        if key in self._kept:
            self._bytes -= self._kept.pop(key).ByteSize()
        self._kept[key] = kept
        self._bytes += size
        while self._bytes > self._max_bytes:
            _, dropped = self._kept.popitem(last=False)
            self._bytes -= dropped.ByteSize()
