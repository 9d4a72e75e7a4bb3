"""What every example's serving pods run, rendered through the real functions: a ModelDeployment
composes its ModelReplicas, each replica its workload. No container runs a shell; a turnkey
vLLM pod runs `vllm serve`, and a gang's pods vLLM's own multi-node launcher."""

from pathlib import Path
from typing import Any

import pytest
import yaml
from render_inputs import example_objects
from render_world import EXAMPLES, remote, render, required, single

SHELLS = {"sh", "bash", "dash", "ash", "zsh", "ksh"}
GANGS = {"multinode"}  # the examples whose model needs a gang of several nodes


def serving_xrs() -> list[tuple[str, str, str]]:
    """(example, kind, name) of every ModelDeployment and ModelReplica of every example."""
    return [
        (ex.name, obj["kind"], obj["metadata"]["name"])
        for ex in sorted(p for p in EXAMPLES.iterdir() if (p / "render").is_dir())
        for obj in example_objects(ex)
        if obj["kind"] in ("ModelDeployment", "ModelReplica")
    ]


def _file_of(ex: str, kind: str, name: str) -> Path:
    for path in sorted((EXAMPLES / ex).glob("*.yaml")):
        for doc in yaml.safe_load_all(path.read_text()):
            if doc and doc.get("kind") == kind and doc["metadata"]["name"] == name:
                return path
    raise AssertionError(f"{kind} {name} not in examples/{ex}")


def workloads(functions_file: Path, tmp_path: Path, ex: str, kind: str, name: str) -> list[Any]:
    """The Deployments and LeaderWorkerSets the example's XR ends up composing."""
    xr = single(tmp_path, _file_of(ex, kind, name), name)
    replicas = [xr]
    if kind == "ModelDeployment":
        docs = render(functions_file, xr, *required(ex, kind))
        replicas = []
        for doc in docs[1:]:
            if doc["kind"] == "ModelReplica":
                path = tmp_path / f"{doc['metadata']['name']}.yaml"
                path.write_text(yaml.safe_dump(doc))
                replicas.append(path)
    found = []
    for path in replicas:
        for doc in render(functions_file, path, *required(ex, "ModelReplica"))[1:]:
            if remote(doc).get("kind") in ("Deployment", "LeaderWorkerSet"):
                found.append(remote(doc))
    return found


def pod_templates(workload: dict[str, Any]) -> dict[str, dict[str, Any]]:
    if workload["kind"] == "Deployment":
        return {"single": workload["spec"]["template"]}
    template = workload["spec"]["leaderWorkerTemplate"]
    return {"leader": template["leaderTemplate"], "worker": template["workerTemplate"]}


@pytest.mark.parametrize(("ex", "kind", "name"), serving_xrs())
def test_no_serving_pod_of_an_example_runs_a_shell(
    functions_file: Path, tmp_path: Path, ex: str, kind: str, name: str
) -> None:
    composed = workloads(functions_file, tmp_path, ex, kind, name)
    assert composed, f"examples/{ex}: {kind} {name} composes no workload once settled"
    gang = any(w["kind"] == "LeaderWorkerSet" for w in composed)
    assert gang == (ex in GANGS), (ex, [w["kind"] for w in composed])
    for workload in composed:
        for role, pod in pod_templates(workload).items():
            spec = pod["spec"]
            for container in [*spec.get("initContainers", []), *spec["containers"]]:
                argv = [*container.get("command", []), *container.get("args", [])]
                hooks = (container.get("lifecycle") or {}).values()
                for run in [argv, *(h.get("exec", {}).get("command", []) for h in hooks)]:
                    assert run and run[0].rsplit("/", 1)[-1] not in SHELLS, (ex, role, run)
                    assert "-c" not in run[:2], (ex, role, run)
            engine = spec["containers"][0]
            assert engine["command"] == ["vllm", "serve"], (ex, role)  # every example is vLLM
            if workload["kind"] == "LeaderWorkerSet":
                args = engine["args"]
                assert "--nnodes=$(LWS_GROUP_SIZE)" in args, (ex, role)
                assert "--node-rank=$(LWS_WORKER_INDEX)" in args, (ex, role)
                assert "--master-addr=$(LWS_LEADER_ADDRESS)" in args, (ex, role)
                assert ("--headless" in args) == (role == "worker"), (ex, role)
                assert workload["spec"]["startupPolicy"] == "LeaderCreated"
