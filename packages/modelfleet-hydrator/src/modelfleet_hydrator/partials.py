"""The files the downloaders write before a model file is whole, and how to recognise them.

- huggingface_hub: `<hash>.<etag>[.<attempt>].incomplete` under its bookkeeping directory;
- S3: an object goes to `<file>.part` (renamed to `<file>` once complete), which boto3's
  transfer manager itself writes through `<file>.part.<8 random hex digits>`;
- OCI: `<file>.modelfleet-partial` (oci_layers.py).

Such a file is never served and never reused: a killed attempt's is deleted. A model file
whose own name looks like one (its source lists it) is never taken for one. Standard library.
"""

import contextlib
import os
import re
from collections import defaultdict
from collections.abc import Iterable
from pathlib import Path

S3_PART = ".part"
OCI_PART = ".modelfleet-partial"
# s3transfer's temporary name: filename + os.extsep + random_file_extension() (8 hexdigits).
_S3_PARTIAL = re.compile(r"(.+)\.part(\.[0-9a-fA-F]{8})?")


def is_partial(name: str) -> bool:
    """Whether a file named `name` (not one of the model's) is a downloader's partial file."""
    return name.endswith(OCI_PART) or _s3_base(name) is not None


def _s3_base(name: str) -> str | None:
    """The name of the S3 object whose partial file is named `name` (None: not one)."""
    found = _S3_PARTIAL.fullmatch(name)
    return found.group(1) if found else None


def s3_partials(target: Path) -> list[Path]:
    """The partial files of the S3 object staged at `target`: its `.part` and boto3's
    temporary files beside it (a killed attempt's, or the one being written now)."""
    with contextlib.suppress(OSError):
        return [p for p in target.parent.iterdir() if _s3_base(p.name) == target.name]
    return []


def s3_partial_bytes(root: Path, relatives: Iterable[str]) -> int:
    """What is written so far of the S3 objects staged at `relatives` under `root` (each
    folder listed once)."""
    folders: dict[Path, set[str]] = defaultdict(set)
    for relative in relatives:
        path = root / relative
        folders[path.parent].add(path.name)
    done = 0
    for folder, bases in folders.items():
        with contextlib.suppress(OSError), os.scandir(folder) as entries:
            for entry in entries:
                if _s3_base(entry.name) in bases:
                    with contextlib.suppress(OSError):
                        done += entry.stat().st_size
    return done
