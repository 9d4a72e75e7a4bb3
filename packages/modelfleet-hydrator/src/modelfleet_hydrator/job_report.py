"""How a hydration goes, told on the hydration Job itself, where provider-kubernetes sees it.

The hydrator patches a few annotations (HYDRATION_KEYS) on its own Job through the cluster's
API, with the token Kubernetes mounts for the Job's ServiceAccount (the cluster's
`modelfleet-hydrator`, composed once per workload namespace by compose-inference-cluster; a
Job an earlier release started runs under one named like it); its Role allows `get` and
`patch` on the namespace's Jobs and nothing else, and the hydrator only ever reads and patches
its own. provider-kubernetes copies the
Job, annotations included, into its Object's `status.atProvider.manifest`, which is what
compose-model-cache reads. The function, for its part, sets PINNED_REVISION on the Job: the
commit every cluster of the cache is to serve.

Reporting is best effort: without a mounted token, or when the API refuses, the hydration goes
on and says so once in its log; figures are never worth a failed download. Progress is sent
when it moved enough to matter (pacing.py), the final figures always. Standard library only.
"""

import contextlib
import json
import os
import ssl
import threading
import urllib.error
import urllib.request
from collections.abc import Callable
from pathlib import Path
from urllib.parse import quote

from modelfleet_contracts.hydration import (
    BYTES_DONE,
    BYTES_TOTAL,
    FILES_DONE,
    FILES_TOTAL,
    PINNED_REVISION,
    REVISION,
)

from modelfleet_hydrator.pacing import Pace

# What this Job writes (REVISION: the commit it resolved and fetches); PINNED_REVISION is
# set by compose-model-cache and read here.
HYDRATION_KEYS = (BYTES_DONE, BYTES_TOTAL, FILES_DONE, FILES_TOTAL, REVISION)

SERVICE_ACCOUNT_DIR = Path("/var/run/secrets/kubernetes.io/serviceaccount")
TERMINATION_LOG = Path("/dev/termination-log")
TIMEOUT = 10  # seconds per API call: a slow API server never stalls the download


class JobClient:
    """GET and merge-PATCH of one Job, the only calls its Role allows."""

    def __init__(self, api: str, namespace: str, job: str, token_file: Path, ca_file: Path):
        self.url = (
            f"{api.rstrip('/')}/apis/batch/v1/namespaces/{quote(namespace, safe='')}"
            f"/jobs/{quote(job, safe='')}"
        )
        self.token_file = token_file
        self.context = (
            ssl.create_default_context(cafile=str(ca_file)) if ca_file.is_file() else None
        )

    @classmethod
    def in_cluster(cls, job: str) -> "JobClient | None":
        """The client for `job` in the pod's own namespace, or None outside a cluster.
        MODELFLEET_KUBE_API and MODELFLEET_SERVICEACCOUNT_DIR point the tests at a loopback
        API server; a composed Job sets neither."""
        account = Path(os.environ.get("MODELFLEET_SERVICEACCOUNT_DIR") or SERVICE_ACCOUNT_DIR)
        host = os.environ.get("KUBERNETES_SERVICE_HOST", "")
        port = os.environ.get("KUBERNETES_SERVICE_PORT", "443")
        api = os.environ.get("MODELFLEET_KUBE_API") or (
            f"https://{f'[{host}]' if ':' in host else host}:{port}" if host else ""
        )
        if not (job and api and (account / "token").is_file()):
            return None
        namespace = (account / "namespace").read_text().strip()
        return cls(api, namespace, job, account / "token", account / "ca.crt")

    def _call(self, method: str, body: bytes | None = None) -> dict[str, object]:
        # The token is read per call: Kubernetes rotates the projected token file.
        headers = {"Authorization": f"Bearer {self.token_file.read_text().strip()}"}
        if body is not None:
            headers["Content-Type"] = "application/merge-patch+json"
        request = urllib.request.Request(self.url, data=body, method=method, headers=headers)
        with urllib.request.urlopen(request, timeout=TIMEOUT, context=self.context) as response:
            answer = json.loads(response.read() or b"{}")
        return answer if isinstance(answer, dict) else {}

    def annotations(self) -> dict[str, str]:
        metadata = self._call("GET").get("metadata")
        found = metadata.get("annotations") if isinstance(metadata, dict) else None
        return {str(k): str(v) for k, v in found.items()} if isinstance(found, dict) else {}

    def annotate(self, values: dict[str, str]) -> None:
        self._call("PATCH", json.dumps({"metadata": {"annotations": values}}).encode())


class Reporter:
    """Sends figures to the Job when they are worth it (`pace`); logs a failure once and
    carries on."""

    def __init__(
        self, client: JobClient | None, log: Callable[[str], None], pace: Pace | None = None
    ) -> None:
        self.client = client
        self.log = log
        self.pace = pace or Pace()
        self.sent: dict[str, str] = {}
        self.failed = False
        if client is None:
            log("no Kubernetes API or ServiceAccount token here; progress is not reported")

    def pinned_revision(self) -> str:
        """The commit the function pinned for this cache ("" when none, or unknown)."""
        if self.client is None:
            return ""
        try:
            return self.client.annotations().get(PINNED_REVISION, "")
        except (OSError, ValueError) as exc:
            self._failed(exc)
            return ""

    def send(self, values: dict[str, str], *, final: bool = False) -> None:
        """Patch what changed of `values`, if worth it; `final`: the last figures of this
        attempt, always sent when they changed."""
        changed = {k: v for k, v in values.items() if self.sent.get(k) != v}
        if self.client is None or not changed:
            return
        if not (final or self.pace.worth(self.sent, values)):
            return  # held back: a later figure carries it, and the final one always goes
        try:
            self.client.annotate(changed)
            self.sent.update(changed)
            self.pace.sent()
        except (OSError, ValueError) as exc:
            self._failed(exc)

    def _failed(self, exc: Exception) -> None:
        if isinstance(exc, urllib.error.HTTPError):
            exc.close()
        if not self.failed:
            self.log(f"cannot report progress to the Job ({type(exc).__name__}: {exc}); going on")
        self.failed = True


def figures(bytes_done: int, bytes_total: int, files_done: int, files_total: int) -> dict[str, str]:
    """The progress annotations, as the function reads them."""
    return {
        BYTES_DONE: str(bytes_done),
        BYTES_TOTAL: str(bytes_total),
        FILES_DONE: str(files_done),
        FILES_TOTAL: str(files_total),
    }


class Watcher(threading.Thread):
    """Measures the staging directory every `every` seconds and reports what it finds; when
    stopped, reports the last measure as final."""

    def __init__(
        self, reporter: Reporter, measure: Callable[[], dict[str, str]], every: float
    ) -> None:
        super().__init__(name="progress", daemon=True)
        self.reporter = reporter
        self.measure = measure
        self.every = every
        self.stopped = threading.Event()

    def run(self) -> None:
        while not self.stopped.wait(self.every):
            self.reporter.send(self.measure())

    def stop(self) -> None:
        self.stopped.set()
        self.join(timeout=TIMEOUT + 1)
        self.reporter.send(self.measure(), final=True)


def termination_message(record: dict[str, object], path: Path = TERMINATION_LOG) -> None:
    """The final figures as the pod's termination message (`kubectl describe pod`). Kubernetes
    creates the file in every container; elsewhere (a test, a laptop) nothing is written."""
    if path.is_file():
        with contextlib.suppress(OSError):
            path.write_text(json.dumps(record, sort_keys=True)[:4000])
