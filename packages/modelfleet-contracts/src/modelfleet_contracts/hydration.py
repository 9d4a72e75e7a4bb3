"""What compose-model-cache and the hydrator agree on: the image, its command, its env, and
the annotations on the hydration Job; and what compose-inference-cluster composes for the
hydrator once per workload namespace: the identity every hydration Job runs under.

The hydrator (packages/modelfleet-hydrator) writes the figures on its own Job;
compose-model-cache reads them back from the observed Job and writes PINNED_REVISION, which
the hydrator reads; `modelfleet simulate`'s Job writes them as the hydrator would. The
hydrator's image holds this module beside its own code and nothing else of this package, so
it imports the standard library only.
"""

# The version this tree is released as: the tag of every image and package
# `modelfleet-release` builds from it.
RELEASE_VERSION = "v0.2.0"
# The image a hydration Job runs unless spec.hydration.image names another: the hydrator
# `modelfleet-release` builds from packages/modelfleet-hydrator/ and publishes with this release.
DEFAULT_IMAGE = f"ghcr.io/modelfleet/model-hydrator:{RELEASE_VERSION}"
# The Job's command starts with these: the image's interpreter and where it holds the script.
# Changing either changes every composed Job's command (a new Job on upgrade).
PYTHON_IN_IMAGE = "python3"
SCRIPT_PATH_IN_IMAGE = "/opt/modelfleet/hydrate.py"

# The env the function fills from the user's Secret and the hydrator reads.
HF_TOKEN_ENV = "HF_TOKEN"
DOCKER_CONFIG_ENV = "DOCKER_CONFIG_JSON"  # a registry's dockerconfigjson, for OCI

PREFIX = "hydration.modelfleet.io/"
BYTES_DONE = PREFIX + "bytes-done"
BYTES_TOTAL = PREFIX + "bytes-total"
FILES_DONE = PREFIX + "files-done"
FILES_TOTAL = PREFIX + "files-total"
REVISION = PREFIX + "revision"  # the commit the Job resolved the revision to, and fetches
PINNED_REVISION = PREFIX + "pinned-revision"  # the commit the cache pinned (set by the function)

# The hydrator's access, composed once per workload namespace by compose-inference-cluster and
# reported in the InferenceCluster's `status.hydratorServiceAccount` once observed: a
# ServiceAccount, a Role allowing `get` and `patch` on the Jobs of that namespace (where a
# Job reports its progress on itself) and the RoleBinding. Every hydration Job runs under the
# ServiceAccount, so no Job needs access objects of its own.
HYDRATOR_SERVICE_ACCOUNT = "modelfleet-hydrator"
HYDRATOR_ROLE = "modelfleet-hydrator"
HYDRATOR_ROLE_BINDING = "modelfleet-hydrator"
