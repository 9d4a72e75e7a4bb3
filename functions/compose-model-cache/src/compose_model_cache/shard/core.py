"""What a ModelCacheShard composes and reports on its clusters, from plain data.

Input: the shard's plan (plan.py), its clusters' InferenceClusters as Crossplane resolved
them, as `ClusterView`s, the facts observed of the composed resources (`ObservedObject`), and
the claims and Jobs that exist as provider-kubernetes echoes them (what they keep:
existing.py, and a claim's larger size: claim_size.py). Output: desired resources, the
observed ones kept unchanged, the rows (rows.py), conditions and readiness. A cluster the
plan lists keeps everything composed for it whatever its InferenceCluster's status does for
a moment; only a cluster no longer listed (or no longer existing) loses its objects.
"""

from typing import Any

from modelfleet_contracts.clusters import ClusterView
from modelfleet_contracts.conditions import Status
from modelfleet_contracts.fields import mapping_at, mapping_path
from modelfleet_contracts.models.modelcache import Source
from modelfleet_contracts.naming import composed_key
from modelfleet_contracts.observed import ObservedObject
from modelfleet_contracts.outcome import Outcome
from modelfleet_contracts.spec import InvalidSpec

from compose_model_cache.fingerprint import source_fingerprint
from compose_model_cache.keys import (
    current_job_keys,
    hydration_keys,
    resource_keys,
)
from compose_model_cache.rows import (
    HYDRATING,
    PENDING,
    READY,
    ClusterPhase,
    cache_status,
    staging_under_way,
)
from compose_model_cache.shard.claim_size import (
    KeptSize,
    claims_sized_condition,
    kept_size,
    with_request,
)
from compose_model_cache.shard.credentials import credentials_condition
from compose_model_cache.shard.existing import Existing, existing_object, keeping_fixed_fields
from compose_model_cache.shard.hydration_job import OnCluster, compose_job
from compose_model_cache.shard.manifests import CacheRef, cluster_values
from compose_model_cache.shard.phases import Observed, derive_cluster_phase
from compose_model_cache.shard.plan import ShardPlan, read_plan
from compose_model_cache.shard.progress import (
    JobReport,
    carried,
    figures,
    hydrating_message,
    read_report,
)
from compose_model_cache.shard.revision import Pin, choose_pin, revision_check
from compose_model_cache.staging import why_cannot_stage
from compose_model_cache.status import CLAIMS_SIZED, CREDENTIALS_REDACTED, cache_conditions


def compose_shard(
    shard: dict[str, Any],
    clusters: list[ClusterView] | None,
    observed: dict[str, ObservedObject],
    echoes: dict[str, dict[str, Any]] | None = None,
    asks: dict[str, str] | None = None,
) -> Outcome:
    """What the shard composes and reports. `clusters`: the InferenceClusters it lists as
    Crossplane resolved them (None: not yet); one that no longer exists is not among them,
    and loses its objects."""
    if clusters is None:
        return Outcome.resolving(shard, "ArtifactReady", "the InferenceClusters this shard lists")
    plan = read_plan(shard)
    if isinstance(plan, InvalidSpec):
        return Outcome.held(Status.false("ArtifactReady", "InvalidSpec", plan.message))
    listed = set(plan.clusters)
    views = sorted((v for v in clusters if v.name in listed), key=lambda v: v.name)
    return compose_plan(plan, views, observed, echoes, asks)


