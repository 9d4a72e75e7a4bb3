"""parse_spec: the spec as its generated model, declared defaults applied, or why not."""

import pytest
from modelfleet_contracts.models.modelreplica import ModelReplicaSpec
from modelfleet_contracts.spec import InvalidSpec, filled, parse_spec

BASE = {"clusterName": "gke-us", "replicas": 2.0, "nodes": 1.0}


@pytest.mark.parametrize(
    ("name", "engine", "port", "framework"),
    [
        ("no engine block", None, None, None),
        ("engine without port", {}, 8000, "vLLM"),
        ("explicit null port reads as absent", {"port": None}, 8000, "vLLM"),
        ("a port as Crossplane sends it", {"port": 9000.0}, 9000, "vLLM"),
    ],
)
def test_a_valid_spec_has_its_declared_types_and_defaults(name, engine, port, framework):
    raw = {**BASE, **({"engine": engine} if engine is not None else {})}
    spec = parse_spec(ModelReplicaSpec, raw)
    assert isinstance(spec, ModelReplicaSpec)
    assert spec.replicas == 2 and isinstance(spec.replicas, int)
    if engine is None:
        assert spec.engine is None
    else:
        assert spec.engine is not None
        assert spec.engine.port == port and spec.engine.framework == framework


@pytest.mark.parametrize(
    ("raw", "where"),
    [
        ({**BASE, "replicas": -1}, "spec.replicas:"),
        ({**BASE, "engine": {"port": 0}}, "spec.engine.port:"),
        ({"replicas": 1, "nodes": 1}, "spec.clusterName:"),
        ("not a mapping", "spec:"),
    ],
)
def test_an_invalid_spec_says_where_and_how_many_problems(raw, where):
    problem = parse_spec(ModelReplicaSpec, raw)
    assert isinstance(problem, InvalidSpec)
    assert problem.message.startswith(where)
    assert "problem(s) in total" in problem.message


def test_filled_refuses_a_default_that_is_missing():
    assert filled(8000) == 8000
    with pytest.raises(ValueError):
        filled(None)


def test_a_check_runs_on_a_valid_spec_only_and_its_answer_is_the_problem():
    def no_gang(spec: ModelReplicaSpec) -> str | None:
        return "gangs are not allowed here" if spec.nodes > 1 else None

    assert isinstance(parse_spec(ModelReplicaSpec, BASE, no_gang), ModelReplicaSpec)
    refused = parse_spec(ModelReplicaSpec, {**BASE, "nodes": 2}, no_gang)
    assert refused == InvalidSpec("gangs are not allowed here")
    # The schema speaks first: the check never sees a spec that is not one.
    invalid = parse_spec(ModelReplicaSpec, {**BASE, "nodes": 0}, no_gang)
    assert isinstance(invalid, InvalidSpec) and invalid.message.startswith("spec.nodes:")
