"""The pipeline runner against scripted functions: what Crossplane would send each function
and what one reconcile leaves on the XR."""

from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from crossplane.function import request, resource, response
from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from modelfleet_cli.composed import composed_metadata
from modelfleet_cli.discovery import composition_for, repository_compositions
from modelfleet_cli.pipeline import MAX_CALLS_PER_STEP, PipelineError, run_pipeline

XR = {
    "apiVersion": "modelfleet.io/v1alpha1",
    "kind": "ModelCache",
    "metadata": {"name": "qwen", "namespace": "ml-team"},
    "spec": {"sizeGiB": 5},
}
CLUSTER_US = {
    "apiVersion": "modelfleet.io/v1alpha1",
    "kind": "InferenceCluster",
    "metadata": {"name": "gke-us", "labels": {"region": "us"}},
}
CLUSTER_EU = {
    "apiVersion": "modelfleet.io/v1alpha1",
    "kind": "InferenceCluster",
    "metadata": {"name": "gke-eu", "labels": {"region": "eu"}},
}
T0 = datetime(2025, 1, 1, tzinfo=UTC)
T1 = datetime(2025, 1, 2, tzinfo=UTC)

Handler = Callable[[fnv1.RunFunctionRequest, fnv1.RunFunctionResponse], None]


def composition(*steps: str) -> dict[str, Any]:
    return {
        "apiVersion": "apiextensions.crossplane.io/v1",
        "kind": "Composition",
        "metadata": {"name": "test"},
        "spec": {
            "compositeTypeRef": {"apiVersion": XR["apiVersion"], "kind": XR["kind"]},
            "mode": "Pipeline",
            "pipeline": [{"step": s, "functionRef": {"name": s}} for s in steps],
        },
    }


class Functions:
    """Scripted functions that record every request they get."""

    def __init__(self, **handlers: Handler) -> None:
        self.handlers = handlers
        self.requests: list[tuple[str, fnv1.RunFunctionRequest]] = []

    def __call__(self, name: str, req: fnv1.RunFunctionRequest) -> fnv1.RunFunctionResponse:
        copy = fnv1.RunFunctionRequest()
        copy.CopyFrom(req)
        self.requests.append((name, copy))
        rsp = response.to(req)
        self.handlers[name](req, rsp)
        return rsp

    def calls_to(self, name: str) -> list[fnv1.RunFunctionRequest]:
        return [req for n, req in self.requests if n == name]


def wants_region_us(req: fnv1.RunFunctionRequest, rsp: fnv1.RunFunctionResponse) -> None:
    response.require_resources(
        rsp, "clusters", "modelfleet.io/v1alpha1", "InferenceCluster", match_labels={"region": "us"}
    )
    for cluster in request.get_required_resources(req, "clusters"):
        name = cluster["metadata"]["name"]
        rsp.desired.resources[f"{name}-claim"].resource.update(
            {"apiVersion": "v1", "kind": "ConfigMap", "data": {"cluster": name}}
        )


def test_requirements_are_resolved_and_the_function_called_again_until_they_repeat() -> None:
    fns = Functions(cache=wants_region_us)
    result = run_pipeline(XR, composition("cache"), fns, required_pool=[CLUSTER_EU, CLUSTER_US])

    first, second = fns.calls_to("cache")
    assert "clusters" not in first.required_resources
    assert [
        resource.struct_to_dict(r.resource)["metadata"]["name"]
        for r in second.required_resources["clusters"].items
    ] == ["gke-us"]
    assert result.calls == {"cache": 2}
    assert list(result.resources) == ["gke-us-claim"]
    assert result.fatal is None


def test_a_requirement_nothing_matches_is_sent_resolved_but_empty() -> None:
    fns = Functions(cache=wants_region_us)
    run_pipeline(XR, composition("cache"), fns, required_pool=[CLUSTER_EU])
    second = fns.calls_to("cache")[1]
    assert "clusters" in second.required_resources
    assert len(second.required_resources["clusters"].items) == 0


def test_a_function_without_requirements_is_called_once() -> None:
    fns = Functions(plain=lambda req, rsp: None)
    result = run_pipeline(XR, composition("plain"), fns)
    assert result.calls == {"plain": 1}


