"""Model images ("modelcars": the weights as files in an image's layers, as KServe builds
them), built here layer by layer and pushed to a plain-HTTP loopback registry through the
distribution API, without any container tool."""

import gzip
import hashlib
import io
import json
import tarfile
import urllib.request
from dataclasses import dataclass

MANIFEST = "application/vnd.oci.image.manifest.v1+json"
INDEX = "application/vnd.oci.image.index.v1+json"
CONFIG = "application/vnd.oci.image.config.v1+json"
LAYER = "application/vnd.oci.image.layer.v1.tar+gzip"


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


def _call(method: str, url: str, body: bytes = b"", kind: str = "") -> str:
    headers = {"Content-Type": kind or "application/octet-stream"}
    request = urllib.request.Request(url, data=body, method=method, headers=headers)
    with urllib.request.urlopen(request, timeout=30) as response:
        return str(response.headers.get("Location", ""))


def push_blob(host: str, repository: str, blob: bytes) -> None:
    """Upload one blob (monolithic upload: POST, then PUT with its digest)."""
    base = f"http://{host}"
    location = _call("POST", f"{base}/v2/{repository}/blobs/uploads/")
    url = location if location.startswith("http") else base + location
    joiner = "&" if "?" in url else "?"
    _call("PUT", f"{url}{joiner}digest={digest_of(blob)}", blob)


def push(host: str, repository: str, tag: str, pushed: Image) -> str:
    """Push `pushed` to the registry at `host` as `repository:tag`; its reference."""
    for layer in [pushed.config, *pushed.layers]:
        push_blob(host, repository, layer)
    _call("PUT", f"http://{host}/v2/{repository}/manifests/{tag}", pushed.manifest, MANIFEST)
    return f"{host}/{repository}:{tag}"
