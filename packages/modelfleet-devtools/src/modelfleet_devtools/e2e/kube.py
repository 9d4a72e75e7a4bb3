"""Talking to the private API server: a small JSON REST client and kubectl."""

from __future__ import annotations

import http.client
import json
import ssl
import subprocess
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlencode, urlparse

Json = dict[str, Any]


class ApiError(RuntimeError):
    def __init__(self, status: int, body: str) -> None:
        super().__init__(f"HTTP {status}: {body[:500]}")
        self.status, self.body = status, body


def resource_path(
    api_version: str, plural: str, namespace: str | None = None, name: str | None = None
) -> str:
    """The REST path of a collection or of one object (`api_version` as in a manifest)."""
    base = f"/api/{api_version}" if "/" not in api_version else f"/apis/{api_version}"
    if namespace:
        base += f"/namespaces/{namespace}"
    base += f"/{plural}"
    return f"{base}/{name}" if name else base


@dataclass
class Kubeconfig:
    """An admin identity on one API server, as files (what kubectl and the binaries read)."""

    path: Path
    server: str
    ca: Path
    cert: Path
    key: Path


class KubeClient:
    """JSON over HTTPS with a client certificate; one connection per thread."""

    def __init__(self, config: Kubeconfig, kubectl_binary: Path) -> None:
        self.config = config
        self.kubectl_binary = kubectl_binary
        url = urlparse(config.server)
        self._host, self._port = url.hostname or "127.0.0.1", url.port or 443
        self._tls = ssl.create_default_context(cafile=str(config.ca))
        self._tls.load_cert_chain(str(config.cert), str(config.key))
        self._local = threading.local()

    def _connection(self) -> http.client.HTTPSConnection:
        conn = getattr(self._local, "conn", None)
        if conn is None:
            conn = http.client.HTTPSConnection(
                self._host, self._port, context=self._tls, timeout=30
            )
            self._local.conn = conn
        return conn

    def request(
        self,
        method: str,
        path: str,
        body: Json | None = None,
        *,
        content_type: str = "application/json",
        query: dict[str, str] | None = None,
    ) -> Json:
        if query:
            path = f"{path}?{urlencode(query)}"
        payload = json.dumps(body).encode() if body is not None else None
        headers = {"Accept": "application/json"}
        if payload is not None:
            headers["Content-Type"] = content_type
        for attempt in (1, 2):  # a kept-alive connection the server closed: reconnect once
            conn = self._connection()
            try:
                conn.request(method, path, body=payload, headers=headers)
                response = conn.getresponse()
                data = response.read().decode()
                break
            except (http.client.HTTPException, OSError):
                conn.close()
                self._local.conn = None
                if attempt == 2:
                    raise
        if response.status >= 400:
            raise ApiError(response.status, data)
        if not data:
            return {}
        if not response.getheader("Content-Type", "").startswith("application/json"):
            return {"text": data}  # /readyz and friends answer in plain words
        return dict(json.loads(data))

    def get(self, path: str) -> Json | None:
        try:
            return self.request("GET", path)
        except ApiError as error:
            if error.status == 404:
                return None
            raise

    def list(self, path: str, **query: str) -> list[Json]:
        return list(self.request("GET", path, query=query or None).get("items") or [])

    def create(self, path: str, obj: Json) -> Json:
        return self.request("POST", path, obj)

    def merge_patch(self, path: str, patch: Json, *, status: bool = False) -> Json:
        return self.request(
            "PATCH",
            f"{path}/status" if status else path,
            patch,
            content_type="application/merge-patch+json",
        )

    def delete(self, path: str) -> None:
        try:
            self.request("DELETE", path)
        except ApiError as error:
            if error.status != 404:
                raise

    def run_kubectl(
        self, *args: str, stdin: str | None = None, timeout: float = 120
    ) -> subprocess.CompletedProcess[str]:
        """kubectl as a user runs it against this API server: its exit code and output."""
        return subprocess.run(
            [str(self.kubectl_binary), "--kubeconfig", str(self.config.path), *args],
            input=stdin,
            capture_output=True,
            text=True,
            timeout=timeout,
        )

    def kubectl(
        self, *args: str, stdin: str | None = None, check: bool = True, timeout: float = 120
    ) -> str:
        result = self.run_kubectl(*args, stdin=stdin, timeout=timeout)
        if check and result.returncode != 0:
            raise RuntimeError(f"kubectl {' '.join(args)}: {result.stderr.strip()}")
        return result.stdout


def write_kubeconfig(
    path: Path, *, server: str, ca: Path, cert: Path, key: Path, embed: bool = False
) -> Kubeconfig:
    """A kubeconfig for one user on one server; `embed` inlines the files (for a Secret)."""
    import base64

    def ref(field: str, file: Path) -> dict[str, str]:
        if embed:
            return {f"{field}-data": base64.b64encode(file.read_bytes()).decode()}
        return {field: str(file)}

    config = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [
            {"name": "realcp", "cluster": {"server": server, **ref("certificate-authority", ca)}}
        ],
        "users": [
            {
                "name": "admin",
                "user": {**ref("client-certificate", cert), **ref("client-key", key)},
            }
        ],
        "contexts": [{"name": "realcp", "context": {"cluster": "realcp", "user": "admin"}}],
        "current-context": "realcp",
    }
    path.write_text(json.dumps(config, indent=2))
    return Kubeconfig(path, server, ca, cert, key)