def test_requirements_that_never_settle_stop_after_six_calls_and_fail_the_pipeline() -> None:
    counter = {"n": 0}

    def restless(req: fnv1.RunFunctionRequest, rsp: fnv1.RunFunctionResponse) -> None:
        counter["n"] += 1
        response.require_resources(
            rsp, "clusters", "v1", "ConfigMap", match_name=f"attempt-{counter['n']}"
        )

    fns = Functions(restless=restless)
    result = run_pipeline(XR, composition("restless"), fns, observed={"keep": {"kind": "X"}})
    assert len(fns.calls_to("restless")) == MAX_CALLS_PER_STEP == 6
    assert result.fatal is not None and "didn't stabilize" in result.fatal
    assert result.resources == {"keep": {"kind": "X"}}, "a failed reconcile applies nothing"


def test_requirements_from_the_deprecated_extra_resources_field_are_resolved_too() -> None:
    def legacy(req: fnv1.RunFunctionRequest, rsp: fnv1.RunFunctionResponse) -> None:
        selector = rsp.requirements.extra_resources["clusters"]
        selector.api_version, selector.kind = "modelfleet.io/v1alpha1", "InferenceCluster"
        selector.match_name = "gke-eu"

    fns = Functions(legacy=legacy)
    run_pipeline(XR, composition("legacy"), fns, required_pool=[CLUSTER_US, CLUSTER_EU])
    second = fns.calls_to("legacy")[1]
    [found] = second.extra_resources["clusters"].items
    assert resource.struct_to_dict(found.resource)["metadata"]["name"] == "gke-eu"


def test_a_fatal_result_stops_the_pipeline_and_applies_nothing() -> None:
    def broken(req: fnv1.RunFunctionRequest, rsp: fnv1.RunFunctionResponse) -> None:
        rsp.desired.resources["new"].resource.update({"kind": "ConfigMap"})
        response.fatal(rsp, "spec.sizeGiB is required")

    fns = Functions(first=broken, second=lambda req, rsp: None)
    observed = {"old": {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "old"}}}
    result = run_pipeline(XR, composition("first", "second"), fns, observed=observed, now=T0)

    assert fns.calls_to("second") == []
    assert result.fatal == "spec.sizeGiB is required" and result.fatal_step == "first"
    assert result.error == "pipeline step 'first' returned a fatal result: spec.sizeGiB is required"
    assert result.resources == observed
    [synced] = result.composite["status"]["conditions"]
    assert (synced["type"], synced["status"], synced["reason"]) == (
        "Synced",
        "False",
        "ReconcileError",
    )


def test_desired_state_and_context_pass_from_step_to_step() -> None:
    def first(req: fnv1.RunFunctionRequest, rsp: fnv1.RunFunctionResponse) -> None:
        rsp.desired.resources["a"].resource.update({"kind": "ConfigMap"})
        rsp.context.update({"first-was-here": True})

    def second(req: fnv1.RunFunctionRequest, rsp: fnv1.RunFunctionResponse) -> None:
        assert list(req.desired.resources) == ["a"]
        assert resource.struct_to_dict(req.context) == {"seed": 1, "first-was-here": True}
        rsp.desired.resources["b"].resource.update({"kind": "Secret"})
        rsp.desired.resources["b"].ready = fnv1.READY_TRUE

    fns = Functions(first=first, second=second)
    result = run_pipeline(XR, composition("first", "second"), fns, context={"seed": 1})
    assert set(result.resources) == {"a", "b"}
    assert result.ready == {"a": False, "b": True}
    assert result.context == {"seed": 1, "first-was-here": True}


def test_step_input_reaches_the_function() -> None:
    comp = composition("configured")
    comp["spec"]["pipeline"][0]["input"] = {"apiVersion": "x/v1", "kind": "Input", "n": 3}
    fns = Functions(configured=lambda req, rsp: None)
    run_pipeline(XR, comp, fns)
    assert resource.struct_to_dict(fns.calls_to("configured")[0].input)["n"] == 3


