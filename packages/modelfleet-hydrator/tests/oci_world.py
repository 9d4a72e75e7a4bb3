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
import gzip
import hashlib
import io
import json
import socket
import subprocess
import tarfile
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler
from pathlib import Path

import pytest
from loopback_server import LoopbackServer
from modelfleet_devtools.realcp import RealcpUnavailable, realcp_binary

MANIFEST = "application/vnd.oci.image.manifest.v1+json"
INDEX = "application/vnd.oci.image.index.v1+json"
CONFIG = "application/vnd.oci.image.config.v1+json"
LAYER = "application/vnd.oci.image.layer.v1.tar+gzip"
START_TIMEOUT = 20  # seconds for the registry to answer /v2/


def digest_of(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


def tar_layer(entries: dict[str, bytes | tuple[str, str]]) -> bytes:
    """A gzipped tar of `entries`: path -> content, or ("symlink"|"hardlink", target)."""
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=tarfile.PAX_FORMAT) as archive:
        for name, content in entries.items():
            info = tarfile.TarInfo(name)
            info.mtime = 0
            if isinstance(content, tuple):
                kind, target = content
                info.type = tarfile.SYMTYPE if kind == "symlink" else tarfile.LNKTYPE
                info.linkname = target
                archive.addfile(info)
            else:
                info.size = len(content)
                archive.addfile(info, io.BytesIO(content))
    return gzip.compress(raw.getvalue(), mtime=0)


@dataclass(frozen=True)
class Image:
    config: bytes
    layers: list[bytes]
    manifest: bytes

    @property
    def digest(self) -> str:
        return digest_of(self.manifest)

    @property
    def layer_digests(self) -> list[str]:
        return [digest_of(layer) for layer in self.layers]


def image(*layers: dict[str, bytes | tuple[str, str]]) -> Image:
    blobs = [tar_layer(entries) for entries in layers]
    config = json.dumps({"architecture": "amd64", "os": "linux", "rootfs": {"type": "layers"}})
    manifest = {
        "schemaVersion": 2,
        "mediaType": MANIFEST,
        "config": {"mediaType": CONFIG, "digest": digest_of(config.encode()), "size": len(config)},
        "layers": [{"mediaType": LAYER, "digest": digest_of(b), "size": len(b)} for b in blobs],
    }
    return Image(config.encode(), blobs, json.dumps(manifest).encode())


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

    def _call(self, method: str, url: str, body: bytes = b"", kind: str = "") -> str:
        headers = {"Content-Type": kind or "application/octet-stream"}
        request = urllib.request.Request(url, data=body, method=method, headers=headers)
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.headers.get("Location", "")

    def push_blob(self, repository: str, blob: bytes) -> None:
        base = f"http://{self.host}"
        location = self._call("POST", f"{base}/v2/{repository}/blobs/uploads/")
        url = location if location.startswith("http") else base + location
        joiner = "&" if "?" in url else "?"
        self._call("PUT", f"{url}{joiner}digest={digest_of(blob)}", blob)

    def push(self, repository: str, tag: str, pushed: Image) -> str:
        """Push `pushed` under `repository:tag`; the reference the ModelCache names."""
        for layer in [pushed.config, *pushed.layers]:
            self.push_blob(repository, layer)
        url = f"http://{self.host}/v2/{repository}/manifests/{tag}"
        self._call("PUT", url, pushed.manifest, MANIFEST)
        return f"{self.host}/{repository}:{tag}"

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
            if "/blobs/" in path:
                body = gateway.damage(path.rsplit("/", 1)[1], body)
            kept = ("Content-Type", "Docker-Content-Digest")
            self._send(status, body, {k: headers[k] for k in kept if headers.get(k)})

    return Handler


@pytest.fixture
def gateway(registry: Registry) -> Iterator[Gateway]:
    with Gateway(registry) as server:
        yield server
