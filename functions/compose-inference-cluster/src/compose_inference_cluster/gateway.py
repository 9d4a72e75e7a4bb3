"""The Gateway a cluster declares (spec.gatewayRef), observed, never created: its status row
(`status.gateway`, which every ModelReplica there reads) and the condition GatewayReady.

The Gateway's address is reported only while it is observed Programmed with an address;
replicas route to it only then. A Gateway the cluster says does not exist is said so, with
its name, on the condition; the cluster's other work goes on."""

from typing import Any

from modelfleet_contracts.api import (
    CONTROL_PLANE_NAMESPACE,
    GATEWAY_API_VERSION,
    GATEWAY_KIND,
    INFERENCE_CLUSTER,
)
from modelfleet_contracts.conditions import Status
from modelfleet_contracts.labels import owner_labels
from modelfleet_contracts.models.inferencecluster import GatewayRef, InferenceExtension
from modelfleet_contracts.objects import OBSERVE_ONLY, kubernetes_object
from modelfleet_contracts.observed import ObservedObject
from modelfleet_contracts.provider_errors import remote_absent

GATEWAY = "gateway"
# The XRD's defaults, for an InferenceCluster read without them applied.
ENDPOINT_PICKER_PORT = 9002
FAIL_CLOSE = "FailClose"
CONDITION = "GatewayReady"


def gateway_object(
    cluster: str, provider_config_name: str, ref: GatewayRef, namespace: str
) -> dict[str, Any]:
    """An Observe-only Object reading the Gateway from the cluster (watched: its turning
    Programmed, or losing its address, is what routes wait on)."""
    manifest = {
        "apiVersion": GATEWAY_API_VERSION,
        "kind": GATEWAY_KIND,
        "metadata": {"name": ref.name, "namespace": namespace},
    }
    return kubernetes_object(
        manifest,
        provider_config_name,
        labels=owner_labels(INFERENCE_CLUSTER, cluster),
        management_policies=OBSERVE_ONLY,
        namespace=CONTROL_PLANE_NAMESPACE,
        watch=True,
    )


def gateway_status(
    ref: GatewayRef,
    namespace: str,
    observed: ObservedObject | None,
    extension: InferenceExtension | None = None,
) -> tuple[dict[str, Any], Status]:
    """(`status.gateway`, GatewayReady) from the observed Gateway (None: not observed yet).

    Where the cluster runs the Inference Extension (`extension` enabled), the row also says
    which endpoint picker the models' InferencePools name (`inferencePool`), whatever the
    Gateway's state: replicas compose their pools and routes as soon as they route at all."""
    where = f"Gateway {namespace}/{ref.name}"
    row: dict[str, Any] = {"name": ref.name, "namespace": namespace, "ready": False}
    if ref.sectionName:
        row["sectionName"] = ref.sectionName
    if extension is not None and extension.enabled:
        row["inferencePool"] = {
            "endpointPickerPort": extension.endpointPickerPort or ENDPOINT_PICKER_PORT,
            "failureMode": str(extension.failureMode or FAIL_CLOSE),
        }
    failing = observed.failure_message if observed is not None else ""
    if observed is None or not observed.remote_seen:
        if remote_absent(failing, ref.name):
            return row, Status.false(
                CONDITION,
                "GatewayNotFound",
                f"{where} not found on the cluster: create it, or fix spec.gatewayRef "
                f"({failing}); no model is routed through it meanwhile",
            )
        if failing:
            return row, Status.false(CONDITION, "Unavailable", f"cannot read {where}: {failing}")
        return row, Status.false(CONDITION, "Observing", f"reading {where} from the cluster")
    programmed = observed.remote_condition("Programmed")
    if programmed is None:
        return row, Status.false(CONDITION, "NotProgrammed", f"{where} is not Programmed yet")
    if not observed.remote_addresses:
        return row, Status.false(
            CONDITION, "NoAddress", f"{where} is Programmed but has no address"
        )
    row.update(ready=True, address=observed.remote_addresses[0])
    return row, Status.true(
        CONDITION, "Programmed", f"{where} is Programmed at {observed.remote_addresses[0]}"
    )
