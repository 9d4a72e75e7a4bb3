"""The hydrator reporting on its own Job, against a loopback API server (fake_kube.py) that
allows get and patch of that Job (what the hydrator's Role allows, narrowed to it). The Job's
command is the composed one (hydrator_world.py); only `--report-every` is shortened so a test
can watch."""

import json
import re
import socket
from pathlib import Path

import pytest
from cache_world import desired_resources, keys, model_cache, reconcile
from fake_kube import FakeKube, JobRecord
from hydrator_world import (
    CLUSTER,
    EXPECTED_MAIN,
    FILTERS,
    MAIN_FILES,
    MARKER,
    MIB,
    REPO_ID,
    hub,
    hydrate,
    model_files,
)
from modelfleet_contracts.hydration import (
    BYTES_DONE,
    BYTES_TOTAL,
    FILES_DONE,
    FILES_TOTAL,
    REVISION,
)
from modelfleet_hydrator import job_report
from modelfleet_hydrator.hydrate import HF_BOOKKEEPING, measure
from modelfleet_hydrator.integrity import Expected

__all__ = ["hub"]  # the fixture, used by name
WATCH = ("--report-every=0.1",)
TOTAL = sum(len(data) for data in EXPECTED_MAIN.values())


def composed_job_identity(**hf) -> tuple[str, str]:
    """(namespace, name) of the hydration Job the function composes for REPO_ID."""
    xr = model_cache(huggingFace={"repo": REPO_ID, **hf})
    rsp = reconcile(xr, [CLUSTER])
    manifest = desired_resources(rsp)[keys("gke-us", xr)[2]]["spec"]["forProvider"]
    metadata = manifest["manifest"]["metadata"]
    return metadata["namespace"], metadata["name"]


@pytest.fixture
def kube(tmp_path):
    namespace, name = composed_job_identity(revision="main", **FILTERS)
    with FakeKube(JobRecord(namespace, name)) as server:
        server.env = {
            "MODELFLEET_KUBE_API": server.endpoint,
            "MODELFLEET_SERVICEACCOUNT_DIR": str(server.service_account(tmp_path / "sa")),
        }
        yield server


def run(hub, kube, tmp_path, **hf):
    return hydrate(
        hub, tmp_path, extra_argv=WATCH, extra_env=kube.env, revision="main", **FILTERS, **hf
    )


