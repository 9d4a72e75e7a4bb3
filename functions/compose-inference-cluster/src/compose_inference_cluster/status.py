"""The InferenceCluster's conditions: Connected, StorageReady and LeaderWorkerSetReady."""

# False reasons that mean "under way" (Normal event), not "something is wrong" (Warning).
PROGRESS_REASONS = frozenset({"Creating", "Installing", "Resolving"})
