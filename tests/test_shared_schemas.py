"""One schema in two XRDs: what a ModelReplica takes over from its ModelDeployment.

The scheduler copies `engine`, `rollout`, `gang` and `placement` from a ModelDeployment
into each ModelReplica as written (compose_model_deployment.core.CARRIED_FIELDS), so both
XRDs must declare them identically: types, bounds, defaults, CEL rules and descriptions.
A change to one XRD that is not made in the other fails here, not on a cluster.
"""

from pathlib import Path
from typing import Any

import pytest
import yaml
from compose_model_deployment.core import CARRIED_FIELDS

ROOT = Path(__file__).resolve().parents[1]


def spec_schema(plural: str) -> dict[str, Any]:
    xrd = yaml.safe_load((ROOT / "apis" / plural / "definition.yaml").read_text())
    [version] = [v for v in xrd["spec"]["versions"] if v.get("referenceable")]
    schema: dict[str, Any] = version["schema"]["openAPIV3Schema"]["properties"]["spec"]
    return schema


def test_the_carried_fields_are_the_four_the_schemas_share():
    assert CARRIED_FIELDS == ("engine", "rollout", "gang", "placement")


@pytest.mark.parametrize("field", CARRIED_FIELDS)
def test_deployment_and_replica_declare_a_carried_field_identically(field):
    deployment = spec_schema("modeldeployments")["properties"]
    replica = spec_schema("modelreplicas")["properties"]
    assert field in deployment and field in replica
    assert deployment[field] == replica[field]
