"""A loopback stand-in for a cluster's API server, as far as a hydration Job's reporting goes:
`get` and merge-`patch` of its one Job, with a bearer token. Anything else is refused (403),
stricter than the hydrator's Role (any Job of the namespace): the hydrator touches its own.
It records every patch, so a test can read the figures in the order they came.

Listens on 127.0.0.1 only and shuts itself down after `lifetime` seconds.
"""

import json
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

from modelfleet_devtools.loopback.server import LoopbackServer, handler_for

TOKEN = "loopback-test-token"  # not a secret: what this fake expects, written to a temp file


@dataclass
class JobRecord:
    namespace: str
    name: str
    annotations: dict[str, str] = field(default_factory=dict)
    patches: list[dict[str, str]] = field(default_factory=list)
    # What GET answers for the pinned-revision annotation, one per GET (last one repeats);
    # empty: whatever `annotations` holds.
    pins: list[str] = field(default_factory=list)
    gets: int = 0


class FakeKube(LoopbackServer):
    def __init__(self, job: JobRecord, *, lifetime: float = 600.0) -> None:
        self.job = job
        self.refused: list[str] = []
        self.lock = threading.Lock()
        super().__init__(handler_for(self.handle, ("GET", "PATCH", "PUT")), lifetime=lifetime)

    def service_account(self, directory: Path) -> Path:
        """A directory laid out like the one Kubernetes mounts into the pod (no CA: plain
        HTTP on loopback)."""
        directory.mkdir(parents=True, exist_ok=True)
        (directory / "token").write_text(TOKEN)
        (directory / "namespace").write_text(self.job.namespace)
        return directory

    def handle(self, h: BaseHTTPRequestHandler) -> None:
        path = f"/apis/batch/v1/namespaces/{self.job.namespace}/jobs/{self.job.name}"
        length = int(h.headers.get("Content-Length") or 0)
        body = h.rfile.read(length) if length else b""
        allowed = (
            h.headers.get("Authorization") == f"Bearer {TOKEN}"
            and h.path == path
            and (
                h.command == "GET"
                or (
                    h.command == "PATCH"
                    and h.headers.get("Content-Type") == "application/merge-patch+json"
                )
            )
        )
        if not allowed:
            with self.lock:
                self.refused.append(f"{h.command} {h.path}")
            return self.reply(h, 403, {"kind": "Status", "reason": "Forbidden"})
        with self.lock:
            job = self.job
            if h.command == "PATCH":
                values = json.loads(body)["metadata"]["annotations"]
                job.patches.append(dict(values))
                job.annotations.update(values)
            else:
                if job.pins:
                    pin = job.pins[min(job.gets, len(job.pins) - 1)]
                    job.annotations["hydration.modelfleet.io/pinned-revision"] = pin
                job.gets += 1
            answer = {
                "apiVersion": "batch/v1",
                "kind": "Job",
                "metadata": {
                    "name": job.name,
                    "namespace": job.namespace,
                    "annotations": dict(job.annotations),
                },
            }
        return self.reply(h, 200, answer)

    @staticmethod
    def reply(h: BaseHTTPRequestHandler, status: int, payload: dict[str, Any]) -> None:
        data = json.dumps(payload).encode()
        h.send_response(status)
        h.send_header("Content-Type", "application/json")
        h.send_header("Content-Length", str(len(data)))
        h.end_headers()
        h.wfile.write(data)
