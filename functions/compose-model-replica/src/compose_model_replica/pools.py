"""The model's InferencePool (opt-in: the cluster runs the Gateway API Inference Extension):
the serving pods the Service selects, on the port they serve HTTP on, with the endpoint picker
the cluster names. The model's HTTPRoute then sends to the pool instead of the Service."""

from typing import Any

from modelfleet_contracts.api import INFERENCE_API_VERSION, INFERENCE_POOL_KIND
from modelfleet_contracts.clusters import EndpointPicker, endpoint_picker_service


def inference_pool_manifest(
    *,
    name: str,
    namespace: str,
    labels: dict[str, str],
    selector: dict[str, str],
    port: int,
    picker: EndpointPicker,
) -> dict[str, Any]:
    """An InferencePool over the pods `selector` matches (the Service's selector: only the
    pods that serve), with its endpoint picker the Service `<name>-epp` in the same
    namespace, which the user runs."""
    return {
        "apiVersion": INFERENCE_API_VERSION,
        "kind": INFERENCE_POOL_KIND,
        "metadata": {"name": name, "namespace": namespace, "labels": dict(labels)},
        "spec": {
            "selector": {"matchLabels": dict(selector)},
            "targetPorts": [{"number": port}],
            "endpointPickerRef": {
                # group and kind spelled out, as the API server defaults them.
                "group": "",
                "kind": "Service",
                "name": endpoint_picker_service(name),
                "port": {"number": picker.port},
                "failureMode": picker.failure_mode,
            },
        },
    }
