"""What the Kubernetes API server refuses to change on an object that already exists.

An update that changes one of these is rejected (`field is immutable`), so whatever composes
such an object must keep them as the existing object has them; only a new object (a new
name) takes new values. `modelfleet simulate`'s API server refuses the same changes.
"""

# A batch/v1 Job's spec fields fixed at creation, as the API server's update validation
# (`ValidateJobSpecUpdate`) checks them: the pod template (all of it, for a Job that is not
# suspended), completions (but for elastic indexed Jobs), and the policies below.
JOB_SPEC_IMMUTABLE = (
    "template",
    "completions",
    "completionMode",
    "podFailurePolicy",
    "backoffLimitPerIndex",
    "successPolicy",
    "managedBy",
)
# `spec.selector` is fixed too, but the server generates it from the Job's uid (unless
# `manualSelector`), along with these labels on the pod template. A manifest must leave them
# out: copied from one Job, they would make a later Job of the same name (same name, new
# uid) invalid (`must be '<uid>'`); left out, the server keeps its own on the existing Job.
JOB_SELECTOR = "selector"
JOB_GENERATED_TEMPLATE_LABELS = frozenset(
    {
        "controller-uid",
        "batch.kubernetes.io/controller-uid",
        "job-name",
        "batch.kubernetes.io/job-name",
    }
)

# A PersistentVolumeClaim's spec is fixed at creation but its requested resources (and
# volumeAttributesClassName); of it, these are what a claim's manifest may set. (`volumeName`
# is fixed too once set, by the binder, which a manifest leaves to it.)
CLAIM_SPEC_IMMUTABLE = (
    "accessModes",
    "storageClassName",
    "volumeMode",
    "selector",
    "dataSource",
    "dataSourceRef",
)
