"""The docs' generated sections: the quickstart timelines are `modelfleet simulate`'s own
lines, abridged by a rule per doc, and `kubectl get pkg` lists what apis/crossplane.yaml
depends on; `modelfleet-generate --check` fails while one is stale."""

import pytest
import yaml
from modelfleet_devtools import apis_inventory, generated_docs
from modelfleet_devtools.quickstart_timeline import CLI, GETTING_STARTED, SECTION, abridged

PRINTED = (
    "round 1   InferenceCluster gke-dev            not ready: Connected Connecting",
    "          Ready=False Creating",
    "round 1   ModelCache ml-team/q                gke-dev Pending  0/1 ready",
    "          gke-dev: cluster gke-dev is not connected",
    "round 1   ModelCacheShard ml-team/q-4ef6      gke-dev Pending  0/1 ready",
    "round 1   ModelDeployment ml-team/q           gke-dev Unschedulable  0/2 ready",
    "          Scheduled=False NoClusters: 0/2 replica(s) placed (nowhere)",
    "          next check in 5 s: waiting for Scheduled (NoClusters)",
    "round 2   ModelReplica ml-team/q-gke-dev-ec67a  WaitingForCache  0/2 ready",
    "          WorkloadReady=False WaitingForCache: ...",
    "all 5 XRs Ready after 6 rounds",
)
ABRIDGED = [
    pytest.param(GETTING_STARTED, [
        PRINTED[0], PRINTED[2], PRINTED[5], PRINTED[8], PRINTED[10],
    ], id="getting-started: every XR's header but the shard's, and the closing line"),
    pytest.param(CLI, [
        PRINTED[2], "...", *PRINTED[5:8], "...", PRINTED[10],
    ], id="cli.md: the deployment's lines, the cache's header, ... where lines are left out"),
]  # fmt: skip


@pytest.mark.parametrize(("how", "quoted"), ABRIDGED)
def test_each_doc_quotes_the_lines_its_rule_keeps(how, quoted):
    assert abridged(PRINTED, how).splitlines() == quoted


def test_kubectl_get_pkg_lists_the_configuration_and_every_function_it_depends_on():
    configuration = yaml.safe_load(apis_inventory.CONFIGURATION.read_text())
    functions = [
        d["package"].rsplit("/", 1)[-1]
        for d in configuration["spec"]["dependsOn"]
        if d["kind"] == "Function"
    ]
    assert apis_inventory.function_names() == functions
    comment = " ".join(w for w in apis_inventory.packages_section().split() if w != "#")
    assert "the Configuration, " + ", ".join(functions) in comment


def test_a_stale_section_is_found_and_rewritten(tmp_path, monkeypatch):
    doc = tmp_path / "doc.md"
    start, end = (f"<!-- {SECTION}: {edge} -->" for edge in ("start", "end"))
    doc.write_text(f"text\n{start}\nold lines\n{end}\nmore\n")
    monkeypatch.setattr(generated_docs, "REPO_ROOT", tmp_path)
    monkeypatch.setattr(generated_docs, "SECTIONS", {doc: [(SECTION, lambda _: "new lines")]})
    [(target, text)] = generated_docs.generated()
    assert target == doc
    assert text == f"text\n{start}\nnew lines\n{end}\nmore\n"
