"""The package-runtime plane's pieces that need no node: the registry offered on the node's
loopback (containerd's hosts.toml, the forwarder process), provider-kubernetes' runtime
image layer, and how the faults' fleet judges what was lost and how a pod stopped.

The plane itself runs in tests/e2e/test_packages_real.py.
"""

from __future__ import annotations

import socket
import subprocess
import sys
import tarfile
import threading
import tomllib
from pathlib import Path

import pytest
from modelfleet_devtools.e2e.packaged import node_hosts_toml
from modelfleet_devtools.e2e.packaged_fleet import lost, stopped
from modelfleet_devtools.e2e.processes import free_port, wait_for
from modelfleet_devtools.e2e.provider_package import ENTRYPOINT, binary_layer


@pytest.mark.parametrize("registry", ["127.0.0.1:5000", "127.0.0.1:43421"])
def test_containerd_pulls_the_loopback_registry_over_plain_http(registry: str) -> None:
    hosts = tomllib.loads(node_hosts_toml(registry))
    assert hosts["server"] == f"http://{registry}"
    assert hosts["host"] == {f"http://{registry}": {"capabilities": ["pull", "resolve"]}}


@pytest.mark.parametrize("linked", [False, True], ids=["the file", "a link to it"])
def test_the_provider_layer_holds_the_binary_at_the_entrypoint_executable_by_all(
    tmp_path: Path, linked: bool
) -> None:
    binary = tmp_path / "provider-kubernetes-350ef9a"
    binary.write_bytes(b"\x7fELF not really")
    binary.chmod(0o700)  # the layer's mode is its own, not the file's
    given = binary
    if linked:  # as the suite's bin folder (stack.link_binaries) gives it
        given = tmp_path / "bin" / binary.name
        given.parent.mkdir()
        given.symlink_to(binary)
    with tarfile.open(binary_layer(given, tmp_path / "out" / "layer.tar")) as tar:
        (member,) = tar.getmembers()
        assert member.isfile(), member.type
        assert "/" + member.name == ENTRYPOINT
        assert (member.mode, member.uid, member.gid, member.mtime) == (0o755, 0, 0, 0)
        extracted = tar.extractfile(member)
        assert extracted is not None and extracted.read() == binary.read_bytes()


def test_the_forwarder_process_carries_bytes_both_ways() -> None:
    upstream = socket.socket()
    upstream.bind(("127.0.0.1", 0))
    upstream.listen(1)

    def echo() -> None:
        conn, _ = upstream.accept()
        with conn:
            conn.sendall(conn.recv(1024).upper())

    threading.Thread(target=echo, daemon=True).start()
    listen = f"127.0.0.1:{free_port()}"
    target = f"127.0.0.1:{upstream.getsockname()[1]}"
    process = subprocess.Popen([sys.executable, "-m", "modelfleet_devtools.e2e.forward",
                                listen, target])  # fmt: skip
    try:
        host, _, port = listen.rpartition(":")

        def connected() -> socket.socket | None:
            try:
                return socket.create_connection((host, int(port)), timeout=5)
            except OSError:
                return None

        with wait_for(connected, what="the forwarder", timeout=20, every=0.2) as client:
            client.sendall(b"hello")
            assert client.recv(1024) == b"HELLO"
    finally:
        process.terminate()
        process.wait(10)
        upstream.close()


def test_a_composed_resource_deleted_or_remade_counts_as_lost() -> None:
    before = {"Object/a": "uid-1", "Namespace/ns": "uid-2", "roles/ns/r": "uid-3"}
    now = {"Object/a": "uid-1", "Namespace/ns": "uid-9", "Object/new": "uid-4"}
    assert lost(before, now) == ["Namespace/ns", "roles/ns/r"]
    assert lost(before, {**before, "Object/new": "uid-4"}) == []


def pod_state(uid: str, deletion: str | None, terminated: dict[str, object] | None) -> dict:
    meta: dict[str, object] = {"uid": uid}
    if deletion:
        meta |= {"deletionTimestamp": deletion, "deletionGracePeriodSeconds": 30}
    state = {"terminated": terminated} if terminated else {"running": {}}
    return {"metadata": meta, "status": {"containerStatuses": [
        {"name": "package-runtime", "state": state}]}}  # fmt: skip


def test_a_pod_that_stops_on_sigterm_exits_0_seconds_after_its_deletion() -> None:
    # kube-apiserver sets deletionTimestamp to when the grace period ends: asked at 10:00:00.
    clean = {"exitCode": 0, "reason": "Completed", "finishedAt": "2026-12-02T10:00:02Z"}
    states = [
        pod_state("old", None, None),
        pod_state("old", "2026-12-02T10:00:30Z", None),
        pod_state("old", "2026-12-02T10:00:30Z", clean),
        pod_state("other", "2026-12-02T10:00:31Z", None),
    ]
    assert stopped(states, "old") == (clean, 2.0)


def test_a_pod_that_ignores_sigterm_is_killed_at_the_end_of_its_grace_period() -> None:
    killed = {"exitCode": 137, "reason": "Error", "finishedAt": "2026-12-02T10:00:30Z"}
    states = [pod_state("old", "2026-12-02T10:00:30Z", None),
              pod_state("old", "2026-12-02T10:00:30Z", killed)]  # fmt: skip
    assert stopped(states, "old") == (killed, 30.0)
    assert stopped(states[:1], "old") == ({}, -1.0)  # gone before its exit was reported
