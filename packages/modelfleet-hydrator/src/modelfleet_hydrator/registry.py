"""Talking to an OCI registry (the distribution API) with the standard library: parsing an
image reference, authenticating (a Bearer token from the registry's auth challenge, or Basic,
with the credentials of a dockerconfigjson), fetching the manifest the reference names (an
image index resolved to the manifest for this machine's platform) and opening its blobs.

Three calls are all a pull needs (GET a manifest, GET a blob, GET a token), so no client
library is installed for them: the hydrator image stays the one its lock describes.
"""

import base64
import hashlib
import json
import os
import platform
import re
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass
from typing import Any

from modelfleet_contracts.hydration import DOCKER_CONFIG_ENV

# The hydrator's only view of the user's registry credentials is DOCKER_CONFIG_ENV: the
# .dockerconfigjson of the Secret spec.oci.pullSecretRef names, copied to the cluster by
# provider-kubernetes.
TIMEOUT = 60  # seconds without a byte before a request is given up (the Job retries)

INDEX_TYPES = (
    "application/vnd.oci.image.index.v1+json",
    "application/vnd.docker.distribution.manifest.list.v2+json",
)
MANIFEST_TYPES = (
    "application/vnd.oci.image.manifest.v1+json",
    "application/vnd.docker.distribution.manifest.v2+json",
)
DIGEST = re.compile(r"^sha256:[0-9a-f]{64}$")
_REFERENCE = re.compile(
    r"^(?P<host>[a-z0-9]([a-z0-9.-]*[a-z0-9])?(:[0-9]{1,5})?)"
    r"/(?P<repository>[a-z0-9]+(?:(?:\.|_|__|-+)[a-z0-9]+)*(?:/[a-z0-9]+(?:(?:\.|_|__|-+)[a-z0-9]+)*)*)"
    r"(?::(?P<tag>[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}))?(?:@(?P<digest>sha256:[0-9a-f]{64}))?$"
)
LOOPBACK = ("localhost", "127.0.0.1", "::1")  # as urlsplit spells a URL's host name
_ARCH = {"x86_64": "amd64", "amd64": "amd64", "aarch64": "arm64", "arm64": "arm64"}


class RegistryError(Exception):
    """The registry refused, or served something other than what was asked for."""


@dataclass(frozen=True)
class Reference:
    host: str  # as written (docker.io, ghcr.io, localhost:5000)
    repository: str
    tag: str
    digest: str  # "" unless the reference pins one

    @classmethod
    def parse(cls, text: str) -> "Reference":
        found = _REFERENCE.match(text)
        if not found:
            raise RegistryError(f"{text!r} is not an image reference registry/repository[:tag]")
        return cls(
            found["host"], found["repository"], found["tag"] or "latest", found["digest"] or ""
        )

    @property
    def api(self) -> str:
        """The registry's base URL. Loopback registries are spoken to over plain HTTP (as
        container runtimes do); every other one over HTTPS. Docker Hub serves its API from
        another host than its name."""
        host = (
            "registry-1.docker.io" if self.host in ("docker.io", "index.docker.io") else self.host
        )
        scheme = "http" if urllib.parse.urlsplit(f"//{host}").hostname in LOOPBACK else "https"
        return f"{scheme}://{host}"


def _credentials(host: str, config_json: str) -> tuple[str, str] | None:
    """(user, password) for `host` in a dockerconfigjson, if it holds any."""
    try:
        auths = json.loads(config_json).get("auths") or {}
    except (ValueError, AttributeError):
        raise RegistryError(f"{DOCKER_CONFIG_ENV} is not a dockerconfigjson") from None
    names = {host}
    if host in ("docker.io", "index.docker.io", "registry-1.docker.io"):
        names |= {"docker.io", "index.docker.io", "https://index.docker.io/v1/"}
    for key, entry in auths.items() if isinstance(auths, dict) else ():
        bare = urllib.parse.urlsplit(key).netloc if "://" in key else key.split("/")[0]
        if (key in names or bare in names) and isinstance(entry, dict):
            if entry.get("auth"):
                user, _, password = base64.b64decode(entry["auth"]).decode().partition(":")
                return user, password
            if entry.get("username"):
                return str(entry["username"]), str(entry.get("password", ""))
    return None


def _challenge(header: str) -> tuple[str, dict[str, str]]:
    """`Bearer realm="...",service="...",scope="..."` -> ("bearer", {realm, service, scope})."""
    scheme, _, rest = header.strip().partition(" ")
    params = dict(re.findall(r'(\w+)="([^"]*)"', rest))
    return scheme.lower(), params


def _platform() -> tuple[str, str]:
    machine = platform.machine().lower()
    return "linux", _ARCH.get(machine, machine)