def ready_and_reporting(ready: int, claim_ready: int = fnv1.READY_UNSPECIFIED) -> Handler:
    def handler(req: fnv1.RunFunctionRequest, rsp: fnv1.RunFunctionResponse) -> None:
        rsp.desired.composite.resource.update({"status": {"summary": {"ready": "0/1"}}})
        rsp.desired.composite.ready = ready  # type: ignore[assignment]
        rsp.desired.resources["claim"].resource.update({"kind": "ConfigMap"})
        rsp.desired.resources["claim"].ready = claim_ready  # type: ignore[assignment]
        response.set_conditions(
            rsp,
            resource.Condition(typ="ArtifactReady", status="False", reason="Hydrating"),
            resource.Condition(typ="Ready", status="True", reason="Sneaky"),
            resource.Condition(typ="Responsive", status="False", reason="Sneaky"),
        )

    return handler


def conditions_of(xr: dict[str, Any]) -> dict[str, dict[str, str]]:
    return {c["type"]: c for c in xr["status"]["conditions"]}


OBSERVED_READY_CLAIM = {
    "kind": "ConfigMap",
    "status": {"conditions": [{"type": "Ready", "status": "True"}]},
}
UNSPECIFIED, TRUE, FALSE = fnv1.READY_UNSPECIFIED, fnv1.READY_TRUE, fnv1.READY_FALSE


@pytest.mark.parametrize(
    ("composite_ready", "claim_ready", "observed_claim", "ready", "reason", "message"),
    [
        pytest.param(TRUE, UNSPECIFIED, None, "True", "Available", None, id="xr-said-ready"),
        pytest.param(FALSE, TRUE, None, "False", "Creating", None, id="xr-said-not-ready"),
        pytest.param(
            TRUE, FALSE, None, "True", "Available", None, id="xr-said-ready-supersedes-composed"
        ),
        pytest.param(
            UNSPECIFIED,
            UNSPECIFIED,
            None,
            "False",
            "Creating",
            "Unready resources: claim",
            id="xr-unspecified-composed-unspecified",
        ),
        pytest.param(
            UNSPECIFIED,
            UNSPECIFIED,
            OBSERVED_READY_CLAIM,
            "False",
            "Creating",
            "Unready resources: claim",
            id="composed-observed-ready-but-unspecified-is-still-not-ready",
        ),
        pytest.param(UNSPECIFIED, TRUE, None, "True", "Available", None, id="composed-said-ready"),
    ],
)
def test_the_xr_ready_condition_follows_composite_and_composed_readiness(
    composite_ready: int,
    claim_ready: int,
    observed_claim: dict[str, Any] | None,
    ready: str,
    reason: str,
    message: str | None,
) -> None:
    """Crossplane v2.3: the functions' word on the XR supersedes; without one, the XR is
    Available only when every composed resource was said ready (nothing is derived from
    what is observed)."""
    fns = Functions(fn=ready_and_reporting(composite_ready, claim_ready))
    observed = {"claim": observed_claim} if observed_claim else {}
    result = run_pipeline(XR, composition("fn"), fns, observed=observed, now=T0)
    got = conditions_of(result.composite)
    assert (got["Ready"]["status"], got["Ready"]["reason"]) == (ready, reason)
    assert got["Ready"].get("message") == message
    assert got["Synced"]["reason"] == "ReconcileSuccess"
    assert result.unready() == ([] if claim_ready == TRUE else ["claim"])


def test_function_conditions_and_status_land_on_the_xr_but_never_ready_or_synced() -> None:
    fns = Functions(fn=ready_and_reporting(fnv1.READY_FALSE))
    xr = dict(XR, status={"stale": "from an older release", "conditions": []})
    result = run_pipeline(xr, composition("fn"), fns, now=T0)
    status = result.composite["status"]
    assert status["summary"] == {"ready": "0/1"}
    assert "stale" not in status, "status fields belong to the functions that write them"
    got = conditions_of(result.composite)
    assert got["ArtifactReady"]["reason"] == "Hydrating"
    assert got["Ready"]["reason"] == "Creating", "a function cannot set Ready itself"
    assert "Responsive" not in got, "nor any other system condition"
    assert result.composite["spec"] == XR["spec"]


