"""Answering a request already answered, without deciding again.

For a function whose decisions read the clock only through the waits it asks Crossplane to
recheck (compose-model-cache's: a recheck grows with how long a condition has held, a
WhereServed release waits out its grace; not compose-model-deployment's, whose placement
reads the clock), the edge says when a response read it (`read_the_clock`, set whenever an
Outcome asks for a recheck). A response decided without reading it, with the SDK's default
TTL and no `FunctionError`, is a function of the request alone, so the same request gets
the same response. A poll of an XR whose inputs did not change (a Ready shard at steady
state) sends content answered before; `Replays` answers it from the response kept instead
of deciding it again.

The key is the SHA-256 of the request's deterministic encoding (Crossplane's encoder writes
map entries in any order), `meta.tag` included. The tag alone is no key: Crossplane tags a
request once (xfn.Tag) and sends it again under the same tag with the required resources
it resolved added, and tests and tools send constant tags. A response reporting
`FunctionError` is never kept, so an internal error is tried again. An answer is kept as
its encoding and replayed as that (`Encoded`): a replay neither copies nor encodes it again.
Memory is bounded: the oldest answers go first once the kept encodings pass the budget.

`Replays` counts the requests it answered (`hits`) and those it did not (`misses`), so a
server's log can say how many calls a fleet at steady state cost a decision.
"""

import hashlib
from collections import OrderedDict
from contextvars import ContextVar

from crossplane.function import response
from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from google.protobuf import duration_pb2

# What a server keeps by default: a 1000-cluster fleet's 32 shards answer ~100 KiB each.
DEFAULT_BUDGET_BYTES = 64 * 2**20

FUNCTION_ERROR = "FunctionError"


DEFAULT_TTL = duration_pb2.Duration()
DEFAULT_TTL.FromTimedelta(response.DEFAULT_TTL)  # what `response.to` sets


# Per request served (each gRPC call runs in a task of its own, with its own context).
_CLOCK_READ: ContextVar[bool] = ContextVar("modelfleet_clock_read", default=False)


def read_the_clock() -> None:
    """Say that the response being decided depends on the time, not on its request alone."""
    _CLOCK_READ.set(True)


def deciding() -> None:
    """Start deciding a request: nothing read off the clock yet."""
    _CLOCK_READ.set(False)


def clock_was_read() -> bool:
    """Whether the response decided since `deciding` read the clock."""
    return _CLOCK_READ.get()


def request_key(req: fnv1.RunFunctionRequest) -> bytes:
    """The digest of everything the request says (map entries in key order)."""
    return hashlib.sha256(req.SerializeToString(deterministic=True)).digest()


def replayable(rsp: fnv1.RunFunctionResponse) -> bool:
    """Whether `rsp` is a function of its request alone: the default TTL (no recheck that
    read the clock) and no `FunctionError`."""
    if rsp.meta.ttl != DEFAULT_TTL:
        return False
    return not any(c.type == FUNCTION_ERROR for c in rsp.conditions)


class Encoded:
    """A response already encoded: what gRPC sends for it (`SerializeToString`, the one
    method a server's response serializer calls) is `data`."""

    __slots__ = ("data",)

    def __init__(self, data: bytes) -> None:
        self.data = data

    def SerializeToString(self, **_: object) -> bytes:  # protobuf's name, as gRPC calls it
        return self.data


def decoded(answer: fnv1.RunFunctionResponse | Encoded) -> fnv1.RunFunctionResponse:
    """The response a server's answer sends (for tests and tools reading a replayed one)."""
    if isinstance(answer, Encoded):
        return fnv1.RunFunctionResponse.FromString(answer.data)
    return answer


class Replays:
    """Encoded responses by the digest of the request they answer, the most recent kept
    within `budget_bytes`."""

    def __init__(self, budget_bytes: int = DEFAULT_BUDGET_BYTES) -> None:
        self._budget = budget_bytes
        self._kept: OrderedDict[bytes, bytes] = OrderedDict()
        self._size = 0
        self.hits = 0
        self.misses = 0

    @property
    def kept_bytes(self) -> int:
        """The encoded size of the responses kept."""
        return self._size

    def __len__(self) -> int:
        return len(self._kept)

    def get(self, key: bytes) -> Encoded | None:
        """The response kept for `key`, encoded, or None; counted as a hit or a miss."""
        found = self._kept.get(key)
        if found is None:
            self.misses += 1
            return None
        self.hits += 1
        self._kept.move_to_end(key)
        return Encoded(found)

    def put(self, key: bytes, rsp: fnv1.RunFunctionResponse) -> bool:
        """Keep the encoding of `rsp` for `key` if it is `replayable` and fits the budget;
        whether it was kept."""
        if not replayable(rsp):
            return False
        size = rsp.ByteSize()
        if size > self._budget:
            return False
        if key in self._kept:
            self._size -= len(self._kept.pop(key))
        self._kept[key] = rsp.SerializeToString()
        self._size += size
        while self._size > self._budget:
            _, dropped = self._kept.popitem(last=False)
            self._size -= len(dropped)
        return True
