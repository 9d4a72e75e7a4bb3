"""The real thing: a composed hydration Job's exact command, run against a loopback Hub
(hydrator_world.py)."""

import json
import subprocess
import time
from pathlib import Path

import pytest
from cache_world import desired_resources, keys, model_cache, reason, reconcile, rows
from compose_model_cache.fingerprint import source_fingerprint
from compose_model_cache.shard.hydration_command import hydration_argv
from hydrator_world import (
    CLUSTER,
    EXPECTED_MAIN,
    FILTERS,
    HUB_TIMEOUT,
    MAIN_FILES,
    MARKER,
    MIB,
    REPO_ID,
    RUN_TIMEOUT,
    V2_FILES,
    V3_FILES,
    composed_job,
    hub,
    hydrate,
    job_env,
    local_argv,
    model_files,
)
from modelfleet_contracts.models.modelcache import HuggingFace, ModelCacheSpec, Source
from modelfleet_contracts.mounts import MODEL_MOUNT_PATH

__all__ = ["hub"]  # the fixture, used by name


def test_the_weights_land_under_the_fingerprint_with_filters_honoured(hub, tmp_path):
    proc, staged = hydrate(hub, tmp_path, revision="main", **FILTERS)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert (staged / MARKER).is_file()
    assert model_files(staged) == EXPECTED_MAIN, "include/exclude honoured, nothing else left"
    assert sorted(p.name for p in staged.parent.iterdir()) == [staged.name]
    served = {name.removeprefix(f"{REPO_ID}/") for name in hub.bytes_served}
    assert served == set(EXPECTED_MAIN), "excluded files are never fetched"


def test_a_second_run_fetches_nothing(hub, tmp_path):
    first, staged = hydrate(hub, tmp_path, revision="main", **FILTERS)
    assert first.returncode == 0, first.stdout + first.stderr
    hub.reset_counts()
    second, again = hydrate(hub, tmp_path, revision="main", **FILTERS)
    assert second.returncode == 0, second.stdout + second.stderr
    assert again == staged
    assert hub.total_file_bytes == 0
    assert hub.requests == [], "with the marker present the Hub is not even asked"
    assert model_files(staged) == EXPECTED_MAIN


def test_a_connection_cut_mid_file_resumes_from_where_it_stopped(hub, tmp_path):
    shard = "model-00001-of-00002.safetensors"
    hub.faults.drop_after[shard] = 15 * MIB
    proc, staged = hydrate(hub, tmp_path, revision="main", **FILTERS)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert model_files(staged)[shard] == MAIN_FILES[shard]
    # The hydrator has huggingface_hub write each piece as it is read (hub_reads.py), so what
    # arrived before the cut is all kept and the retry asks for exactly the rest.
    ranges = [r for m, p, r in hub.requests if m == "GET" and p.endswith(shard) and r]
    assert ranges == [f"bytes={15 * MIB}-"], "the retry asks only for what is missing"
    assert hub.bytes_served[f"{REPO_ID}/{shard}"] == len(MAIN_FILES[shard]), "no byte twice"


SHARDS = ("model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors")


def test_two_files_cut_at_once_on_the_parallel_path_each_resume_at_their_own_byte(hub, tmp_path):
    # Cuts that fall inside one of the 1 MiB socket reads, not on a read's edge.
    cuts = {SHARDS[0]: 15 * MIB + 12345, SHARDS[1]: MIB + 3}
    hub.faults.drop_after.update(cuts)
    proc, staged = hydrate(hub, tmp_path, revision="main", **FILTERS)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert model_files(staged) == EXPECTED_MAIN, "every file whole and verified"
    for shard, cut in cuts.items():
        ranges = [r for m, p, r in hub.requests if m == "GET" and p.endswith(shard) and r]
        assert ranges == [f"bytes={cut}-"], f"{shard}: the retry asks only for what is missing"
    served = {name.removeprefix(f"{REPO_ID}/"): n for name, n in hub.bytes_served.items()}
    assert served == {name: len(data) for name, data in EXPECTED_MAIN.items()}, "no byte twice"


