"""The OCI hydrator's test world: a real registry (go-containerregistry's `crane registry
serve`, from the real control plane's binaries: modelfleet_devtools.realcp) on 127.0.0.1, and
modelcar images built here, layer by layer, pushed through the registry API.

The registry logs each request it serves on stderr (`GET /v2/<repo>/blobs/<digest>`), which is
how the tests count what the hydrator fetched. It refuses to serve a blob damaged on its disk,
so damage is done in transit: `Gateway` stands between the hydrator and the registry as a
mirror or proxy would, flipping a byte of a chosen blob once, and when asked, demanding the
registry token dance (a Bearer challenge, a token for Basic credentials) and redirecting blobs
to another host name, as registries that serve blobs from object storage do.
"""

import base64
import json
import socket
import subprocess
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from pathlib import Path

import pytest
from modelfleet_devtools.loopback.modelcar import Image, push
from modelfleet_devtools.loopback.server import LoopbackServer
from modelfleet_devtools.realcp import RealcpUnavailable, realcp_binary

START_TIMEOUT = 20  # seconds for the registry to answer /v2/
STALL_HOLD = 60  # seconds a stalled blob waits for release at most


class Registry:
    """`crane registry serve` on a free loopback port, storing blobs under `disk`."""

    def __init__(self, disk: Path, log: Path) -> None:
        self.disk, self.log_path = disk, log
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            self.port = probe.getsockname()[1]
        self.host = f"127.0.0.1:{self.port}"
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        crane = realcp_binary("crane")
        with self.log_path.open("ab") as log:
            self.process = subprocess.Popen(
                [str(crane), "registry", "serve", "--address", self.host, "--disk", str(self.disk)],
                stdout=log,
                stderr=log,
            )
        deadline = time.monotonic() + START_TIMEOUT
        while True:
            try:
                with urllib.request.urlopen(f"http://{self.host}/v2/", timeout=2):
                    return
            except OSError:
                assert self.process.poll() is None, self.log_path.read_text()
                assert time.monotonic() < deadline, "the registry never answered"
                time.sleep(0.1)

    def stop(self) -> None:
        if self.process:
            self.process.terminate()
            self.process.wait(timeout=10)
            self.process = None

    def push(self, repository: str, tag: str, pushed: Image) -> str:
        """Push `pushed` under `repository:tag`; the reference the ModelCache names."""
        return push(self.host, repository, tag, pushed)

    def blob_path(self, digest: str) -> Path:
        """Where the registry keeps a blob on disk."""
        (found,) = [p for p in self.disk.rglob(digest.removeprefix("sha256:")) if p.is_file()]
        return found

    def requests(self) -> list[str]:
        """`METHOD path` of every request logged so far."""
        lines = self.log_path.read_text().splitlines()
        return [" ".join(line.split()[2:4]) for line in lines if " /v2/" in line]

    def blob_fetches(self) -> list[str]:
        return [
            r.rsplit("/", 1)[1] for r in self.requests() if r.startswith("GET") and "/blobs/" in r
        ]


@pytest.fixture
def registry(tmp_path: Path) -> Iterator[Registry]:
    try:
        realcp_binary("crane")
    except RealcpUnavailable as missing:
        pytest.skip(str(missing))
    disk = tmp_path / "registry"
    disk.mkdir()
    server = Registry(disk, tmp_path / "registry.log")
    server.start()
    try:
        yield server
    finally:
        server.stop()


TOKEN = "registry-token-for-the-test"  # what the gateway's token service hands out


