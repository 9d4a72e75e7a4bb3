"""`kubectl scale md/kimi-k2 --replicas 3`: the XRD's scale subresource points at integer
fields the function keeps filled in.

No labelSelectorPath: it is for a HorizontalPodAutoscaler reading pod metrics, and a
ModelDeployment's pods run on workload clusters, not beside the XR."""

from typing import Any

import yaml
from deployment_world import deployment, desired_replicas, placement, schedule
from modelfleet_devtools.paths import APIS_DIR
from modelfleet_devtools.requests import desired_status
from modelfleet_devtools.validation import require_shared_schemas, validate_manifest
from modelfleet_devtools.world import inference_cluster

XRD = yaml.safe_load((APIS_DIR / "modeldeployments" / "definition.yaml").read_text())
VERSION = XRD["spec"]["versions"][0]
SCALE = VERSION["subresources"]["scale"]


def schema_at(path: str) -> dict[str, Any]:
    """The schema node a `.a.b` JSON path names in the XRD."""
    node = VERSION["schema"]["openAPIV3Schema"]
    for part in path.lstrip(".").split("."):
        node = node["properties"][part]
    return node


def value_at(obj: dict[str, Any], path: str) -> Any:
    for part in path.lstrip(".").split("."):
        obj = obj[part]
    return obj


def test_scale_paths_are_integer_fields_of_the_schema():
    assert SCALE["specReplicasPath"] == ".spec.replicas"
    assert SCALE["statusReplicasPath"].startswith(".status.")
    assert schema_at(SCALE["specReplicasPath"])["type"] == "integer"
    assert schema_at(SCALE["statusReplicasPath"])["type"] == "integer"


def test_the_xrd_with_its_scale_subresource_is_a_valid_crossplane_xrd():
    require_shared_schemas()
    errors = validate_manifest(XRD)
    # The CEL evaluator lacks Kubernetes' string library (lowerAscii) used by rules on
    # spec.names; those rules cannot be checked here, every other rule and the schema are.
    assert [e for e in errors if "'lowerAscii'" not in e] == []


def test_kubectl_scale_up_and_down_moves_placement_and_the_status_replicas():
    clusters = [inference_cluster(n) for n in ("a", "b")]
    xr = deployment(replicas=1)
    one = schedule(xr, clusters)
    # Filled in from the first reconcile, a whole number (protobuf Structs carry floats).
    observed_replicas = value_at({"status": desired_status(one)}, SCALE["statusReplicasPath"])
    assert float(observed_replicas).is_integer()

    xr["spec"]["replicas"] = 3  # what the /scale subresource writes at specReplicasPath
    three = schedule(xr, clusters, observed=desired_replicas(one))
    assert placement(three) == {"a": 2, "b": 1}
    assert desired_status(three)["replicas"]["desired"] == 3

    xr["spec"]["replicas"] = 1
    back = schedule(xr, clusters, observed=desired_replicas(three))
    assert placement(back) == placement(one) == {"a": 1}
