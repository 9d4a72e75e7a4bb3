"""The InferenceCluster's conditions: Connected, StorageReady and LeaderWorkerSetReady."""

# False reasons that mean "under way" (Normal event), not "something is wrong" (Warning).
# (`Resolving`, waiting for Crossplane, is one in every function: edge.outcome adds it.)
PROGRESS_REASONS = frozenset({"Creating", "Installing"})