def test_last_transition_time_is_kept_while_a_condition_is_unchanged() -> None:
    fns = Functions(fn=ready_and_reporting(fnv1.READY_FALSE))
    first = run_pipeline(XR, composition("fn"), fns, now=T0)
    second = run_pipeline(first.composite, composition("fn"), fns, now=T1)
    got = conditions_of(second.composite)
    assert got["ArtifactReady"]["lastTransitionTime"] == "2025-01-01T00:00:00Z"

    flipped = Functions(fn=ready_and_reporting(fnv1.READY_TRUE))
    third = run_pipeline(second.composite, composition("fn"), flipped, now=T1)
    assert conditions_of(third.composite)["Ready"]["lastTransitionTime"] == "2025-01-02T00:00:00Z"


def test_results_of_every_step_are_kept_in_order_with_their_step() -> None:
    def talk(word: str) -> Handler:
        return lambda req, rsp: response.normal(rsp, word)

    fns = Functions(one=talk("hello"), two=talk("world"))
    result = run_pipeline(XR, composition("one", "two"), fns)
    assert [(s.step, s.result.message) for s in result.step_results] == [
        ("one", "hello"),
        ("two", "world"),
    ]
    assert [r.message for r in result.results] == ["hello", "world"]


def test_a_composition_without_pipeline_steps_is_rejected() -> None:
    comp = composition()
    with pytest.raises(PipelineError, match="no pipeline steps"):
        run_pipeline(XR, comp, Functions())


def test_the_composition_is_chosen_by_the_xr_type() -> None:
    comps = repository_compositions()
    assert {c["spec"]["compositeTypeRef"]["kind"] for c in comps} >= {
        "InferenceCluster",
        "ModelCache",
        "ModelDeployment",
        "ModelReplica",
    }
    chosen = composition_for(XR, comps)
    assert chosen is not None
    assert chosen["spec"]["pipeline"][0]["functionRef"]["name"] == "compose-model-cache"
    assert composition_for(dict(XR, kind="Unknown"), comps) is None


def test_composed_resources_get_crossplane_metadata() -> None:
    desired = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"labels": {"a": "b"}}}
    out = composed_metadata(desired, XR, "claim")
    meta = out["metadata"]
    assert meta["generateName"] == "qwen-"
    assert meta["namespace"] == "ml-team"
    assert meta["annotations"]["crossplane.io/composition-resource-name"] == "claim"
    assert meta["labels"] == {"a": "b", "crossplane.io/composite": "qwen"}
    [owner] = meta["ownerReferences"]
    assert (owner["kind"], owner["name"], owner["controller"]) == ("ModelCache", "qwen", True)

    observed = {"metadata": {"name": "qwen-x7k2p", "namespace": "ml-team"}}
    kept = composed_metadata(desired, XR, "claim", observed)["metadata"]
    assert kept["name"] == "qwen-x7k2p" and "generateName" not in kept


def test_the_xr_is_run_again_after_the_shortest_ttl_its_steps_asked_for() -> None:
    def asks(seconds: int) -> Handler:
        def handler(req: fnv1.RunFunctionRequest, rsp: fnv1.RunFunctionResponse) -> None:
            rsp.meta.ttl.FromTimedelta(timedelta(seconds=seconds))

        return handler

    fns = Functions(first=asks(60), second=asks(5))
    result = run_pipeline(XR, composition("first", "second"), fns, now=T0)
    assert result.ttls == {"first": timedelta(seconds=60), "second": timedelta(seconds=5)}
    assert result.ttl == timedelta(seconds=5)


def test_a_failed_pipeline_reports_no_ttl() -> None:
    """Crossplane retries a failed reconcile on its error backoff, whatever a step asked."""

    def broken(req: fnv1.RunFunctionRequest, rsp: fnv1.RunFunctionResponse) -> None:
        response.fatal(rsp, "spec.sizeGiB is required")

    fns = Functions(first=lambda req, rsp: None, second=broken)
    result = run_pipeline(XR, composition("first", "second"), fns, now=T0)
    assert result.ttls["first"] == timedelta(minutes=1)  # response.to's default
    assert result.ttl is None
