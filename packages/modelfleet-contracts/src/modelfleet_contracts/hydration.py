"""What compose-model-cache and the hydrator agree on: the image, its command, its env, and
the annotations on the hydration Job.

The hydrator (packages/modelfleet-hydrator) writes the figures on its own Job;
compose-model-cache reads them back from the observed Job and writes PINNED_REVISION, which
the hydrator reads; `modelfleet simulate`'s Job writes them as the hydrator would. The
hydrator's image holds this module beside its own code and nothing else of this package, so
it imports the standard library only.
"""

# The image a hydration Job runs unless spec.hydration.image names another; built from
# packages/modelfleet-hydrator/image/.
DEFAULT_IMAGE = "ghcr.io/modelfleet/model-hydrator:0.1.0"
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