@pytest.mark.parametrize(
    "cut",
    [
        pytest.param(SHARDS[:1], id="one file cut, the others finished"),
        # huggingface_hub fetches files on several threads: both shards are cut mid-transfer.
        pytest.param(SHARDS, id="two files cut at once on the parallel path"),
    ],
)
def test_a_killed_run_resumes_and_refetches_only_the_unfinished_files(hub, tmp_path, cut):
    for shard in cut:
        hub.faults.stall_after[shard] = 512 * 1024
    command, env, fingerprint = composed_job(revision="main", **FILTERS)
    argv = local_argv(command, tmp_path / "claim")
    staging = tmp_path / "claim" / f".staging-{fingerprint}"
    # A file is finished once huggingface_hub has recorded it beside the weights: it moves the
    # file into place first and writes that record after, and a run killed between the two
    # rightly fetches the file again.
    records = staging / ".cache" / "huggingface" / "download"
    others = [records / f"{name}.metadata" for name in EXPECTED_MAIN if name not in cut]
    proc = subprocess.Popen(
        argv, env=job_env(env, hub, tmp_path), stdout=subprocess.PIPE, stderr=subprocess.STDOUT
    )
    try:
        # Well before the stalled connection could be resumed (HUB_TIMEOUT after the stall).
        deadline = time.monotonic() + HUB_TIMEOUT * 2 / 3
        while not (
            hub.stalled.is_set()
            and all(p.is_file() for p in others)
            and len(list(records.rglob("*.incomplete"))) == len(cut)
        ):
            assert proc.poll() is None, "the run ended before it could be cut off"
            assert time.monotonic() < deadline, "the download never reached the cut"
            time.sleep(0.05)
        proc.kill()  # the pod is evicted mid-file
    finally:
        proc.kill()
        proc.wait(timeout=10)
        hub.release.set()
    assert not (tmp_path / "claim" / fingerprint).exists(), "nothing half-done is served"
    assert list(staging.rglob("*.incomplete")), "the run really was cut off mid-file"
    for shard in cut:
        assert not (staging / shard).exists(), f"{shard}: a partial file under its own name"

    hub.reset_counts()
    proc2, staged = hydrate(hub, tmp_path, revision="main", **FILTERS)
    assert proc2.returncode == 0, proc2.stdout + proc2.stderr
    assert model_files(staged) == EXPECTED_MAIN
    assert dict(hub.bytes_served) == {f"{REPO_ID}/{s}": len(MAIN_FILES[s]) for s in cut}, (
        "finished files are kept; only the cut files are fetched again"
    )
    assert not list((tmp_path / "claim").rglob("*.incomplete")), "no partial file left behind"


def copies(cache_dir: Path) -> list[str]:
    """What is in the cache directory, by name (copies, staging, anything else)."""
    return sorted(p.name for p in cache_dir.iterdir())


