"""What a hydration container staged, read back from the claim's directory.

A cache's row that is Ready on a cluster names its claim and its copy (its path in the claim). When
the cache's source is a loopback one (sources.py), the copy is checked against the source:
exactly the files the source holds at the revision the marker records (for the Hub, those the
cache's include and exclude patterns select), byte for byte, and the completion marker naming
the fingerprint, the file count, the bytes and that revision; the revision being the one the
cache's revision (or tag) resolves to.
"""

from __future__ import annotations

import fnmatch
import json
from pathlib import Path
from typing import Any

from .pods import PodRunner
from .sources import LoopbackSources

Json = dict[str, Any]
MARKER = ".modelfleet-complete"  # modelfleet_hydrator.hydrate.MARKER


def wanted_files(
    cache: Json, sources: LoopbackSources, revision: str
) -> tuple[dict[str, bytes], str]:
    """The files the cache's source holds at `revision`, and the revision its spec resolves to
    ({}, "" when the source is not a loopback one)."""
    spec = cache.get("spec") or {}
    if spec.get("source") == "HuggingFace":
        hf = spec.get("huggingFace") or {}
        repo = sources.hub.repos.get(hf.get("repo", ""))
        if repo is None:
            return {}, ""
        include, exclude = hf.get("include") or ["*"], hf.get("exclude") or []
        files = {
            name: data
            for name, data in repo.commits.get(revision, {}).items()
            if any(fnmatch.fnmatch(name, p) for p in include)
            and not any(fnmatch.fnmatch(name, p) for p in exclude)
        }
        return files, repo.resolve(hf.get("revision") or "main") or ""
    if spec.get("source") == "OCI":
        pushed = sources.images.get((spec.get("oci") or {}).get("image", ""))
        if pushed is None:
            return {}, ""
        return pushed.files, pushed.image.digest
    if spec.get("source") == "S3":  # no revision: the prefix's objects as they are
        return sources.s3_files((spec.get("s3") or {}).get("uri", "")), ""
    return {}, ""


def copy_problems(copy: Path, files: dict[str, bytes], marker: Json, fingerprint: str) -> list[str]:
    problems = []
    found = {str(p.relative_to(copy)) for p in copy.rglob("*") if p.is_file() and p.name != MARKER}
    if found != set(files):
        problems.append(f"{copy} holds {sorted(found)}, the source {sorted(files)}")
    for name, data in files.items():
        path = copy / name
        if path.is_file() and path.read_bytes() != data:
            problems.append(f"{path} differs from the source's {name}")
    size = sum(len(d) for d in files.values())
    for key, want in (("fingerprint", fingerprint), ("files", len(files)), ("bytes", size)):
        if marker.get(key) != want:
            problems.append(f"{copy}/{MARKER}: {key} {marker.get(key)!r}, expected {want!r}")
    return problems


def check_staged(
    pods: PodRunner, sources: LoopbackSources, caches: list[Json]
) -> tuple[int, list[str]]:
    """Check every Ready row of `caches` (as read from the control plane) whose source is a
    loopback one; (the copies checked, what is wrong with them)."""
    checked, problems = 0, []
    for cache in caches:
        for row in (cache.get("status") or {}).get("clusters") or []:
            if row.get("phase") != "Ready" or not row.get("claimName"):
                continue
            claims = list((pods.work / "volumes" / row["name"]).glob(f"*/{row['claimName']}"))
            if not claims:
                continue  # not a claim a container wrote to (a simulated Job's)
            row_checked, row_problems = check_row(cache, row, claims[0], sources)
            checked += row_checked
            problems += row_problems
    return checked, problems


def check_row(
    cache: Json, row: Json, claim: Path, sources: LoopbackSources
) -> tuple[int, list[str]]:
    """Check the copy a Ready row names in the claim directory `claim`: (1 if its source is a
    loopback one, else 0; what is wrong with it)."""
    # The row's path: the fingerprint, under the cache's own folder in a shared claim.
    copy = claim / (row.get("path") or row["fingerprint"])
    try:
        marker = json.loads((copy / MARKER).read_text())
    except (OSError, ValueError) as error:
        return 0, [f"{row['name']}: no completion marker in {copy}: {error}"]
    files, resolved = wanted_files(cache, sources, str(marker.get("revision", "")))
    if not files:
        return 0, []
    problems = copy_problems(copy, files, marker, row["fingerprint"])
    if str(marker.get("revision") or "") != resolved:
        problems.append(
            f"{copy}: staged revision {marker.get('revision')!r}, the source's is {resolved!r}"
        )
    return 1, problems
