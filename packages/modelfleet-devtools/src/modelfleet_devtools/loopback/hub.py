"""A loopback stand-in for the Hugging Face Hub: just enough HTTP for huggingface_hub downloads.

What huggingface_hub (2.x) asks for, as read from its source:
- `GET /api/models/<repo>[/revision/<rev>]`: model info; `sha` resolves a branch or tag.
- `GET /api/models/<repo>/tree/<commit>?recursive=...`: the files as the Hub lists them: path,
  size, git blob id (`oid`) and, for LFS files (weights), `lfs.oid`, the content's sha256.
- `HEAD /<repo>/resolve/<commit>/<file>`: `X-Repo-Commit`, `ETag`, `Content-Length`.
- `GET /<repo>/resolve/<commit>/<file>`, with `Range: bytes=N-` when resuming.

It listens on 127.0.0.1 only, counts the file bytes it serves, can cut a download off
mid-file (drop the connection, or stall until released), and shuts itself down after
`lifetime` seconds even if a test forgets to. Like the Hub, it works out each file's digests
once, when the commit is made, not per request: a listing or a download costs it no hashing,
so a benchmark against it measures the client.
"""

import contextlib
import hashlib
import json
import re
import socket
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any
from urllib.parse import unquote, urlsplit

from modelfleet_devtools.loopback.server import LoopbackServer, handler_for

COMMIT = re.compile(r"^[0-9a-f]{40}$")
HOLD_STALLED = 120  # seconds a stalled download waits for release at most
LFS_SUFFIXES = (".safetensors", ".pth", ".bin", ".gguf")  # what .gitattributes puts in LFS


