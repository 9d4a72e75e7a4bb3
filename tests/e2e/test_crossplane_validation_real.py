"""Our XRDs and Compositions as Crossplane v2.3.4 itself judges them, on the real control plane.

Crossplane validates Compositions and XRDs with the CEL rules of its CRDs (it no longer serves
webhooks for them). Every definition of ours is accepted by a server-side dry run and each XRD
is Established; each broken variant in the table below
(one edit to a file of ours, as a slip in a change would make it) is refused, with Crossplane's
words, so a change that breaks them fails here before it ships.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from modelfleet_cli.xrd import xr_name_errors
from modelfleet_devtools.e2e.fleet import condition
from modelfleet_devtools.e2e.kube import resource_path
from modelfleet_devtools.e2e.stack import RealControlPlane
from modelfleet_devtools.paths import APIS_DIR, EXAMPLES_DIR

Json = dict[str, Any]
OURS = sorted([*APIS_DIR.glob("*/definition.yaml"), *APIS_DIR.glob("*/composition.yaml")])
XRDS = resource_path("apiextensions.crossplane.io/v2", "compositeresourcedefinitions")


def _ours(path: str) -> Json:
    return dict(yaml.safe_load((APIS_DIR / path).read_text()))


def dry_run(plane: RealControlPlane, obj: Json) -> tuple[bool, str]:
    """Server-side apply `obj` without persisting it: accepted?, and what the server said."""
    result = plane.client.run_kubectl(
        "apply", "--server-side", "--force-conflicts", "--dry-run=server", "-f", "-",
        stdin=yaml.safe_dump(obj),
    )  # fmt: skip
    return result.returncode == 0, result.stdout + result.stderr


@pytest.mark.parametrize("path", OURS, ids=lambda p: str(Path(p).relative_to(APIS_DIR)))
def test_crossplane_accepts_our_definition(
    real_control_plane: RealControlPlane, path: Path
) -> None:
    accepted, said = dry_run(real_control_plane, dict(yaml.safe_load(path.read_text())))
    assert accepted, said


def test_every_xrd_of_ours_is_established(real_control_plane: RealControlPlane) -> None:
    names = {_ours(str(p.relative_to(APIS_DIR)))["metadata"]["name"] for p in OURS}
    installed = {x["metadata"]["name"]: x for x in real_control_plane.client.list(XRDS)}
    ours = {n: installed.get(n) for n in names if n.endswith(".modelfleet.io")}
    assert ours and all(ours.values()), sorted(n for n, x in ours.items() if not x)
    for name, xrd in ours.items():
        established = condition(xrd, "Established")
        assert established.get("status") == "True", (name, established)


def _without_pipeline(obj: Json) -> None:
    # A new Composition: on ours, server-side apply would keep the steps the package manager
    # applied (it owns them), whatever this one leaves out.
    obj["metadata"]["name"] += "-without-steps"
    del obj["spec"]["pipeline"]


def _uppercase_plural(obj: Json) -> None:
    obj["spec"]["names"]["plural"] = "ModelCaches"


def _claims_offered(obj: Json) -> None:
    obj["spec"]["claimNames"] = {"kind": "ModelCacheClaim", "plural": "modelcacheclaims"}


def _type_ref_changed(obj: Json) -> None:
    obj["spec"]["compositeTypeRef"]["kind"] = "ModelDeployment"


def _group_changed(obj: Json) -> None:
    obj["spec"]["group"] = "modelfleet.example.com"


Edit = Callable[[Json], None]
BROKEN: list[tuple[str, str, Edit, str]] = [
    # (what a reviewer would call it, our file it starts from, the edit, Crossplane's words)
    (
        "a Pipeline Composition with no steps",
        "modelcaches/composition.yaml",
        _without_pipeline,
        "an array of pipeline steps is required in Pipeline mode",
    ),
    (
        "an XRD with an uppercase plural",
        "modelcaches/definition.yaml",
        _uppercase_plural,
        "Plural name must be lowercase",
    ),
    (
        "a v2 XRD offering claims",
        "modeldeployments/definition.yaml",
        _claims_offered,
        "Claims aren't supported in apiextensions.crossplane.io/v2",
    ),
    (
        "a Composition moved to another kind in an upgrade",
        "modelreplicas/composition.yaml",
        _type_ref_changed,
        "Value is immutable",
    ),
    (
        "an XRD moved to another group in an upgrade",
        "inferenceclusters/definition.yaml",
        _group_changed,
        "Value is immutable",
    ),
]


@pytest.mark.parametrize(("case", "path", "edit", "words"), BROKEN, ids=[b[0] for b in BROKEN])
def test_crossplane_refuses_a_broken_definition(
    real_control_plane: RealControlPlane, case: str, path: str, edit: Edit, words: str
) -> None:
    obj = _ours(path)
    assert dry_run(real_control_plane, copy.deepcopy(obj))[0], f"{path} itself is refused"
    edit(obj)
    accepted, said = dry_run(real_control_plane, obj)
    assert not accepted, f"{case}: accepted"
    assert words in said, said


LABEL_VALUE_MAX = 63
NAMED = [
    # (our example XR, the namespace it is tried in: one the control plane has)
    ("quickstart/inferencecluster.yaml", None),
    ("quickstart/modelcache.yaml", "default"),
    ("quickstart/modeldeployment.yaml", "default"),
    ("single-replica/modelreplica.yaml", "default"),
]


def _named(path: str, namespace: str | None, length: int) -> Json:
    xr = dict(yaml.safe_load((EXAMPLES_DIR / path).read_text()))
    stem = xr["metadata"]["name"]
    xr["metadata"] = {"name": (stem + "-" + "x" * length)[:length]}
    if namespace:
        xr["metadata"]["namespace"] = namespace
    return xr


@pytest.mark.parametrize(("path", "namespace"), NAMED, ids=[n[0] for n in NAMED])
def test_the_api_server_refuses_an_xr_name_longer_than_a_label_value(
    real_control_plane: RealControlPlane, path: str, namespace: str | None
) -> None:
    """Crossplane labels what an XR composes with the XR's name (`crossplane.io/composite`), and
    the CRD it generates from each XRD caps the name at a label value's 63 bytes, so a longer
    name is refused at `kubectl apply`, with the words `modelfleet render` and `simulate` use
    (modelfleet_cli.xrd.xr_name_errors)."""
    longest = _named(path, namespace, LABEL_VALUE_MAX)
    accepted, said = dry_run(real_control_plane, longest)
    assert accepted, said
    accepted, said = dry_run(real_control_plane, _named(path, namespace, LABEL_VALUE_MAX + 1))
    assert not accepted, f"{path}: a {LABEL_VALUE_MAX + 1}-character name accepted"
    assert xr_name_errors(longest | {"metadata": {"name": "x" * 64}})[0] in said, said


def test_kubectl_refuses_an_unknown_field_with_the_words_render_and_simulate_use(
    real_control_plane: RealControlPlane,
) -> None:
    """kubectl's default strict field validation refuses a misspelt field (without it, a
    misspelt `clusterSelector` would stage the model on every cluster)."""
    cache = _named("quickstart/modelcache.yaml", "default", 20)
    cache["spec"]["clusterSelecter"] = cache["spec"].pop("clusterSelector")
    applied = real_control_plane.client.run_kubectl(
        "apply", "--dry-run=server", "-f", "-", stdin=yaml.safe_dump(cache)
    )  # `kubectl apply` as a user runs it: client-side, default (strict) field validation
    said = applied.stdout + applied.stderr
    assert applied.returncode != 0, "a ModelCache with an unknown field accepted"
    assert 'strict decoding error: unknown field "spec.clusterSelecter"' in said, said
    assert "cannot be handled as a ModelCache" in said, said