def compose_plan(
    plan: ShardPlan,
    clusters: list[ClusterView],
    observed: dict[str, ObservedObject],
    echoes: dict[str, dict[str, Any]] | None = None,
    asks: dict[str, str] | None = None,
) -> Outcome:
    """`clusters`: the plan's clusters that exist, sorted by name. `echoes`: each observed
    claim and hydration Job as provider-kubernetes echoes it (its kind, name, annotations
    and spec, from `status.atProvider.manifest`), by resource name. `asks`: the remote name
    each of those Objects' own manifest asks for (what provider-kubernetes deletes when the
    Object goes), by resource name."""
    echoes = echoes or {}
    asks = asks or {}
    # What each Job reported on itself, and what exists that cannot change (existing.py).
    reports = {
        key: read_report(_name(echoed), mapping_path(echoed, "metadata", "annotations"))
        for key, echoed in echoes.items()
    }
    existing = {key: found for key, echoed in echoes.items() if (found := existing_object(echoed))}
    spec, name, namespace = plan.spec, plan.cache_name, plan.namespace
    fingerprint = source_fingerprint(spec)
    previous = plan.previous
    matched = [v for v in clusters if v.name]
    ref = CacheRef(name, namespace, spec, fingerprint)
    job_name = ref.job_name
    hydration = hydration_keys(observed)
    here = {v.name: _on_cluster(v, ref, observed, echoes, asks, hydration) for v in matched}
    pin = choose_pin(
        plan.pin,
        fingerprint,
        [(v.name, reports.get(here[v.name].job_keys[0])) for v in matched],
        job_name,
        pinnable=spec.source != Source.S3,
    )
    cache = CacheRef(name, namespace, spec, fingerprint, pin.commit if pin else "")

    outcome = Outcome()
    rows: list[dict[str, Any]] = []
    phases: list[ClusterPhase] = []
    sizes: list[KeptSize] = []  # claims that keep a request other than sizeGiB
    for view in matched:
        before = previous.get(view.name)
        if before and before.get("fingerprint") != fingerprint:
            before = {"phase": before.get("phase")}  # another source's figures: not ours
        claim_key, job_key = resource_keys(view.name, fingerprint)[0], here[view.name].job_keys[0]
        report = reports.get(job_key)
        if report and report.job != job_name:
            report = None  # not this source's Job: never its figures
        phase = _compose_cluster(
            cache,
            here[view.name],
            before,
            observed,
            outcome,
            pin,
            existing,
            handed=view.name in plan.handed,
        )
        phase, row_figures = _figures(phase, report, before, pin)
        size = kept_size(existing.get(claim_key), cache, view.name)
        if size:
            sizes.append(size)
            if claim_key in outcome.desired:  # not when kept as observed (blocked)
                outcome.desired[claim_key] = with_request(outcome.desired[claim_key], size.request)
        phases.append(phase)
        row = {
            "name": view.name,
            "phase": phase.phase,
            "claimName": cache.claim_name,
            "path": cache.path,
            "fingerprint": cache.fingerprint,
            **row_figures,
        }
        note = size.note(spec.sizeGiB or 0) if size else ""
        message = "; ".join(m for m in (phase.message, note) if m)
        if phase.problem:
            row["reason"] = phase.problem
        if message:
            row["message"] = message
        rows.append(row)

    outcome.status = cache_status(rows, pin.as_status() if pin else None)
    outcome.conditions = cache_conditions(matched, phases)
    exposed = {
        view.name: facts.exposed_secret_fields
        for view in matched
        if (facts := observed.get(resource_keys(view.name, fingerprint)[1]))
        and facts.exposed_secret_fields
    }
    credentials = credentials_condition(
        exposed, cache.secret_name, plan.previous_condition(CREDENTIALS_REDACTED)
    )
    if credentials:
        outcome.conditions.append(credentials)
    sized = claims_sized_condition(sizes, spec.sizeGiB, plan.previous_condition(CLAIMS_SIZED))
    if sized:
        outcome.conditions.append(sized)
    outcome.ready = bool(matched) and all(p.phase == READY for p in phases)
    # What only an InferenceCluster can change (none matched yet, one not able to stage yet,
    # one whose hydrator account is not there yet: _compose_job): Crossplane does not watch
    # InferenceClusters, so ask to look again soon.
    byo_claim = bool(spec.storage and spec.storage.existingClaimName)
    # And while a download is under way (rows.staging_under_way).
    outcome.recheck_soon = (
        outcome.recheck_soon
        or not matched
        or any(why_cannot_stage(v, byo_claim) for v in matched)
        or staging_under_way(phases)
    )
    return outcome


