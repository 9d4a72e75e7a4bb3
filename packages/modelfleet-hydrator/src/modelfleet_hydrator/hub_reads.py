"""How huggingface_hub reads a file's body over HTTP, set for less CPU per byte.

As shipped (huggingface_hub 2.4, httpx2/httpcore2 2.16, pinned by the image), each body is
read from the socket 64 KiB at a time, every read passing through h11's parser and httpx's
decoders, and the pieces are then gathered into 10 MiB chunks (each copied into a BytesIO,
copied out, sliced) before being written. On the 2 cores a hydration pod shares, that Python
work per piece and those copies are the hydrator's largest cost after hashing: it made
staging 1.16x slower than `hf download` (docs/benchmarks.md, "Staging from every source").

Here the socket is read up to READ_BYTES at once and each piece is written as it arrives, with
no gathering. What stays the same: memory per download is bounded (by READ_BYTES per
connection instead of 10 MiB), a file is still written to its `*.incomplete` name and renamed
once whole, and a connection cut mid-file still resumes with a Range request, now from the
last byte received rather than the last whole 10 MiB. Standard library plus those packages;
a version without these knobs is left as it is (the download works, only slower).
"""

import contextlib

READ_BYTES = 1024 * 1024


def read_in_large_pieces() -> None:
    """Make huggingface_hub's downloads in this process read READ_BYTES at a time and write
    each piece as it is read."""
    from huggingface_hub import constants

    # http_get iterates `response.iter_bytes(chunk_size=constants.DOWNLOAD_CHUNK_SIZE)`: None
    # hands each piece on as httpx2 read it instead of gathering (and copying) 10 MiB.
    if hasattr(constants, "DOWNLOAD_CHUNK_SIZE"):
        constants.DOWNLOAD_CHUNK_SIZE = None  # type: ignore[assignment]
    with contextlib.suppress(ImportError):
        from httpcore2._sync.http11 import HTTP11Connection

        # The most one socket read asks for (a class attribute httpcore2 reads per read).
        if getattr(HTTP11Connection, "READ_NUM_BYTES", 0) < READ_BYTES:
            HTTP11Connection.READ_NUM_BYTES = READ_BYTES
