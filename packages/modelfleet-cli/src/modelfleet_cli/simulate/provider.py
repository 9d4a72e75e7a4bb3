"""Simulated provider-kubernetes (Objects) and provider-helm (Releases).

Like the real providers, they act on managed resources stored on the control plane: apply
the Object's manifest to the workload cluster its provider config reaches, honour
managementPolicies, resolve `references[].patchesFrom` from control-plane Secrets, echo the
remote object in `status.atProvider.manifest` (a Secret's data redacted, as with
`--sanitize-secrets`, unless `sanitize_secrets` is off), and set Synced and Ready (Ready from the
`DeriveFromCelQuery` readiness query when there is one).
"""

import copy
import re
from collections.abc import Callable
from typing import Any

from modelfleet_contracts.api import (
    LWS_API_VERSION,
    OBJECT_API_VERSION,
    OBJECT_KIND,
    RELEASE_API_VERSION,
    RELEASE_KIND,
)
from modelfleet_contracts.conditions import Status, condition_in, condition_true
from modelfleet_contracts.fields import list_at, mapping_at, mapping_path
from modelfleet_contracts.observed import REDACTED_SECRET_DATA

from modelfleet_cli.simulate.readiness import ReadinessError, evaluate
from modelfleet_cli.simulate.workload import ApplyError, WorkloadCluster

SecretLookup = Callable[[str, str], dict[str, Any] | None]
"""(namespace, name) -> the control-plane Secret, or None."""

LWS_GROUP = LWS_API_VERSION.split("/")[0]


def is_managed(obj: dict[str, Any]) -> bool:
    """Whether a provider of this simulation reconciles `obj`."""
    kind, api_version = obj.get("kind"), obj.get("apiVersion")
    return (api_version, kind) in {
        (OBJECT_API_VERSION, OBJECT_KIND),
        (RELEASE_API_VERSION, RELEASE_KIND),
    }


def _policies(obj: dict[str, Any]) -> set[str]:
    return {str(p) for p in list_at(mapping_at(obj, "spec"), "managementPolicies")} or {"*"}


def _may(policies: set[str], action: str) -> bool:
    return "*" in policies or action in policies


def _only_observes(policies: set[str]) -> bool:
    """crossplane-runtime's `ShouldOnlyObserve`: Observe is the one policy. Only then is a
    remote object that does not exist an error (`cannot observe external resource`); with
    Observe and Delete it is a successful reconcile that changes nothing (no Create)."""
    return policies == {"Observe"}


_SEGMENT = re.compile(r"([^.\[\]]+)|\[([^\]]*)\]")


def _segments(path: str) -> list[str]:
    """A Crossplane field path's keys: `data.HF_TOKEN`, or `data[.dockerconfigjson]` for a key
    holding a dot (in brackets)."""
    return [dotted or bracketed for dotted, bracketed in _SEGMENT.findall(path)]


def _set_path(target: dict[str, Any], path: str, value: Any) -> None:
    parts = _segments(path)
    for part in parts[:-1]:
        target = target.setdefault(part, {})
    target[parts[-1]] = value


def _get_path(source: dict[str, Any], path: str) -> Any:
    value: Any = source
    for part in _segments(path):
        if not isinstance(value, dict) or part not in value:
            return None
        value = value[part]
    return value


def _echo(remote: dict[str, Any], sanitize_secrets: bool) -> dict[str, Any]:
    """What the provider copies into `status.atProvider.manifest`: the remote object, with a
    v1 Secret's `data` replaced by the redaction marker when it runs with `--sanitize-secrets`
    (the whole field, as its `setAtProvider` does; without the flag the values are copied)."""
    echo = copy.deepcopy(remote)
    if sanitize_secrets and echo.get("apiVersion") == "v1" and echo.get("kind") == "Secret":
        echo["data"] = dict(REDACTED_SECRET_DATA)
    return echo


