"""The CSI driver each managed storage provisioner of an InferenceCluster names.

compose-inference-cluster writes it into the `modelfleet-rwx` StorageClass it composes; the
e2e harness's real nodes provision claims of that class in the driver's place. What each
driver needs installed on the workload cluster is documented in docs/inferencecluster.md.
"""

CSI_DRIVERS = {
    "GCPFilestore": "filestore.csi.storage.gke.io",
    "AWSEFS": "efs.csi.aws.com",
    "AzureFiles": "file.csi.azure.com",
    "NFS": "nfs.csi.k8s.io",
}
