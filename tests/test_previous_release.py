"""The previous release the e2e upgrade scenario starts from (modelfleet_devtools.e2e.release):
taken from this repository's history, and refused with what to do where it is not there."""

from pathlib import Path

import pytest
from modelfleet_devtools.e2e.release import (
    PREVIOUS_RELEASE,
    ReleaseUnavailable,
    checkout,
)


def test_a_commit_not_in_the_history_is_refused_saying_what_to_do(tmp_path: Path) -> None:
    with pytest.raises(ReleaseUnavailable, match=r"0{40}.*not in this checkout's history"):
        checkout("0" * 40, tmp_path / "release")


def test_the_previous_release_is_checked_out_with_what_it_publishes(tmp_path: Path) -> None:
    root = checkout(PREVIOUS_RELEASE, tmp_path / "release")
    assert (root / "apis" / "crossplane.yaml").is_file()
    assert (root / "uv.lock").is_file()
    assert sorted(p.parent.parent.name for p in root.glob("functions/*/package/crossplane.yaml"))


def test_each_release_is_waited_for_by_the_kinds_it_defines(tmp_path: Path) -> None:
    """The previous release predates ModelCacheShard: installing it must not wait for that
    kind (it never comes), and today's release must."""
    from modelfleet_devtools.e2e.release import PREVIOUS_VERSION, Release, current_release

    previous = Release("previous", checkout(PREVIOUS_RELEASE, tmp_path / "r"), PREVIOUS_VERSION)
    assert "modelcacheshards.modelfleet.io" not in previous.xrd_names()
    assert "modelcaches.modelfleet.io" in previous.xrd_names()
    assert "modelcacheshards.modelfleet.io" in current_release().xrd_names()
