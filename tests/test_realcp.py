"""realcp_binary: real control plane binaries from $MODELFLEET_REALCP_BIN or ../shared/realcp."""

import hashlib
import lzma
import os
from pathlib import Path

import pytest
from modelfleet_devtools import realcp
from modelfleet_devtools.realcp import RealcpUnavailable, realcp_binary

TOOL_BYTES = b"#!/bin/sh\necho real tool\n"


def _shared_dir(root: Path, content: bytes, listed_sum: str | None) -> Path:
    """A ../shared/realcp look-alike holding `tool.xz` and SHA256SUMS listing `listed_sum`."""
    shared = root / "shared-realcp"
    (shared / "bin").mkdir(parents=True)
    (shared / "bin" / "tool.xz").write_bytes(lzma.compress(content))
    if listed_sum is not None:
        (shared / "SHA256SUMS").write_text(f"{listed_sum}  tool\n0000  other\n")
    return shared


@pytest.fixture
def isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.delenv(realcp.BIN_DIR_ENV, raising=False)
    monkeypatch.setenv(realcp.CACHE_DIR_ENV, str(tmp_path / "cache"))
    return tmp_path


def test_unpacks_once_into_a_cache_keyed_by_checksum(isolated, monkeypatch):
    good_sum = hashlib.sha256(TOOL_BYTES).hexdigest()
    monkeypatch.setattr(realcp, "SHARED_REALCP_DIR", _shared_dir(isolated, TOOL_BYTES, good_sum))
    first = realcp_binary("tool")
    assert first == isolated / "cache" / good_sum / "tool"
    assert first.read_bytes() == TOOL_BYTES
    assert os.access(first, os.X_OK)
    # A second call reuses the unpacked file instead of decompressing again.
    first.write_bytes(TOOL_BYTES + b"# already here\n")
    assert realcp_binary("tool").read_bytes().endswith(b"# already here\n")


@pytest.mark.parametrize(
    ("listed_sum", "missing_name", "message"),
    [
        pytest.param("0" * 64, "tool", "damaged", id="checksum-mismatch-is-refused-and-not-cached"),
        pytest.param(None, "tool", "SHA256SUMS", id="no-checksums-file-says-how-to-get-them"),
        pytest.param("0" * 64, "kubectl", "MODELFLEET_REALCP_BIN", id="unknown-binary"),
    ],
)
def test_shared_dir_refusals(isolated, monkeypatch, listed_sum, missing_name, message):
    monkeypatch.setattr(realcp, "SHARED_REALCP_DIR", _shared_dir(isolated, TOOL_BYTES, listed_sum))
    with pytest.raises(RealcpUnavailable, match=message):
        realcp_binary(missing_name)
    cache = isolated / "cache"
    assert not cache.exists() or not any(p.is_file() for p in cache.rglob("*"))


@pytest.mark.parametrize(
    ("present", "executable"),
    [
        pytest.param(True, True, id="executable-in-named-dir-is-used"),
        pytest.param(True, False, id="non-executable-in-named-dir-is-refused"),
        pytest.param(False, False, id="absent-from-named-dir-is-refused"),
    ],
)
def test_env_var_names_a_directory_of_decompressed_binaries(
    isolated, monkeypatch, present, executable
):
    named = isolated / "bins"
    named.mkdir()
    if present:
        (named / "tool").write_bytes(TOOL_BYTES)
        (named / "tool").chmod(0o755 if executable else 0o644)
    monkeypatch.setenv(realcp.BIN_DIR_ENV, str(named))
    # The shared copy is never consulted once the variable is set.
    monkeypatch.setattr(realcp, "SHARED_REALCP_DIR", isolated / "nowhere")
    if present and executable:
        assert realcp_binary("tool") == named / "tool"
    else:
        with pytest.raises(RealcpUnavailable, match="MODELFLEET_REALCP_BIN"):
            realcp_binary("tool")
