"""Hashing beside the thread that writes: the writer hands each piece it writes to a thread
that updates the piece's hash, so writing and hashing overlap on two cores (hashlib and file
writes release the GIL). Standard library only."""

import queue
import threading
from typing import Any


class HashThread(threading.Thread):
    """Updates the hashes handed to it with their pieces, in the order handed. At most DEPTH
    pieces wait: when hashing falls behind, the writer waits, so memory stays bounded."""

    DEPTH = 32

    def __init__(self) -> None:
        super().__init__(name="hash-beside-writes", daemon=True)
        self.pieces: queue.Queue[tuple[Any, bytes | memoryview | None]] = queue.Queue(self.DEPTH)

    def hand(self, digest: Any, piece: bytes | memoryview) -> None:
        """Have `digest` updated with `piece` (which must not change afterwards)."""
        self.pieces.put((digest, piece))

    def drain(self) -> None:
        """Wait until every piece handed on so far is hashed."""
        hashed = threading.Event()
        self.pieces.put((hashed, None))
        hashed.wait()

    def run(self) -> None:
        while True:
            target, piece = self.pieces.get()
            if piece is None:
                target.set()  # everything handed on before it is hashed
            else:
                target.update(piece)