class Providers:
    """provider-kubernetes and provider-helm for every simulated workload cluster."""

    def __init__(
        self,
        clusters: dict[str, WorkloadCluster],
        provider_configs: Callable[[str], str | None],
        secrets: SecretLookup,
    ) -> None:
        """`provider_configs`: a provider config name -> the name of the workload cluster it
        reaches, or None when no such ClusterProviderConfig exists on the control plane."""
        self.clusters = clusters
        self._provider_configs = provider_configs
        self._secrets = secrets
        self.unreachable: set[str] = set()  # clusters the providers cannot reach right now
        # provider-kubernetes' --sanitize-secrets, on as the install docs run it; off shows
        # what compose-model-cache reports when the credentials are echoed.
        self.sanitize_secrets = True

    def _cluster(self, obj: dict[str, Any]) -> WorkloadCluster:
        name = str(mapping_path(obj, "spec", "providerConfigRef").get("name") or "")
        target = self._provider_configs(name)
        if target is None or target not in self.clusters:
            raise ApplyError(f'cannot get ClusterProviderConfig "{name}": not found')
        if target in self.unreachable:
            raise ApplyError(f"cannot reach cluster {target}: connection refused (simulated)")
        return self.clusters[target]

    # --- reconcile: create/update ----------------------------------------------------------

    def sync(self, obj: dict[str, Any]) -> None:
        """Create or update the remote side of a managed resource and record the outcome."""
        if obj.get("kind") == RELEASE_KIND:
            self._sync_release(obj)
            return
        existing = None
        try:
            cluster = self._cluster(obj)
            manifest = self._with_references(obj)
            policies = _policies(obj)
            existing = cluster.get(manifest)
            if existing is None and not _may(policies, "Create"):
                if not _only_observes(policies):
                    self._absent(obj)
                    return
                kind = manifest.get("kind", "object")
                name = mapping_at(manifest, "metadata").get("name", "")
                raise ApplyError(f'cannot get object: {kind} "{name}" not found')
            remote = existing
            if existing is None or _may(policies, "Update"):
                remote = cluster.apply(manifest)
        except ApplyError as exc:
            if existing is not None:
                # The provider observes before it updates: a refused update still echoes
                # the remote object as it is, and readiness follows it.
                self._observed(obj, existing)
            self._failed(obj, str(exc))
            return
        assert remote is not None
        self._observed(obj, remote)

    def _with_references(self, obj: dict[str, Any]) -> dict[str, Any]:
        manifest = copy.deepcopy(mapping_path(obj, "spec", "forProvider", "manifest"))
        default_ns = str(mapping_at(obj, "metadata").get("namespace") or "")
        for ref in list_at(mapping_at(obj, "spec"), "references"):
            source = mapping_at(ref, "patchesFrom")
            if not source:
                continue
            if source.get("kind") != "Secret":
                raise ApplyError(
                    f"cannot resolve references: unsupported kind {source.get('kind')}"
                )
            namespace = str(source.get("namespace") or default_ns)
            name = str(source.get("name") or "")
            secret = self._secrets(namespace, name)
            if secret is None:
                # provider-kubernetes' words (modelfleet_contracts.provider_errors).
                raise ApplyError(
                    "observe failed: cannot resolve resource references: "
                    f'cannot get referenced resource: secrets "{name}" not found'
                )
            value = _get_path(secret, str(source.get("fieldPath") or ""))
            if value is None:
                raise ApplyError(
                    f"cannot resolve references: {source.get('fieldPath')} not found in "
                    f'Secret "{name}" in namespace "{namespace}"'
                )
            _set_path(manifest, str(ref.get("toFieldPath") or source.get("fieldPath")), value)
        return manifest

    def _failed(self, obj: dict[str, Any], message: str) -> None:
        status = obj.setdefault("status", {})
        ready = condition_in(status, "Ready") or Status.false("Ready", "Creating").as_condition()
        status["conditions"] = [
            Status.false("Synced", "ReconcileError", message).as_condition(),
            ready,
        ]

    def _absent(self, obj: dict[str, Any]) -> None:
        """An Object that may not create found nothing (a finished Job its TTL removed, seen
        by an Observe-and-Delete Object): provider-kubernetes' Observe returns "does not
        exist" without touching `status.atProvider`, and the managed reconciler, which may
        neither create nor update, reports success. The last echo and Ready stay."""
        status = obj.setdefault("status", {})
        ready = condition_in(status, "Ready") or Status.false("Ready", "Creating").as_condition()
        status["conditions"] = [Status.true("Synced", "ReconcileSuccess").as_condition(), ready]

    def _observed(self, obj: dict[str, Any], remote: dict[str, Any]) -> None:
        status = obj.setdefault("status", {})
        status["atProvider"] = {"manifest": _echo(remote, self.sanitize_secrets)}
        readiness = mapping_at(mapping_at(obj, "spec"), "readiness")
        synced = Status.true("Synced", "ReconcileSuccess").as_condition()
        if readiness.get("policy") == "DeriveFromCelQuery":
            try:
                ready = evaluate(str(readiness.get("celQuery") or "false"), remote)
            except ReadinessError as exc:
                unavailable = Status.false("Ready", "Unavailable", str(exc))
                status["conditions"] = [synced, unavailable.as_condition()]
                return
        else:
            ready = True  # SuccessfulCreate: the object exists
        status["conditions"] = [
            synced,
            Status(
                "Ready", status=ready, reason="Available" if ready else "Unavailable"
            ).as_condition(),
        ]

    def _sync_release(self, obj: dict[str, Any]) -> None:
        try:
            cluster = self._cluster(obj)
        except ApplyError as exc:
            self._failed(obj, str(exc))
            return
        chart = mapping_path(obj, "spec", "forProvider", "chart")
        if chart.get("name") == "lws":
            cluster.install_crd(LWS_GROUP)
        status = obj.setdefault("status", {})
        status["atProvider"] = {"state": "deployed", "revision": 1}
        status["conditions"] = [
            Status.true("Synced", "ReconcileSuccess").as_condition(),
            Status.true("Ready", "Available").as_condition(),
        ]

    # --- observe: refresh after the cluster moved ------------------------------------------

    def observe(self, obj: dict[str, Any]) -> None:
        """Refresh `status.atProvider` and readiness from the remote object as it is now."""
        if obj.get("kind") != OBJECT_KIND:
            return
        if not condition_true(mapping_at(obj, "status"), "Synced"):
            return  # the next sync retries and reports
        try:
            cluster = self._cluster(obj)
        except ApplyError as exc:
            self._failed(obj, str(exc))
            return
        remote = cluster.get(mapping_path(obj, "spec", "forProvider", "manifest"))
        if remote is None:
            policies = _policies(obj)
            if not _may(policies, "Create") and not _only_observes(policies):
                self._absent(obj)
                return
            # One that may create does so at its next sync (a TTL-removed Job comes back).
            kind = mapping_path(obj, "spec", "forProvider", "manifest").get("kind", "object")
            self._failed(obj, f"cannot get object: {kind} not found")
            return
        self._observed(obj, remote)

    # --- delete ----------------------------------------------------------------------------

    def delete(self, obj: dict[str, Any], reason: str) -> str:
        """Delete the remote side as the management policies allow; what happened, in words."""
        if obj.get("kind") == RELEASE_KIND:
            return "release uninstalled (CRDs are kept, as Helm does)"
        manifest = mapping_path(obj, "spec", "forProvider", "manifest")
        what = f"{manifest.get('kind')} {mapping_at(manifest, 'metadata').get('name')}"
        if not _may(_policies(obj), "Delete"):
            return f"{what} left on the cluster (no Delete management policy)"
        try:
            cluster = self._cluster(obj)
        except ApplyError as exc:
            return f"{what} orphaned: {exc}"
        cluster.delete(manifest, reason=reason)
        return f"{what} deleted"