class Gateway(LoopbackServer):
    """A proxy in front of `upstream` (a Registry)."""

    def __init__(self, upstream: Registry) -> None:
        self.upstream = upstream
        # Blob digests whose next serving is damaged: one byte flipped in the middle, one
        # flipped in the compressed stream's first block (`head`: the archive is unreadable
        # from there), or (`grow`) more bytes than the blob holds appended.
        self.corrupt: set[str] = set()
        self.head: set[str] = set()
        self.grow: set[str] = set()
        # Blob digest -> bytes of it sent before its next serving stalls (until `release`,
        # at most STALL_HOLD seconds), as a pod evicted mid-download would see it.
        self.stall: dict[str, int] = {}
        self.stalled, self.release = threading.Event(), threading.Event()
        self.credentials: tuple[str, str] | None = None  # when set: the token dance
        self.redirect_blobs = False
        self.realm = ""  # the token service the challenge names; "" for the gateway's own
        self.storage_authorization: list[str] = []  # Authorization seen on redirected blobs
        self.lock = threading.Lock()
        super().__init__(_gateway_handler(self), lifetime=300)

    @property
    def host(self) -> str:
        return self.endpoint.removeprefix("http://")

    def damage(self, digest: str, body: bytes) -> bytes:
        with self.lock:
            if digest in self.grow:
                self.grow.discard(digest)
                return body + b"\0" * (1024 * 1024)
            for damaged, at in ((self.corrupt, len(body) // 2), (self.head, 20)):
                if digest in damaged:
                    damaged.discard(digest)
                    flipped = bytearray(body)
                    flipped[at] ^= 0xFF
                    return bytes(flipped)
        return body


def _gateway_handler(gateway: Gateway) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: object) -> None:  # quiet
            pass

        def _send(self, status: int, body: bytes, headers: dict[str, str]) -> None:
            self.send_response(status)
            for key, value in {**headers, "Content-Length": str(len(body))}.items():
                self.send_header(key, value)
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self) -> None:
            authorization = self.headers.get("Authorization", "")
            if self.path.startswith("/storage/"):
                gateway.storage_authorization.append(authorization)
                return self._forward(self.path.removeprefix("/storage"))
            if gateway.credentials and self.path.startswith("/token"):
                basic = "Basic " + base64.b64encode(":".join(gateway.credentials).encode()).decode()
                if authorization != basic:
                    return self._send(401, b"{}", {"Content-Type": "application/json"})
                return self._send(200, json.dumps({"token": TOKEN}).encode(), {})
            if gateway.credentials and authorization != f"Bearer {TOKEN}":
                realm = gateway.realm or f"{gateway.endpoint}/token"
                scope = "repository:acme/tiny-llm:pull"
                challenge = f'Bearer realm="{realm}",service="gateway",scope="{scope}"'
                return self._send(401, b"{}", {"WWW-Authenticate": challenge})
            if gateway.redirect_blobs and "/blobs/" in self.path:
                port = gateway.endpoint.rsplit(":", 1)[1]
                return self._send(
                    307, b"", {"Location": f"http://localhost:{port}/storage{self.path}"}
                )
            self._forward(self.path)

        def _forward(self, path: str) -> None:
            request = urllib.request.Request(f"http://{gateway.upstream.host}{path}")
            if accept := self.headers.get("Accept"):
                request.add_header("Accept", accept)
            try:
                with urllib.request.urlopen(request, timeout=30) as response:
                    status, body, headers = response.status, response.read(), response.headers
            except urllib.error.HTTPError as refused:
                status, body, headers = refused.code, refused.read(), refused.headers
                refused.close()
            digest = path.rsplit("/", 1)[1]
            if "/blobs/" in path:
                body = gateway.damage(digest, body)
            kept = ("Content-Type", "Docker-Content-Digest")
            with gateway.lock:
                cut = gateway.stall.pop(digest, None) if "/blobs/" in path else None
            if cut is None:
                return self._send(status, body, {k: headers[k] for k in kept if headers.get(k)})
            self.send_response(status)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body[:cut])
            self.wfile.flush()
            gateway.stalled.set()
            gateway.release.wait(STALL_HOLD)
            self.close_connection = True
            return None

    return Handler


@pytest.fixture
def gateway(registry: Registry) -> Iterator[Gateway]:
    with Gateway(registry) as server:
        yield server