class Registry:
    """One repository of one registry, with the credentials the Job was given."""

    def __init__(self, reference: Reference) -> None:
        self.reference = reference
        config = os.environ.get(DOCKER_CONFIG_ENV, "")
        self.credentials = _credentials(reference.host, config) if config else None
        self.authorization = ""  # the header value that worked last
        self.opener = urllib.request.build_opener()

    def _url(self, kind: str, name: str) -> str:
        return f"{self.reference.api}/v2/{self.reference.repository}/{kind}/{name}"

    def _basic(self) -> str:
        assert self.credentials
        return "Basic " + base64.b64encode(":".join(self.credentials).encode()).decode()

    def _authorize(self, header: str) -> None:
        scheme, params = _challenge(header)
        if scheme == "basic":
            if not self.credentials:
                raise RegistryError("the registry asks for credentials: set spec.oci.pullSecretRef")
            self.authorization = self._basic()
            return
        if scheme != "bearer" or not params.get("realm"):
            raise RegistryError(f"unsupported authentication challenge {header[:200]!r}")
        realm = urllib.parse.urlsplit(params["realm"])
        if realm.scheme != "https" and not (realm.scheme == "http" and realm.hostname in LOOPBACK):
            # Credentials go to the token service: never in clear text, never to a file: URL.
            raise RegistryError(f"refusing the token service {params['realm'][:200]!r}: not HTTPS")
        query = {"scope": params.get("scope") or f"repository:{self.reference.repository}:pull"}
        if params.get("service"):
            query["service"] = params["service"]
        request = urllib.request.Request(f"{params['realm']}?{urllib.parse.urlencode(query)}")
        if self.credentials:
            request.add_unredirected_header("Authorization", self._basic())
        try:
            with self.opener.open(request, timeout=TIMEOUT) as response:
                answer = json.loads(response.read())
        except urllib.error.HTTPError as exc:
            exc.close()
            hint = "" if self.credentials else "; a private image needs spec.oci.pullSecretRef"
            raise RegistryError(
                f"the registry's token service refused: HTTP {exc.code}{hint}"
            ) from None
        token = (
            answer.get("token") or answer.get("access_token") if isinstance(answer, dict) else ""
        )
        if not token:
            raise RegistryError("the registry's token service answered without a token")
        self.authorization = f"Bearer {token}"

    def open(self, kind: str, name: str, accept: tuple[str, ...] = ()) -> Any:
        """GET /v2/<repository>/<kind>/<name>, authenticating when the registry asks. The
        Authorization header is never sent on to a redirect (blobs are often served from
        storage elsewhere, with a signed URL of their own)."""
        for attempt in range(2):
            request = urllib.request.Request(self._url(kind, name))
            if accept:
                request.add_header("Accept", ", ".join(accept))
            if self.authorization:
                request.add_unredirected_header("Authorization", self.authorization)
            try:
                return self.opener.open(request, timeout=TIMEOUT)
            except urllib.error.HTTPError as exc:
                challenge = exc.headers.get("WWW-Authenticate", "")
                exc.close()
                if exc.code == 401 and challenge and attempt == 0:
                    self._authorize(challenge)
                    continue
                what = "not found" if exc.code == 404 else f"HTTP {exc.code}"
                hint = " (check spec.oci.pullSecretRef)" if exc.code in (401, 403) else ""
                raise RegistryError(
                    f"{self.reference.host}/{self.reference.repository} {kind[:-1]} {name}: "
                    f"{what}{hint}"
                ) from None
        raise AssertionError("unreachable")

    def _manifest(self, name: str) -> tuple[str, dict[str, Any]]:
        """(digest, parsed) of the manifest or index `name` (a tag or a digest), checked
        against the digest when one was asked for."""
        with self.open("manifests", name, INDEX_TYPES + MANIFEST_TYPES) as response:
            body = response.read(16 * 1024 * 1024 + 1)
        if len(body) > 16 * 1024 * 1024:
            raise RegistryError(f"manifest {name} is larger than 16 MiB")
        digest = "sha256:" + hashlib.sha256(body).hexdigest()
        if DIGEST.match(name) and digest != name:
            raise RegistryError(f"asked for manifest {name}, the registry served {digest}")
        try:
            parsed = json.loads(body)
        except ValueError:
            raise RegistryError(f"manifest {name} is not JSON") from None
        if not isinstance(parsed, dict):
            raise RegistryError(f"manifest {name} is not a JSON object")
        return digest, parsed

    def resolve(self, pin: str = "") -> tuple[str, list[dict[str, Any]]]:
        """(the digest the reference resolves to, the layers of its image): `pin` (a digest
        the cache is pinned to) when given, else the reference's digest, else its tag now."""
        digest, manifest = self._manifest(pin or self.reference.digest or self.reference.tag)
        if manifest.get("mediaType") in INDEX_TYPES or "manifests" in manifest:
            _, manifest = self._manifest(self._for_this_platform(manifest))
        layers = manifest.get("layers")
        if not isinstance(layers, list) or not all(
            isinstance(layer, dict)
            and DIGEST.match(str(layer.get("digest")))
            and isinstance(layer.get("size"), int)
            for layer in layers
        ):
            raise RegistryError(f"manifest {digest} lists no sha256 layers with sizes")
        return digest, layers

    def _for_this_platform(self, index: dict[str, Any]) -> str:
        entries = [m for m in index.get("manifests") or [] if isinstance(m, dict)]
        images = [m for m in entries if DIGEST.match(str(m.get("digest")))]
        os_name, arch = _platform()
        for entry in images:
            wanted = entry.get("platform") or {}
            if wanted.get("os") == os_name and wanted.get("architecture") == arch:
                return str(entry["digest"])
        # Weights are the same on every platform: an index of one image is that image.
        usable = [m for m in images if (m.get("platform") or {}).get("os") != "unknown"]
        if len(usable) == 1:
            return str(usable[0]["digest"])
        raise RegistryError(f"the image index has no manifest for {os_name}/{arch}")
