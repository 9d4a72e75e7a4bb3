"""A request answered before gets the response given then, and only a response its request
alone decided is kept (edge/memo.py)."""

from datetime import timedelta

import pytest
from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from modelfleet_contracts.edge.memo import ResponseMemo
from modelfleet_contracts.edge.runner import SafeRunner
from modelfleet_devtools.requests import run_function_request

XR = {"apiVersion": "modelfleet.io/v1alpha1", "kind": "ModelCache", "metadata": {"name": "a"}}


class Core:
    """Answers with the XR's name as a composed resource; `mode` says how it answers."""

    def __init__(self, mode: str = "decided") -> None:
        self.calls = 0
        self.mode = mode

    def __call__(self, req: fnv1.RunFunctionRequest, rsp: fnv1.RunFunctionResponse) -> None:
        self.calls += 1
        name = req.observed.composite.resource["metadata"]["name"]
        rsp.desired.resources[name].resource.update({"kind": "Object", "n": self.calls})
        if self.mode == "clock":
            rsp.meta.ttl.FromTimedelta(timedelta(seconds=7))
        if self.mode == "raises":
            raise RuntimeError("boom")


def run_twice(core: Core, first: dict, second: dict, memo: ResponseMemo | None = None):
    runner = SafeRunner(core, "fn", memo or ResponseMemo())
    return runner.run(run_function_request(first)), runner.run(run_function_request(second))


@pytest.mark.parametrize(
    ("mode", "second", "calls", "same"),
    [
        pytest.param("decided", XR, 1, True, id="the same request: answered from memory"),
        pytest.param(
            "decided",
            {**XR, "metadata": {"name": "b"}},
            2,
            False,
            id="another request: decided",
        ),
        pytest.param("clock", XR, 2, False, id="a TTL of its own: decided again"),
        pytest.param("raises", XR, 2, True, id="a FunctionError: decided again"),
    ],
)
def test_what_is_answered_from_memory(mode, second, calls, same):
    core = Core(mode)
    first, again = run_twice(core, XR, second)
    assert core.calls == calls
    assert (first == again) is same


def test_an_answer_from_memory_is_a_copy():
    core = Core()
    runner = SafeRunner(core, "fn", ResponseMemo())
    first = runner.run(run_function_request(XR))
    first.desired.resources.clear()
    assert runner.run(run_function_request(XR)).desired.resources
    assert core.calls == 1


def test_the_memo_keeps_at_most_its_bytes_the_least_recently_used_going_first():
    core = Core()
    runner = SafeRunner(core, "fn", ResponseMemo(max_bytes=1))
    runner.run(run_function_request(XR))
    runner.run(run_function_request(XR))
    assert core.calls == 2  # larger than the memo: never kept
    size = SafeRunner(Core(), "fn").run(run_function_request(XR)).ByteSize()
    core = Core()
    runner = SafeRunner(core, "fn", ResponseMemo(max_bytes=size + size // 2))
    for xr in (XR, {**XR, "metadata": {"name": "b"}}, XR):
        runner.run(run_function_request(xr))
    assert core.calls == 3  # room for one: `a` went when `b` came