def _on_cluster(
    view: ClusterView,
    cache: CacheRef,
    observed: dict[str, ObservedObject],
    echoes: dict[str, dict[str, Any]],
    asks: dict[str, str],
    hydration: dict[str, list[str]],
) -> OnCluster:
    job_keys = current_job_keys(view.name, cache.fingerprint, cache.job_name, observed, asks)
    echoed_job = _name(echoes.get(job_keys[0], {}))
    return OnCluster(
        view,
        why_cannot_stage(view, bool(cache.existing_claim)),
        job_keys,
        observed.get(job_keys[0]) if echoed_job in ("", cache.job_name) else None,
        hydration.get(composed_key(view.name), []),
    )


def _name(echoed: dict[str, Any]) -> str:
    name = mapping_at(echoed, "metadata").get("name")
    return name if isinstance(name, str) else ""


def _figures(
    phase: ClusterPhase,
    report: JobReport | None,
    previous_row: dict[str, Any] | None,
    pin: Pin | None,
) -> tuple[ClusterPhase, dict[str, Any]]:
    """The row's progress figures and commit, and the phase once the commit is checked
    against the pin."""
    if report and report.bytes_total is not None:
        done = report.bytes_total if phase.phase == READY else report.bytes_done
        row = figures(done, report.bytes_total)
        if report.revision:
            row["resolvedRevision"] = report.revision
    elif phase.phase == READY:
        row = carried(previous_row)  # the Job is gone; its last figures stay
    else:
        row = {}
    if report and report.revision and "resolvedRevision" not in row:
        row["resolvedRevision"] = report.revision
    if phase.phase == HYDRATING and "progress" in row:
        text = hydrating_message(row["progress"], report, phase.message)
        phase = ClusterPhase(phase.phase, text, phase.problem)
    return revision_check(phase, row.get("resolvedRevision", ""), pin), row


def _compose_cluster(
    cache: CacheRef,
    here: OnCluster,
    previous_row: dict[str, Any] | None,
    observed: dict[str, ObservedObject],
    outcome: Outcome,
    pin: Pin | None = None,
    existing: dict[str, Existing] | None = None,
    *,
    handed: bool = False,
) -> ClusterPhase:
    """Compose what `here` needs into `outcome` (desired or kept as observed); its phase.
    `handed`: the ModelCache still hands what was staged there (plan.py): it is on the
    cluster under the ModelCache's old Objects, whatever this shard observes of its own."""
    desired, view = outcome.desired, here.view
    claim_key, secret_key, _ = resource_keys(view.name, cache.fingerprint)
    if here.blocked:
        # A status that flaps must not cost the weights: keep what is there, say why. Jobs
        # of an older source too: their deletion waits until the cluster can be reached.
        # What the ModelCache handed is there too (it keeps its old Objects of a cluster
        # that cannot stage), so its phase stays: a Ready row never lapses for the flap.
        kept = [k for k in (claim_key, secret_key) if k in observed] + here.hydration
        outcome.kept += kept
        if (kept or handed) and previous_row and previous_row.get("phase"):
            return ClusterPhase(
                str(previous_row["phase"]), f"{here.blocked}; keeping what is staged there"
            )
        return ClusterPhase(PENDING, f"{here.blocked}; nothing staged there yet")

    staged = previous_row.get("resolvedRevision") if previous_row else None
    latched = bool(
        previous_row
        and previous_row.get("phase") == READY
        and previous_row.get("fingerprint") == cache.fingerprint
        # a cluster that staged another commit than the pinned one is never latched Ready
        and (not pin or not staged or staged == pin.commit)
    )
    values = cluster_values(view)
    existing = existing or {}
    desired[claim_key] = keeping_fixed_fields(
        cache.claim_shape.stamp(values), existing.get(claim_key)
    )
    if cache.secret_shape:
        desired[secret_key] = cache.secret_shape.stamp(values)
    ref = cache.secret_ref
    phase = derive_cluster_phase(
        Observed(observed.get(claim_key), observed.get(secret_key), here.job),
        claim_name=cache.claim_name,
        namespace=view.workload_namespace or "",
        cluster=view.name,
        byo_claim=bool(cache.existing_claim),
        latched_ready=latched,
        backoff_limit=cache.backoff_limit,
        secret_ref=ref.name if ref else None,
        cache_namespace=cache.namespace,
    )
    return compose_job(cache, here, phase, observed, outcome, values, existing)
