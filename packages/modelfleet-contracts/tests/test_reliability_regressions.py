"""Defects the reliability work found in shared code (docs/reliability.md), each pinned."""

import pytest
from modelfleet_contracts.conditions import Status, is_transition, previous_condition

READY = Status("ArtifactReady", True, "Staged")


@pytest.mark.parametrize(
    "conditions",
    [True, 3, "Ready", {"type": "ArtifactReady"}, None],
    ids=["boolean", "number", "string", "mapping", "null"],
)
def test_an_xr_whose_conditions_are_not_a_list_has_no_previous_condition(conditions):
    """Found by the fuzz properties: `status.conditions: true` on the observed XR made every
    function raise (`'bool' object is not iterable`) while deciding whether to emit an
    event. A shape that is not a list of conditions means no previous condition."""
    xr = {"status": {"conditions": conditions}}
    assert previous_condition(xr, "ArtifactReady") is None
    assert is_transition(xr, READY)


def test_a_well_formed_previous_condition_is_still_found():
    xr = {
        "status": {"conditions": [{"type": "ArtifactReady", "status": "True", "reason": "Staged"}]}
    }
    assert previous_condition(xr, "ArtifactReady") == xr["status"]["conditions"][0]
    assert not is_transition(xr, READY)
