"""The served model name on the engine: vLLM's own flag, and MODELFLEET_SERVED_MODEL_NAME for
every engine pod (a Custom command passes it to its flag as $(MODELFLEET_SERVED_MODEL_NAME))."""

import pytest
from modelfleet_devtools.validation import assert_valid, require_shared_schemas
from replica_world import model_cache, pod_templates, replica, run, workload

VLLM = {"framework": "vLLM", "image": "vllm/vllm-openai:v0.33.0", "port": 8000}
CUSTOM = {
    "framework": "Custom",
    "image": "lmsysorg/sglang:v0.5.2",
    "command": ["python3", "-m", "sglang.launch_server"],
    "args": ["--served-model-name=$(MODELFLEET_SERVED_MODEL_NAME)"],
}

# (case, nodes, engine, servedModelName, the serving pod's served-model-name args, env value)
CASES = [
    (
        "vLLM single node",
        1,
        VLLM,
        "Qwen/Qwen3-0.6B",
        ["--served-model-name=Qwen/Qwen3-0.6B"],
        "Qwen/Qwen3-0.6B",
    ),
    ("vLLM gang leader", 2, VLLM, "kimi-k2", ["--served-model-name=kimi-k2"], "kimi-k2"),
    (
        "the user's flag in engine.args is kept, not doubled",
        1,
        {**VLLM, "args": ["--served-model-name", "mine"]},
        "mine",
        ["--served-model-name"],
        "mine",
    ),
    ("no name: vLLM's own default", 1, VLLM, None, [], None),
    (
        "Custom: the user's args verbatim, the name in the environment",
        1,
        CUSTOM,
        "qwen3",
        ["--served-model-name=$(MODELFLEET_SERVED_MODEL_NAME)"],
        "qwen3",
    ),
]


@pytest.mark.parametrize(
    ("nodes", "engine", "name", "flags", "env"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_every_engine_gets_the_name(nodes, engine, name, flags, env):
    spec = {"engine": engine}
    if name is not None:
        spec["servedModelName"] = name
    manifest = workload(run(replica(nodes, **spec), cache=model_cache("Ready")))
    require_shared_schemas()
    assert_valid(manifest)
    for role, pod in pod_templates(manifest).items():
        container = pod["spec"]["containers"][0]
        values = {e["name"]: e.get("value") for e in container["env"]}
        assert values.get("MODELFLEET_SERVED_MODEL_NAME") == env, role
        if role == "worker":
            continue  # workers join the leader; only the serving pod takes the flag
        argv = container.get("args", [])
        assert [a for a in argv if a.startswith("--served-model-name")] == flags, role
