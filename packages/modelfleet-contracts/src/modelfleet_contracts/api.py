"""API groups, versions and kinds that Modelfleet reads or composes."""

GROUP = "modelfleet.io"
VERSION = "v1alpha1"
API_VERSION = f"{GROUP}/{VERSION}"

INFERENCE_CLUSTER = "InferenceCluster"
MODEL_CACHE = "ModelCache"
MODEL_CACHE_SHARD = "ModelCacheShard"
MODEL_DEPLOYMENT = "ModelDeployment"
MODEL_REPLICA = "ModelReplica"
MODEL_SERVICE = "ModelService"

# provider-kubernetes (namespaced, Crossplane v2 ".m." group).
OBJECT_API_VERSION = "kubernetes.m.crossplane.io/v1alpha1"
OBJECT_KIND = "Object"
PROVIDER_CONFIG_KIND = "ClusterProviderConfig"

# provider-helm (namespaced, Crossplane v2 ".m." group).
RELEASE_API_VERSION = "helm.m.crossplane.io/v1beta1"
RELEASE_KIND = "Release"

# Gateway API (standard channel), opted into per InferenceCluster (spec.gatewayRef).
GATEWAY_API_GROUP = "gateway.networking.k8s.io"
GATEWAY_API_VERSION = f"{GATEWAY_API_GROUP}/v1"
GATEWAY_KIND = "Gateway"
HTTP_ROUTE_KIND = "HTTPRoute"

# Gateway API Inference Extension, opted into per InferenceCluster (spec.inferenceExtension).
INFERENCE_API_GROUP = "inference.networking.k8s.io"
INFERENCE_API_VERSION = f"{INFERENCE_API_GROUP}/v1"
INFERENCE_POOL_KIND = "InferencePool"

LWS_API_VERSION = "leaderworkerset.x-k8s.io/v1"
LWS_KIND = "LeaderWorkerSet"

# provider-helm's own ClusterProviderConfig (same group as its Release).
HELM_PROVIDER_CONFIG_API_VERSION = "helm.m.crossplane.io/v1beta1"

# Where the composed resources of the cluster-scoped InferenceCluster live on the control
# plane: it has no namespace of its own, and this is where providers and the platform
# team's kubeconfig Secrets conventionally live.
CONTROL_PLANE_NAMESPACE = "crossplane-system"
