"""What the API server refuses at `kubectl apply`, refused by `render` and `simulate` before
any function runs, with the API server's (or kubectl's) words, exit 1: a name that is not a
lowercase RFC 1123 subdomain, a namespace that is not an RFC 1123 label, no name at all, an
apiVersion or kind no XRD serves. Field paths are written as kubectl writes them."""

from pathlib import Path
from typing import Any

import pytest
from modelfleet_cli.exit_codes import ExitCode
from modelfleet_cli.object_meta import metadata_errors
from modelfleet_cli.xrd import check_xr, kubectl_path
from test_xr_checks import edited, fleet_with, quickstart, run

SUBDOMAIN = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters"
LABEL = "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-'"


def renamed(name: str | None, namespace: str = "ml-team") -> dict[str, Any]:
    xr = quickstart("modelcache.yaml")
    xr["metadata"] = {"namespace": namespace} | ({} if name is None else {"name": name})
    return xr


REFUSED = [
    pytest.param(
        renamed("qwen3-模型-ü"),
        f'metadata.name: Invalid value: "qwen3-模型-ü": {SUBDOMAIN}',
        id="a name with non-ASCII letters",
    ),
    pytest.param(
        renamed("Qwen3_BAD.name"),
        f'metadata.name: Invalid value: "Qwen3_BAD.name": {SUBDOMAIN}',
        id="a name with capitals and an underscore",
    ),
    pytest.param(
        renamed("q" * 300),
        "must be no more than 253 characters",
        id="a name of 300 characters",
    ),
    pytest.param(
        renamed("qwen3", namespace="ml team"),
        f'metadata.namespace: Invalid value: "ml team": {LABEL}',
        id="a namespace with a space",
    ),
    pytest.param(
        renamed("qwen3", namespace="n" * 64),
        "metadata.namespace: Invalid value: ",
        id="a namespace of 64 characters",
    ),
    pytest.param(
        renamed(None),
        "ModelCache ml-team/(no name) is invalid: metadata.name: Required value: name or "
        "generateName is required",
        id="no name",
    ),
    pytest.param(
        quickstart("modelcache.yaml") | {"apiVersion": "modelfleet.io/v1"},
        'ModelCache ml-team/qwen3-0-6b: no matches for kind "ModelCache" in version '
        '"modelfleet.io/v1": no CRD serves it (served: ',
        id="a wrong apiVersion",
    ),
    pytest.param(
        quickstart("modelcache.yaml") | {"kind": "ModelCaches"},
        'no matches for kind "ModelCaches" in version "modelfleet.io/v1alpha1"',
        id="a wrong kind",
    ),
    pytest.param(
        edited("inferencecluster.yaml", "spec", "nodePools", 0, "gpu", "count", -1),
        "spec.nodePools[0].gpu.count: -1 is less than the minimum of 0",
        id="a schema error inside a list, with kubectl's path",
    ),
]


@pytest.mark.parametrize(("xr", "message"), REFUSED)
def test_render_and_simulate_refuse_what_the_api_server_refuses(
    tmp_path: Path, xr: dict[str, Any], message: str
) -> None:
    fleet, path = fleet_with(tmp_path, xr)
    rendered = run("render", str(path))
    simulated = run("simulate", str(fleet), "--quiet")
    assert rendered.exit_code == simulated.exit_code == ExitCode.INPUT_ERROR
    said = rendered.stderr.removeprefix("modelfleet render: ")
    assert said == simulated.stderr.removeprefix("modelfleet simulate: ")
    assert said.startswith(f"{path}: ")
    assert message in said
    assert len(said.strip().splitlines()) == 1 and rendered.stdout == ""


ACCEPTED = [
    pytest.param("qwen3-0-6b", "ml-team", id="the quickstart's names"),
    pytest.param("llama-3.1-8b", "team-a", id="a name with dots"),
    pytest.param("a" * 253, "n" * 63, id="the longest name and namespace"),
    pytest.param("0", "1", id="digits only"),
]


@pytest.mark.parametrize(("name", "namespace"), ACCEPTED)
def test_names_the_api_server_accepts_pass(name: str, namespace: str) -> None:
    xr = {"metadata": {"name": name, "namespace": namespace}}
    assert metadata_errors(xr, namespaced=True) == []


def test_a_cluster_scoped_xr_is_not_checked_for_a_namespace() -> None:
    xr = {"metadata": {"name": "gke-dev", "namespace": "ml team"}}
    assert metadata_errors(xr, namespaced=False) == []


def test_a_long_value_is_shown_shortened_with_its_length() -> None:
    [too_long, _] = metadata_errors({"metadata": {"name": "Q" * 300}}, namespaced=True)
    assert "(300 characters)" in too_long and len(too_long) < 200


def test_metadata_is_refused_before_the_schema() -> None:
    xr = renamed("Bad_Name")
    xr["spec"]["sizeGiB"] = -1
    errors = check_xr(xr).errors
    assert errors[0].startswith("metadata.name: ")
    assert any(e.startswith("spec.sizeGiB: ") for e in errors)


@pytest.mark.parametrize(
    ("parts", "path"),
    [
        pytest.param(["spec", "nodePools", 0, "gpu", "count"], "spec.nodePools[0].gpu.count"),
        pytest.param([0, "name"], "[0].name"),
        pytest.param(["spec"], "spec"),
        pytest.param([], ""),
    ],
)
def test_paths_are_written_as_kubectl_writes_them(parts: list[str | int], path: str) -> None:
    assert kubectl_path(parts) == path
