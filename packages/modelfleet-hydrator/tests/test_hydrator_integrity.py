"""integrity.py: a file is accepted only when its size and published digest match."""

import hashlib

import pytest
from modelfleet_hydrator.integrity import (
    Expected,
    StreamHasher,
    problem_with,
    s3_expected,
    verify,
)

DATA = b"weights" * 1000


def blob(data: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


GOOD_SHA = hashlib.sha256(DATA).hexdigest()
GOOD_MD5 = hashlib.md5(DATA).hexdigest()


@pytest.mark.parametrize(
    ("expected", "problem"),
    [
        (Expected("w.bin", len(DATA), sha256=GOOD_SHA), None),
        (Expected("w.bin", len(DATA), git_blob=blob(DATA)), None),
        (Expected("w.bin", len(DATA), md5=GOOD_MD5), None),
        (Expected("w.bin", len(DATA)), None),
        (Expected("w.bin", len(DATA) + 1, sha256=GOOD_SHA), "bytes, the source publishes"),
        (Expected("w.bin", len(DATA), sha256="0" * 64), "w.bin: sha256 "),
        (Expected("w.bin", len(DATA), git_blob=blob(DATA + b"x")), "w.bin: git blob sha1 "),
        (Expected("w.bin", len(DATA), md5="f" * 32), "w.bin: md5 "),
        (Expected("gone.bin", 1), "gone.bin: missing"),
    ],
    ids=[
        "sha256 matches",
        "git blob matches",
        "md5 matches",
        "size only",
        "size differs",
        "sha256 differs",
        "git blob differs",
        "md5 differs",
        "missing",
    ],
)
def test_a_file_is_checked_against_what_is_published(tmp_path, expected, problem):
    (tmp_path / "w.bin").write_bytes(DATA)
    found = problem_with(tmp_path, expected)
    assert (found is None) if problem is None else (problem in (found or ""))


@pytest.mark.parametrize(
    ("etag", "md5"),
    [
        (f'"{GOOD_MD5}"', GOOD_MD5),
        (f'"{GOOD_MD5.upper()}"', GOOD_MD5),
        ('"0123456789abcdef0123456789abcdef-12"', ""),  # multipart: depends on the part size
        ("", ""),
    ],
    ids=["single part", "upper case", "multipart", "none"],
)
def test_only_a_single_part_etag_counts_as_md5(etag, md5):
    assert s3_expected("a", 1, etag).md5 == md5


def test_verify_names_every_bad_file_in_path_order(tmp_path):
    for name in ("a", "b", "c"):
        (tmp_path / name).write_bytes(DATA)
    files = [
        Expected("c", len(DATA), sha256="0" * 64),
        Expected("a", len(DATA), sha256="0" * 64),
        Expected("b", len(DATA), sha256=GOOD_SHA),
    ]
    assert [p.split(":")[0] for p in verify(tmp_path, files)] == ["a", "c"]


@pytest.mark.parametrize(
    ("partial_name", "tamper"),
    [
        (f"aESknW7TOKEmfryZ2OONv6DRGfk=.{GOOD_SHA}.407131f1.incomplete", False),
        (f"aESknW7TOKEmfryZ2OONv6DRGfk=.{GOOD_SHA}.incomplete", False),
        (f"aESknW7TOKEmfryZ2OONv6DRGfk=.{GOOD_SHA}.407131f1.incomplete", True),
    ],
    ids=["as published", "partial name without an attempt suffix", "rewritten after"],
)
def test_a_file_hashed_while_it_downloads_counts_only_if_it_still_matches(
    tmp_path, partial_name, tamper
):
    want = Expected("sub/w.bin", len(DATA), sha256=GOOD_SHA)
    downloads = tmp_path / ".cache/huggingface/download/sub"
    downloads.mkdir(parents=True)
    (tmp_path / "sub").mkdir()
    (downloads / f"other.{'1' * 64}.incomplete").write_bytes(b"another file's partial")
    partial = downloads / partial_name
    hasher = StreamHasher(tmp_path, tmp_path / ".cache/huggingface", [want])
    with partial.open("wb") as f:  # the downloader writes it in pieces, hashed between them
        for i in range(0, len(DATA), 1000):
            f.write(DATA[i : i + 1000])
            f.flush()
            hasher.poll()
    assert hasher.follows[want.path].read == len(DATA), "read as it was written"
    partial.rename(tmp_path / want.path)
    streamed = hasher.finish()
    assert streamed[want.path]["sha256"] == GOOD_SHA
    if tamper:  # the file changed after it was hashed: it is read again and caught
        (tmp_path / want.path).write_bytes(DATA.upper())
    found = verify(tmp_path, [want], streamed)
    bad = hashlib.sha256(DATA.upper()).hexdigest()
    expected = [f"sub/w.bin: sha256 {bad}, the source publishes {GOOD_SHA}"]
    assert found == (expected if tamper else [])