def test_a_revision_change_keeps_the_copy_in_use_until_the_next_change(hub, tmp_path):
    """Old copies are pruned once no longer current, never the one in use (docs/modelcache.md,
    "Re-hydration on source change, and pruning"). Replicas roll from the previous copy to the
    new one after it is staged, so the previous complete copy stays until a further change
    supersedes it."""
    first, main = hydrate(hub, tmp_path, revision="main", **FILTERS)
    assert first.returncode == 0, first.stdout + first.stderr
    (main.parent / "team-notes").mkdir()  # not ours: never pruned

    # A -> B, the first attempt fails: the copy in use stays whole.
    hub.faults.forbid.add("generation_config.json")
    failed, v2 = hydrate(hub, tmp_path, revision="v2", **FILTERS)
    assert failed.returncode != 0
    assert v2 != main and not v2.exists()
    assert model_files(main) == EXPECTED_MAIN and (main / MARKER).is_file()

    # The retry completes: v2 is served, and main is kept for replicas still rolling off it.
    retried, v2 = hydrate(hub, tmp_path, revision="v2", **FILTERS)
    assert retried.returncode == 0, retried.stdout + retried.stderr
    assert model_files(v2)["generation_config.json"] == V2_FILES["generation_config.json"]
    assert (
        model_files(v2)["model-00001-of-00002.safetensors"]
        == V2_FILES["model-00001-of-00002.safetensors"]
    )
    assert model_files(main) == EXPECTED_MAIN and (main / MARKER).is_file()
    assert copies(main.parent) == sorted([main.name, v2.name, "team-notes"])

    # B -> C: main is two changes old and goes before v3 is staged (never three copies on
    # the claim); v2, the one in use, stays whole, even when the first attempt fails.
    hub.faults.forbid.add("generation_config.json")
    failed, v3 = hydrate(hub, tmp_path, revision="v3", **FILTERS)
    assert failed.returncode != 0 and not v3.exists()
    assert not main.exists() and (v2 / MARKER).is_file()
    assert copies(v2.parent) == sorted([v2.name, f".staging-{v3.name}", "team-notes"])
    third, v3 = hydrate(hub, tmp_path, revision="v3", **FILTERS)
    assert third.returncode == 0, third.stdout + third.stderr
    assert model_files(v3)["generation_config.json"] == V3_FILES["generation_config.json"]
    assert not main.exists()
    assert (v2 / MARKER).is_file() and model_files(v2)["generation_config.json"] == (
        V2_FILES["generation_config.json"]
    )
    assert copies(v3.parent) == sorted([v2.name, v3.name, "team-notes"])

    # C -> B, a rollback to the copy still there: nothing fetched, nothing pruned.
    served_before = sum(hub.bytes_served.values())
    back, again = hydrate(hub, tmp_path, revision="v2", **FILTERS)
    assert back.returncode == 0, back.stdout + back.stderr
    assert again == v2 and sum(hub.bytes_served.values()) == served_before
    assert copies(v3.parent) == sorted([v2.name, v3.name, "team-notes"])


def test_caches_sharing_a_claim_keep_to_their_own_sub_directory(hub, tmp_path):
    def run(name: str, revision: str) -> Path:
        xr = model_cache(
            name=name,
            huggingFace={"repo": REPO_ID, "revision": revision, **FILTERS},
            storage={"existingClaimName": "shared-models"},
        )
        del xr["spec"]["sizeGiB"]
        rsp = reconcile(xr, [CLUSTER])
        job = desired_resources(rsp)[keys("gke-us", xr)[2]]
        container = job["spec"]["forProvider"]["manifest"]["spec"]["template"]["spec"][
            "containers"
        ][0]
        env = {e["name"]: e["value"] for e in container["env"] if "value" in e}
        proc = subprocess.run(
            local_argv(container["command"], tmp_path / "claim"),
            env=job_env(env, hub, tmp_path),
            capture_output=True,
            text=True,
            timeout=RUN_TIMEOUT,
            check=False,
        )
        assert proc.returncode == 0, proc.stdout + proc.stderr
        return tmp_path / "claim" / rows(rsp)["gke-us"]["path"]

    qwen = run("qwen", "main")
    llama = run("llama", "v2")
    assert qwen.parent != llama.parent, "one sub-directory per cache"
    assert (qwen / MARKER).is_file() and (llama / MARKER).is_file(), "neither pruned the other"


