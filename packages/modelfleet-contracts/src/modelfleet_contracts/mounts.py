"""Where engine pods find the weights a ModelCache staged."""

import posixpath

MODEL_MOUNT_PATH = "/mnt/models"
CACHE_VOLUME_NAME = "model-cache"


def mounted_model_path(sub_path: str) -> str:
    """The in-pod path of weights staged under `sub_path` of the cache claim."""
    return posixpath.join(MODEL_MOUNT_PATH, sub_path.strip("/")) if sub_path else MODEL_MOUNT_PATH