def test_the_figures_grow_and_end_at_the_real_total(hub, kube, tmp_path):
    hub.rate = 12 * MIB  # ~2.3 s for the model: a few reports' worth
    proc, staged = run(hub, kube, tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert kube.refused == [], "only get and patch of its own Job"
    seen = [p for p in kube.job.patches if BYTES_DONE in p]
    done = [int(p[BYTES_DONE]) for p in seen]
    assert len(set(done)) >= 3, f"figures grew while it ran: {done}"
    assert done == sorted(done), "never backwards"
    assert done[-1] == TOTAL
    final = kube.job.annotations
    assert (int(final[BYTES_TOTAL]), int(final[BYTES_DONE])) == (TOTAL, TOTAL)
    assert (final[FILES_DONE], final[FILES_TOTAL]) == (str(len(EXPECTED_MAIN)),) * 2
    assert final[REVISION] == hub.repos[REPO_ID].refs["main"]
    assert {p.get(BYTES_TOTAL, str(TOTAL)) for p in kube.job.patches} == {str(TOTAL)}
    assert model_files(staged) == EXPECTED_MAIN
    hashed = re.search(r"\((\d+) hashed while downloading\)", proc.stdout)
    # The 24 MiB shard takes ~2 s at this rate (paced by wall time, so no faster on a loaded
    # machine), dozens of the hasher's polls (StreamHasher.EVERY apart): it is always
    # followed. A small file may finish between two polls (then `verify` hashes it whole), so
    # none is counted on.
    assert hashed and int(hashed[1]) >= 1, "the big shard was hashed as it arrived"


def test_a_rerun_fetches_nothing_and_reports_the_copy_complete(hub, kube, tmp_path):
    first, _ = run(hub, kube, tmp_path)
    assert first.returncode == 0, first.stdout + first.stderr
    hub.reset_counts()
    kube.job.annotations.clear()
    again, _ = run(hub, kube, tmp_path)
    assert again.returncode == 0 and hub.total_file_bytes == 0
    assert int(kube.job.annotations[BYTES_DONE]) == TOTAL


def test_the_pinned_commit_is_fetched_although_the_branch_moved(hub, kube, tmp_path):
    pinned = hub.repos[REPO_ID].refs["main"]
    hub.repos[REPO_ID].commit("main", {**MAIN_FILES, "config.json": b'{"model_type": "new"}'})
    kube.job.annotations[job_report.PINNED_REVISION] = pinned
    proc, staged = run(hub, kube, tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert json.loads((staged / MARKER).read_text())["revision"] == pinned
    assert model_files(staged) == EXPECTED_MAIN, "the pinned commit's bytes, not the branch's"
    assert kube.job.annotations[REVISION] == pinned


def test_a_pin_set_while_an_attempt_ran_fails_it_and_the_retry_fetches_the_pin(hub, kube, tmp_path):
    pinned = hub.repos[REPO_ID].refs["main"]
    moved = hub.repos[REPO_ID].commit(
        "main", {**MAIN_FILES, "config.json": b'{"model_type": "new"}'}
    )
    kube.job.pins = ["", pinned]  # no pin when the attempt starts; there when it ends
    failed, staged = run(hub, kube, tmp_path)
    assert failed.returncode != 0
    assert f"fetched commit {moved} but the cache is pinned to {pinned}" in failed.stdout
    assert not staged.exists() and not list((tmp_path / "claim").rglob(MARKER))

    retried, staged = run(hub, kube, tmp_path)
    assert retried.returncode == 0, retried.stdout + retried.stderr
    assert json.loads((staged / MARKER).read_text())["revision"] == pinned
    assert model_files(staged) == EXPECTED_MAIN


def test_a_copy_of_another_commit_is_restaged_at_the_pin(hub, kube, tmp_path):
    old = hub.repos[REPO_ID].refs["main"]
    first, staged = run(hub, kube, tmp_path)
    assert first.returncode == 0
    new_config = b'{"model_type": "new"}'
    pinned = hub.repos[REPO_ID].commit("main", {**MAIN_FILES, "config.json": new_config})
    kube.job.annotations[job_report.PINNED_REVISION] = pinned
    hub.reset_counts()
    again, staged = run(hub, kube, tmp_path)
    assert again.returncode == 0, again.stdout + again.stderr
    assert f"holds commit {old}, but the cache is pinned to {pinned}" in again.stdout
    assert json.loads((staged / MARKER).read_text())["revision"] == pinned
    assert model_files(staged)["config.json"] == new_config


def test_without_an_api_the_hydration_goes_on_and_says_so_once(hub, tmp_path):
    sa = tmp_path / "sa"
    sa.mkdir()
    (sa / "token").write_text("t")
    (sa / "namespace").write_text("ml-team")
    with socket.socket() as closed:  # bound, never listening: every call to it is refused
        closed.bind(("127.0.0.1", 0))
        host, port = closed.getsockname()
        env = {
            "MODELFLEET_KUBE_API": f"http://{host}:{port}",
            "MODELFLEET_SERVICEACCOUNT_DIR": str(sa),
        }
        proc, staged = hydrate(
            hub, tmp_path, extra_argv=WATCH, extra_env=env, revision="main", **FILTERS
        )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.count("cannot report progress") == 1
    assert (staged / MARKER).is_file()


def test_a_file_renamed_into_place_while_measured_is_counted_whole_not_dropped(
    tmp_path, monkeypatch
):
    """huggingface_hub renames a finished file from its partial name at any moment; a measure
    taken across that rename counts it whole (dropping it would report the figures going
    backwards, as once seen in the test above)."""
    staging = tmp_path / "staging"
    partial = staging / HF_BOOKKEEPING / "download" / "ab12.0123.incomplete"
    partial.parent.mkdir(parents=True)
    partial.write_bytes(b"w" * 10)
    (staging / "config.json").write_bytes(b"{}")
    expected = [Expected("w.safetensors", 10, sha256="0123"), Expected("config.json", 2)]
    assert int(measure(staging, expected)[BYTES_DONE]) == 12, "partial and finished bytes"

    listed = Path.rglob

    def rename_right_after_the_partial_files_are_listed(self, *args, **kwargs):
        found = list(listed(self, *args, **kwargs))
        if partial.exists():
            partial.rename(staging / "w.safetensors")
        return iter(found)

    monkeypatch.setattr(Path, "rglob", rename_right_after_the_partial_files_are_listed)
    figures = measure(staging, expected)
    assert (figures[BYTES_DONE], figures[FILES_DONE]) == ("12", "2")


def test_an_s3_object_being_written_counts_through_boto3s_temporary_file(tmp_path):
    """boto3's transfer manager writes the hydrator's `<file>.part` through
    `<file>.part.<8 random hex digits>`: those bytes are progress too. A file of the model
    whose name merely looks alike is not counted twice."""
    staging = tmp_path / "staging"
    (staging / "sub").mkdir(parents=True)
    (staging / "sub" / "w.safetensors.part.9fA0b1C2").write_bytes(b"w" * 7)
    (staging / "x.bin.part").write_bytes(b"x" * 3)  # renamed by boto3, not by us yet
    (staging / "notes.part.12345678").write_bytes(b"n" * 5)  # a finished model file
    expected = [
        Expected("sub/w.safetensors", 10),
        Expected("x.bin", 4),
        Expected("notes.part.12345678", 5),
    ]
    figures = measure(staging, expected)
    assert (figures[BYTES_DONE], figures[FILES_DONE]) == ("15", "1")


def test_the_termination_message_carries_the_final_figures(tmp_path):
    log = tmp_path / "termination-log"
    job_report.termination_message({"bytes": 5}, log)
    assert not log.exists(), "written only where Kubernetes created the file"
    log.write_text("")
    job_report.termination_message({"bytes": 5, "revision": "a" * 40}, log)
    assert json.loads(log.read_text()) == {"bytes": 5, "revision": "a" * 40}


def test_outside_a_cluster_there_is_no_client(monkeypatch, tmp_path: Path):
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    monkeypatch.delenv("MODELFLEET_KUBE_API", raising=False)
    monkeypatch.setenv("MODELFLEET_SERVICEACCOUNT_DIR", str(tmp_path))
    assert job_report.JobClient.in_cluster("hydrate-x") is None
