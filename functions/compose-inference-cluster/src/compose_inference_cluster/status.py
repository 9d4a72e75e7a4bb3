"""The InferenceCluster's conditions: Connected, StorageReady and LeaderWorkerSetReady."""

from compose_inference_cluster.core import CONNECTING

# False reasons that mean "under way" (Normal event), not "something is wrong" (Warning):
# waiting for what the function itself composed (its provider config, its Namespace, its
# StorageClass, the LWS release). A user-named provider config that does not exist
# (ProviderConfigNotFound), a class the cluster says is absent (StorageClassNotFound) and a
# provider error (Unavailable) are Warnings.
# (`Resolving`, waiting for Crossplane, is one in every function: edge.outcome adds it.)
PROGRESS_REASONS = frozenset({CONNECTING, "Creating", "Installing", "Observing"})
