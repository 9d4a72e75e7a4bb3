"""The simulated hydration Job reports its progress on itself as the hydrator does: figures
that grow each round and end at the model's total, a commit, the pinned one when there is one;
and what another writer put on an object survives the provider's next apply."""

import hashlib

import pytest
from modelfleet_cli.simulate.workload import HydrationFault, Pool, WorkloadCluster
from modelfleet_contracts import hydration

NS = "modelfleet"
GIB = 1024**3


def cluster(rounds: int = 4) -> WorkloadCluster:
    c = WorkloadCluster("gke-us", [Pool("h100", 1, 8)], {"rwx"}, hydration_rounds=rounds)
    c.apply({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}})
    c.apply(
        {
            "apiVersion": "v1",
            "kind": "PersistentVolumeClaim",
            "metadata": {"name": "weights", "namespace": NS},
            "spec": {
                "accessModes": ["ReadWriteMany"],
                "storageClassName": "rwx",
                "resources": {"requests": {"storage": "200Gi"}},
            },
        }
    )
    return c


HF_SOURCE = ["--repo=acme/big", "--revision=main"]


def job(annotations: dict[str, str] | None = None, source: list[str] = HF_SOURCE) -> dict:
    metadata = {"name": "hydrate", "namespace": NS, "annotations": annotations or {}}
    command = ["python3", "/opt/modelfleet/hydrate.py", *source]
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": metadata,
        "spec": {
            "backoffLimit": 3,
            "template": {
                "spec": {
                    "containers": [{"name": "hydrate", "command": command}],
                    "volumes": [{"name": "m", "persistentVolumeClaim": {"claimName": "weights"}}],
                }
            },
        },
    }


def annotations(c: WorkloadCluster) -> dict[str, str]:
    return c.get(job())["metadata"].get("annotations", {})


def run(c: WorkloadCluster, rounds: int, reapply: dict | None = None) -> list[int]:
    done = []
    for _ in range(rounds):
        c.tick()
        if reapply is not None:
            c.apply(reapply)  # provider-kubernetes applies the composed Job again
        done.append(int(annotations(c).get(hydration.BYTES_DONE, "-1")))
    return done


def test_figures_grow_each_round_and_end_at_the_total_with_a_commit():
    c = cluster()
    c.apply(job())
    done = run(c, 5, reapply=job())  # the first tick binds the claim
    total = 100 * GIB  # half the 200Gi claim
    assert done == [total // 4, total // 2, total * 3 // 4, total, total]
    final = annotations(c)
    assert final[hydration.BYTES_TOTAL] == str(total)
    assert final[hydration.FILES_DONE] == final[hydration.FILES_TOTAL] == "23"
    assert final[hydration.REVISION] == hashlib.sha1(b"acme/big@main").hexdigest()


def test_a_pinned_commit_is_the_one_reported():
    c = cluster()
    pinned = {hydration.PINNED_REVISION: "c" * 40}
    c.apply(job(pinned))
    run(c, 1, reapply=job(pinned))
    assert annotations(c)[hydration.REVISION] == "c" * 40


TAGGED = "registry.example:5000/models/big:v1"
DIGEST = "sha256:" + "d" * 64


@pytest.mark.parametrize(
    ("image", "pinned", "revision"),
    [
        pytest.param(TAGGED, "", "sha256:" + hashlib.sha256(TAGGED.encode()).hexdigest(), id="tag"),
        pytest.param(f"registry.example:5000/models/big@{DIGEST}", "", DIGEST, id="digest"),
        pytest.param(TAGGED, "sha256:" + "e" * 64, "sha256:" + "e" * 64, id="pinned digest"),
    ],
)
def test_an_image_reports_its_digest_and_its_files_only_once_complete(image, pinned, revision):
    c = cluster()
    source = ["--source=OCI", f"--image={image}", "--path=/models"]
    start = {hydration.PINNED_REVISION: pinned} if pinned else {}
    c.apply(job(start, source))
    run(c, 2, reapply=job(start, source))
    midway = annotations(c)
    assert midway[hydration.REVISION] == revision
    assert hydration.FILES_DONE not in midway and hydration.FILES_TOTAL not in midway
    run(c, 3, reapply=job(start, source))
    final = annotations(c)
    assert final[hydration.BYTES_DONE] == final[hydration.BYTES_TOTAL]
    assert final[hydration.FILES_DONE] == final[hydration.FILES_TOTAL]


def test_the_attempt_running_when_a_fault_is_armed_fails_then_and_the_next_resumes():
    c = cluster(rounds=4)
    c.apply(job())
    done = run(c, 2, reapply=job())  # the attempt has fetched half
    c.hydration_faults.append(HydrationFault(1))  # the control plane arms it in its round
    done += run(c, 5, reapply=job())
    quarter = 25 * GIB
    # it fails at once, keeping its half; the next attempt's figures never go backwards
    assert done == [
        quarter,
        2 * quarter,
        2 * quarter,
        2 * quarter,
        2 * quarter,
        3 * quarter,
        4 * quarter,
    ]
    status = c.get(job())["status"]
    assert (status["failed"], status["succeeded"]) == (1, 1)
    assert c.events == ["Job modelfleet/hydrate: pod attempt 1 failed (simulated)"]
