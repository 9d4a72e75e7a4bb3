"""Errors as provider-kubernetes (and provider-helm) put them on an Object's Synced=False
condition: crossplane-runtime's managed reconciler prefixes the provider's error with the step
that failed (see modelfleet_contracts.provider_errors). Tests build observed Objects with
these, so that the functions read the providers' real words."""

OBSERVE_ONLY_ABSENT = "observe failed: external resource does not exist"
UNAUTHORIZED = "observe failed: cannot get object: Unauthorized"


def provider_config_gone(name: str = "gke-us", provider: str = "kubernetes") -> str:
    """The Object's ClusterProviderConfig does not exist (yet)."""
    if provider == "helm":
        return (
            "connect failed: cannot get ProviderConfig: "
            f'clusterproviderconfigs.helm.m.crossplane.io "{name}" not found'
        )
    return (
        "connect failed: cannot get provider config: "
        f'clusterproviderconfigs.kubernetes.m.crossplane.io "{name}" not found'
    )


def kubeconfig_secret_gone(secret: str = "gke-us-kubeconfig") -> str:
    """The kubeconfig Secret the provider config reads does not exist."""
    return (
        "connect failed: cannot build kube client for provider config: cannot get credentials: "
        f'secrets "{secret}" not found'
    )


def referenced_secret_gone(secret: str) -> str:
    """A Secret the Object copies from (`spec.references[].patchesFrom`) does not exist."""
    return (
        "observe failed: cannot resolve resource references: cannot get referenced resource: "
        f'secrets "{secret}" not found'
    )


def connection_refused(api_path: str) -> str:
    """The cluster's API server at 10.0.0.1 refused the provider's Get of `api_path`."""
    return (
        f'observe failed: cannot get object: Get "https://10.0.0.1:443{api_path}": '
        "dial tcp 10.0.0.1:443: connect: connection refused"
    )