def git_blob_id(data: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def lfs_pointer(data: bytes) -> bytes:
    """The small file git holds in place of an LFS file."""
    oid = hashlib.sha256(data).hexdigest()
    return (
        f"version https://git-lfs.github.com/spec/v1\noid sha256:{oid}\nsize {len(data)}\n".encode()
    )


def tree_entry(name: str, data: bytes) -> dict[str, Any]:
    if not name.endswith(LFS_SUFFIXES):
        return {"type": "file", "path": name, "size": len(data), "oid": git_blob_id(data)}
    pointer = lfs_pointer(data)
    return {
        "type": "file",
        "path": name,
        "size": len(data),
        "oid": git_blob_id(pointer),
        "lfs": {
            "oid": hashlib.sha256(data).hexdigest(),
            "size": len(data),
            "pointerSize": len(pointer),
        },
    }


@dataclass
class Repo:
    """Commits by sha (file name -> content), their tree entries (file name -> what the Hub
    lists for it) and refs (branch or tag -> sha). A gated repo's files are served only to a
    request that carries a token, as the Hub serves them only to users granted access."""

    commits: dict[str, dict[str, bytes]] = field(default_factory=dict)
    trees: dict[str, dict[str, dict[str, Any]]] = field(default_factory=dict)
    refs: dict[str, str] = field(default_factory=dict)
    gated: bool = False

    def commit(self, ref: str, files: dict[str, bytes]) -> str:
        sha = hashlib.sha1(json.dumps(sorted(files), default=str).encode() + ref.encode())
        for name in sorted(files):
            sha.update(files[name])
        self.commits[sha.hexdigest()] = files
        self.trees[sha.hexdigest()] = {name: tree_entry(name, data) for name, data in files.items()}
        self.refs[ref] = sha.hexdigest()
        return sha.hexdigest()

    def resolve(self, revision: str) -> str | None:
        return revision if revision in self.commits else self.refs.get(revision)


@dataclass
class Faults:
    """Ways to make a download fail: each once, the first GET (drop, stall) or the first
    request (forbid) for that file; or every request for a repo until it is taken out of
    `deny` (access revoked)."""

    drop_after: dict[str, int] = field(default_factory=dict)  # send N bytes, close the socket
    stall_after: dict[str, int] = field(default_factory=dict)  # send N bytes, wait for release
    forbid: set[str] = field(default_factory=set)  # answer 403 (like a gated file)
    corrupt: set[str] = field(default_factory=set)  # serve the right size, one byte flipped
    deny: set[str] = field(default_factory=set)  # repos answering 403 to every request


class Link:
    """A network link every download shares: at most `rate` bytes/s in all (None: unpaced).
    Each piece takes its turn on the wire; a sender waits until its piece has gone."""

    def __init__(self, rate: float | None = None) -> None:
        self.rate = rate
        self.lock = threading.Lock()
        self.free_at = 0.0  # when the wire is free of the pieces already sent (monotonic)

    def wait_for(self, size: int) -> None:
        if not self.rate:
            return
        with self.lock:
            self.free_at = max(self.free_at, time.monotonic()) + size / self.rate
            done = self.free_at
        time.sleep(max(0.0, done - time.monotonic()))


class FakeHub(LoopbackServer):
    def __init__(self, repos: dict[str, Repo], *, lifetime: float = 600.0) -> None:
        self.repos = repos
        self.faults = Faults()
        self.rate: float | None = None  # file bytes/s per request (None: as fast as it can)
        self.link = Link()  # file bytes/s of all requests together (a network link)
        self.release = threading.Event()
        self.stalled = threading.Event()
        self.lock = threading.Lock()
        self.bytes_served: Counter[str] = Counter()  # file bytes per "repo/file"
        self.requests: list[tuple[str, str, str]] = []  # (method, path, Range header)
        self.refused: list[str] = []  # "METHOD path" of gated files asked for without a token
        handler = handler_for(lambda h: self.handle(h, body=h.command != "HEAD"), ("GET", "HEAD"))
        super().__init__(handler, lifetime=lifetime)

    def stop(self) -> None:
        self.release.set()  # let a stalled download go before the server closes
        super().stop()

    def reset_counts(self) -> None:
        with self.lock:
            self.bytes_served.clear()
            self.requests.clear()

    @property
    def total_file_bytes(self) -> int:
        with self.lock:
            return sum(self.bytes_served.values())

    # --- request handling -------------------------------------------------------------

    def handle(self, h: BaseHTTPRequestHandler, *, body: bool) -> None:
        path = unquote(urlsplit(h.path).path)
        with self.lock:
            self.requests.append((h.command, path, h.headers.get("Range") or ""))
            denied = any(
                path.startswith((f"/api/models/{repo}/", f"/{repo}/"))
                or path == f"/api/models/{repo}"
                for repo in self.faults.deny
            )
        if denied:
            self.reply(h, 403, b"{}", {"X-Error-Code": "GatedRepo"})
        elif path.startswith("/api/models/"):
            self.api(h, path[len("/api/models/") :])
        elif "/resolve/" in path:
            self.resolve(h, path, body=body)
        else:
            self.reply(h, 404, b"not found", {"X-Error-Code": "RepoNotFound"})

    def api(self, h: BaseHTTPRequestHandler, rest: str) -> None:
        for kind in ("/revision/", "/tree/"):
            if kind in rest:
                repo_id, _, revision = rest.partition(kind)
                break
        else:
            kind, repo_id, revision = "/revision/", rest, "main"  # the default branch
        repo = self.repos.get(repo_id)
        if repo is None:
            return self.reply(h, 404, b"{}", {"X-Error-Code": "RepoNotFound"})
        sha = repo.resolve(revision)
        if sha is None:
            return self.reply(h, 404, b"{}", {"X-Error-Code": "RevisionNotFound"})
        files = repo.commits[sha]
        if kind == "/revision/":
            info = {
                "id": repo_id,
                "sha": sha,
                "private": False,
                "siblings": [{"rfilename": name} for name in sorted(files)],
            }
            return self.reply(h, 200, json.dumps(info).encode(), {})
        tree = [entry for _, entry in sorted(repo.trees[sha].items())]
        return self.reply(h, 200, json.dumps(tree).encode(), {})

    def resolve(self, h: BaseHTTPRequestHandler, path: str, *, body: bool) -> None:
        repo_id, _, rest = path.lstrip("/").partition("/resolve/")
        revision, _, name = rest.partition("/")
        repo = self.repos.get(repo_id)
        sha = repo.resolve(revision) if repo else None
        if repo is None or sha is None:
            return self.reply(h, 404, b"", {"X-Error-Code": "RevisionNotFound"})
        if repo.gated and not (h.headers.get("Authorization") or "").startswith("Bearer "):
            with self.lock:
                self.refused.append(f"{h.command} {path}")
            return self.reply(h, 401, b"", {"X-Error-Code": "GatedRepo", "X-Repo-Commit": sha})
        data = repo.commits[sha].get(name)
        if data is None:
            return self.reply(h, 404, b"", {"X-Error-Code": "EntryNotFound", "X-Repo-Commit": sha})
        with self.lock:
            forbidden = name in self.faults.forbid
            self.faults.forbid.discard(name)
        if forbidden:
            return self.reply(h, 403, b"", {"X-Error-Code": "GatedRepo"})
        entry = repo.trees[sha][name]
        headers = {
            "X-Repo-Commit": sha,
            "ETag": f'"{entry.get("lfs", {}).get("oid") or entry["oid"]}"',
            "Accept-Ranges": "bytes",
        }
        start = 0
        ranged = re.fullmatch(r"bytes=(\d+)-", h.headers.get("Range") or "")
        if ranged and body:
            start = int(ranged[1])
            headers["Content-Range"] = f"bytes {start}-{len(data) - 1}/{len(data)}"
        if not body:
            return self.reply(h, 200, b"", headers, length=len(data))
        chunk: bytes | memoryview = memoryview(data)[start:]  # no copy of a whole shard
        with self.lock:
            drop = self.faults.drop_after.pop(name, None)
            stall = self.faults.stall_after.pop(name, None)
            corrupt = name in self.faults.corrupt
            self.faults.corrupt.discard(name)
        if corrupt and chunk:  # bit rot on the way: same length, one byte different
            chunk = bytes([chunk[0] ^ 0xFF]) + chunk[1:]
        cut = drop if drop is not None else stall
        h.send_response(206 if ranged else 200)
        for key, value in headers.items():
            h.send_header(key, value)
        h.send_header("Content-Length", str(len(chunk)))
        h.end_headers()
        sent = chunk if cut is None else chunk[:cut]
        self.send_body(h, sent)
        with self.lock:
            self.bytes_served[f"{repo_id}/{name}"] += len(sent)
        if cut is None:
            return None
        if stall is not None:
            self.stalled.set()
            self.release.wait(timeout=HOLD_STALLED)
        h.close_connection = True
        with contextlib.suppress(OSError):  # the client may have gone first (killed)
            h.connection.shutdown(socket.SHUT_RDWR)
        return None

    def send_body(self, h: BaseHTTPRequestHandler, data: bytes | memoryview) -> None:
        """Write `data`, paced to `rate` (so a test can watch progress) and to the link's
        rate when either is set."""
        if not self.rate and not self.link.rate:
            h.wfile.write(data)
            h.wfile.flush()
            return
        step = 256 * 1024
        for offset in range(0, len(data), step):
            piece = data[offset : offset + step]
            self.link.wait_for(len(piece))
            h.wfile.write(piece)
            h.wfile.flush()
            if self.rate:
                time.sleep(len(piece) / self.rate)

    @staticmethod
    def reply(
        h: BaseHTTPRequestHandler,
        status: int,
        payload: bytes,
        headers: dict[str, str],
        *,
        length: int | None = None,
    ) -> None:
        h.send_response(status)
        h.send_header("Content-Type", "application/json")
        for key, value in headers.items():
            h.send_header(key, value)
        h.send_header("Content-Length", str(len(payload) if length is None else length))
        h.end_headers()
        if h.command != "HEAD":
            h.wfile.write(payload)