@pytest.mark.parametrize(
    "repo",
    [
        "x;touch {canary}",
        "$(touch {canary})",
        "`touch {canary}`",
        "--help",
        "a/b && touch {canary}",
    ],
    ids=["semicolon", "command substitution", "backticks", "looks like a flag", "and-list"],
)
def test_a_hostile_repo_string_stays_inert(hub, tmp_path, repo):
    canary = tmp_path / "pwned"
    hostile = repo.format(canary=canary)

    # The function refuses to compose a Job for it.
    rsp = reconcile(model_cache(huggingFace={"repo": hostile}), [CLUSTER])
    assert reason(rsp, "ArtifactReady") == "InvalidSpec"
    assert desired_resources(rsp) == {}

    # Defence in depth: the Job command built for it carries it as one literal argv element,
    # and the script treats it as a (bad) repo name — no shell ever sees it. The schema
    # refuses the string, so the typed block is built without validation to get there.
    source = HuggingFace.model_construct(repo=hostile)
    fingerprint = source_fingerprint(
        ModelCacheSpec.model_construct(source=Source.HuggingFace, huggingFace=source)
    )
    command = hydration_argv(source, cache_dir=MODEL_MOUNT_PATH, fingerprint=fingerprint)
    assert command.count(f"--repo={hostile}") == 1
    proc = subprocess.run(
        local_argv(command, tmp_path / "claim"),
        env=job_env({}, hub, tmp_path),
        capture_output=True,
        text=True,
        timeout=RUN_TIMEOUT,
        check=False,
    )
    assert proc.returncode != 0
    assert repr(hostile) in proc.stdout, "the value is handled as a literal repo name"
    assert not canary.exists()
    assert not (tmp_path / "claim" / fingerprint).exists()
    assert hub.requests == [], "an invalid repo id never reaches the Hub"


def test_filters_that_match_nothing_fail_instead_of_staging_an_empty_model(hub, tmp_path):
    proc, staged = hydrate(hub, tmp_path, revision="main", include=["*.gguf"])
    assert proc.returncode != 0
    assert "no file matched" in proc.stdout
    assert not staged.exists(), "an empty directory is never marked complete"
    assert hub.total_file_bytes == 0


@pytest.mark.parametrize(
    ("name", "published"),
    [("model-00002-of-00002.safetensors", "sha256"), ("tokenizer.json", "git blob sha1")],
    ids=["LFS weights", "small git file"],
)
def test_a_corrupted_file_fails_the_attempt_by_name_and_the_retry_repairs_it(
    hub, tmp_path, name, published
):
    hub.faults.corrupt.add(name)
    failed, staged = hydrate(hub, tmp_path, revision="main", **FILTERS)
    assert failed.returncode != 0
    assert f"integrity check failed: {name}: {published}" in failed.stdout
    assert not staged.exists(), "nothing unverified is served"
    assert not list((tmp_path / "claim").rglob(MARKER)), "nothing is marked complete"

    hub.reset_counts()
    retried, staged = hydrate(hub, tmp_path, revision="main", **FILTERS)
    assert retried.returncode == 0, retried.stdout + retried.stderr
    assert model_files(staged) == EXPECTED_MAIN
    assert dict(hub.bytes_served) == {f"{REPO_ID}/{name}": len(MAIN_FILES[name])}, (
        "only the corrupted file is fetched again"
    )


def test_the_branch_is_resolved_to_a_commit_recorded_with_the_copy(hub, tmp_path):
    proc, staged = hydrate(hub, tmp_path, revision="main", **FILTERS)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    commit = hub.repos[REPO_ID].refs["main"]
    assert json.loads((staged / MARKER).read_text())["revision"] == commit
    assert f"is commit {commit}" in proc.stdout
    fetched = {p for m, p, _ in hub.requests if m == "GET" and "/resolve/" in p}
    assert fetched and all(f"/resolve/{commit}/" in p for p in fetched), (
        "every file is fetched at the resolved commit, never at the moving branch"
    )


def test_an_interrupted_attempt_finishes_the_commit_it_started_even_if_the_branch_moved(
    hub, tmp_path
):
    first_commit = hub.repos[REPO_ID].refs["main"]
    hub.faults.forbid.add("tokenizer.json")
    failed, staged = hydrate(hub, tmp_path, revision="main", **FILTERS)
    assert failed.returncode != 0 and not staged.exists()
    hub.repos[REPO_ID].commit("main", {**MAIN_FILES, "tokenizer.json": b'{"vocab": ["c"]}'})
    retried, staged = hydrate(hub, tmp_path, revision="main", **FILTERS)
    assert retried.returncode == 0, retried.stdout + retried.stderr
    assert json.loads((staged / MARKER).read_text())["revision"] == first_commit
    assert model_files(staged) == EXPECTED_MAIN, "one commit's bytes, never a mix"
