"""A pytest plugin that audits every function call the test suite makes.

Registered from the repository's root conftest.py. For the whole session it:

- wraps `modelfleet_contracts.edge.runner.SafeRunner.run` (the one entry point every function
  goes through, in-process or behind gRPC) and sees each RunFunctionRequest and response;
- listens to every log record (a handler on the root logger; the `modelfleet` logger is
  opened down to DEBUG so nothing a function logs escapes the scan);
- takes text other tests hand it with `record_text(source, text)` (the `modelfleet` CLI
  runs functions in subprocesses, so CLI tests pass their output here), and whatever each
  test printed or logged as pytest captured it.

Secrets: responses (desired resources, XR status, conditions, events), log records and
recorded text are searched for every value in `modelfleet_devtools.secrets.TEST_TOKENS`,
as is and base64-encoded. Requests are searched too, but a token there was planted by the
test (a control-plane Secret among the observed or required resources) and only counted.

Validity: every desired composed resource of a response (an Object together with the
manifest it carries) is validated with `validation.validate_manifest`, cached by content
hash, when the request's inputs are ones an API server could hold: the XR valid against
its XRD, the status of every required Modelfleet resource (InferenceCluster,
ModelCache, ModelReplica) valid against its XRD, and the remote object every observed
provider-kubernetes Object echoes (`status.atProvider.manifest`, what the workload cluster's
API server returned) valid against its kind's schema; a v1 Secret's echo is not checked, as
provider-kubernetes rewrites its `data` (the `--sanitize-secrets` marker). Fuzzed inputs that
break an XRD would be refused by the API server, and an echo no API server returns is none
a function sees, so what a function composes for them is not held to the schemas (it must
only not crash or drop anything). Test fixtures often
give required resources without a spec (a function reads their status only), so only the
status is held to the schema there. An Observe-only Object's manifest names the remote
object and nothing else by design (the provider only reads it), so only its identity is
checked.

Any leak or invalid manifest fails the run at the end (exit status 1) with a list.
"""

import contextlib
import hashlib
import json
import logging
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest
from crossplane.function import resource
from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from modelfleet_contracts.api import GROUP
from modelfleet_contracts.edge import runner

from modelfleet_devtools.secrets import TEST_TOKENS, encodings
from modelfleet_devtools.validation import validate_manifest, validate_xr

# Write the figures as JSON to this path at the end of the session (for docs/reliability.md).
REPORT_ENV = "MODELFLEET_AUDIT_JSON"

_NEEDLES: list[tuple[str, bytes]] = [
    (name, form.encode()) for name, value in TEST_TOKENS.items() for form in encodings(value)
]


@dataclass
class Finding:
    """One problem: where it was seen (test and source) and what it is."""

    test: str
    source: str
    detail: str

    def __str__(self) -> str:
        return f"{self.test or '<outside a test>'} [{self.source}]: {self.detail}"


@dataclass
class Audit:
    """What the session has seen, and what was wrong with it."""

    current_test: str = ""
    paused: bool = False
    calls: int = 0
    messages: int = 0
    bytes_scanned: int = 0
    log_records: int = 0
    events: int = 0
    statuses: int = 0
    conditions: int = 0
    texts: int = 0
    planted_requests: int = 0
    leaks: list[Finding] = field(default_factory=list)
    responses_validated: int = 0
    responses_skipped_invalid_xr: int = 0
    manifests_validated: int = 0
    distinct_manifests: int = 0
    invalid: list[Finding] = field(default_factory=list)
    _manifest_errors: dict[bytes, list[str]] = field(default_factory=dict, repr=False)
    _xr_valid: dict[bytes, bool] = field(default_factory=dict, repr=False)

    # -- secrets -------------------------------------------------------------------------

    def _tokens_in(self, data: bytes) -> list[str]:
        self.messages += 1
        self.bytes_scanned += len(data)
        return sorted({name for name, needle in _NEEDLES if needle in data})

    def scan(self, source: str, data: bytes) -> list[str]:
        """Search output `data`; every token found is a leak."""
        found = self._tokens_in(data)
        for name in found:
            self.leaks.append(Finding(self.current_test, source, f"{name} value found"))
        return found

    def record_text(self, source: str, text: str) -> list[str]:
        self.texts += 1
        return self.scan(source, text.encode("utf-8", "surrogatepass"))

    def record_log(self, text: str) -> None:
        self.log_records += 1
        self.scan("log", text.encode("utf-8", "surrogatepass"))

    def record_call(self, name: str, req: fnv1.RunFunctionRequest, rsp: Any) -> None:
        """Scan one RunFunction exchange and validate what it composed."""
        self.calls += 1
        if self._tokens_in(req.SerializeToString()):
            self.planted_requests += 1
        if not isinstance(rsp, fnv1.RunFunctionResponse):
            return
        self.events += len(rsp.results)
        self.conditions += len(rsp.conditions)
        if "status" in rsp.desired.composite.resource.fields:
            self.statuses += 1
        self.scan(f"{name} response", rsp.SerializeToString())
        self.validate_response(name, req, rsp)

    # -- validity ------------------------------------------------------------------------

    def _cached_validity(self, struct: Any, check: Callable[[dict[str, Any]], bool]) -> bool:
        key = _digest(struct)
        if key not in self._xr_valid:
            try:
                self._xr_valid[key] = check(resource.struct_to_dict(struct))
            except Exception:  # a shape the validator cannot even read: no API server holds it
                self._xr_valid[key] = False
        return self._xr_valid[key]

    def _inputs_are_admissible(self, req: fnv1.RunFunctionRequest) -> bool:
        """The XR, and the status of every required Modelfleet resource, pass their XRDs."""
        if not self._cached_validity(req.observed.composite.resource, _valid_xr):
            return False
        if not all(
            self._cached_validity(item.resource, _valid_status)
            for bucket in req.required_resources.values()
            for item in bucket.items
        ):
            return False
        return all(
            self._cached_validity(echo, _valid_echo)
            for observed in req.observed.resources.values()
            if (echo := _echoed(observed.resource)) is not None
        )

    def validate_response(
        self, name: str, req: fnv1.RunFunctionRequest, rsp: fnv1.RunFunctionResponse
    ) -> None:
        composed = [(k, r.resource, _digest(r.resource)) for k, r in rsp.desired.resources.items()]
        # Manifests already known valid are valid whatever the inputs were: no need to ask
        # whether an API server would have admitted them (the costly part of the audit).
        known_valid = all(not self._manifest_errors.get(d, ["unseen"]) for _, _, d in composed)
        if not known_valid and not self._inputs_are_admissible(req):
            self.responses_skipped_invalid_xr += 1
            return
        self.responses_validated += 1
        for key, struct, digest in composed:
            self.manifests_validated += 1
            if digest in self._manifest_errors:
                continue
            self.distinct_manifests += 1
            manifest = resource.struct_to_dict(struct)
            try:
                errors = _manifest_errors(manifest)
            except Exception as exc:  # the validator itself failing is a finding, not a crash
                errors = [f"validator raised {type(exc).__name__}: {exc}"]
            self._manifest_errors[digest] = errors
            for error in errors:
                self.invalid.append(Finding(self.current_test, f"{name} {key}", error))

    # -- report --------------------------------------------------------------------------

    @property
    def failed(self) -> bool:
        return bool(self.leaks or self.invalid)

    def figures(self) -> dict[str, int]:
        return {
            "function_calls": self.calls,
            "messages_scanned": self.messages,
            "bytes_scanned": self.bytes_scanned,
            "log_records": self.log_records,
            "events": self.events,
            "conditions": self.conditions,
            "statuses": self.statuses,
            "texts_recorded": self.texts,
            "requests_with_planted_token": self.planted_requests,
            "leaks": len(self.leaks),
            "responses_validated": self.responses_validated,
            "responses_skipped_invalid_xr": self.responses_skipped_invalid_xr,
            "manifests_validated": self.manifests_validated,
            "distinct_manifests_validated": self.distinct_manifests,
            "invalid_manifests": len(self.invalid),
        }

    def summary_lines(self, limit: int = 30) -> list[str]:
        f = self.figures()
        lines = [
            f"secrets: {f['messages_scanned']} messages / {f['bytes_scanned']} bytes scanned "
            f"({f['function_calls']} calls, {f['log_records']} log records, {f['events']} events, "
            f"{f['statuses']} statuses, {f['texts_recorded']} texts; "
            f"{f['requests_with_planted_token']} requests carried a planted token): "
            f"{f['leaks']} leak(s)",
            f"validity: {f['manifests_validated']} composed manifests validated "
            f"({f['distinct_manifests_validated']} distinct) from {f['responses_validated']} "
            f"responses; {f['responses_skipped_invalid_xr']} responses to inputs an API server "
            f"would refuse not held to the schemas: {f['invalid_manifests']} error(s)",
        ]
        for title, findings in (("LEAKED", self.leaks), ("INVALID", self.invalid)):
            for finding in findings[:limit]:
                lines.append(f"  {title} {finding}")
            if len(findings) > limit:
                lines.append(f"  ... and {len(findings) - limit} more {title.lower()}")
        return lines


def _digest(struct: Any) -> bytes:
    """A content hash of a protobuf Struct (deterministic serialisation)."""
    return hashlib.blake2b(struct.SerializeToString(deterministic=True), digest_size=16).digest()


def _valid_xr(xr: dict[str, Any]) -> bool:
    return not validate_xr(xr)


def _valid_status(obj: dict[str, Any]) -> bool:
    """A required resource's status is one its XRD admits (non-Modelfleet kinds pass)."""
    if not str(obj.get("apiVersion", "")).startswith(f"{GROUP}/"):
        return True
    # validate_manifest labels errors "<Kind> <name>: <path>: <message>".
    return not any(": status" in error for error in validate_manifest(obj))


def _echoed(obj: Any) -> Any:
    """The Struct at an observed resource's `status.atProvider.manifest`, if there is one."""
    value = obj
    for key in ("status", "atProvider", "manifest"):
        fields = value.fields
        if key not in fields or not fields[key].HasField("struct_value"):
            return None
        value = fields[key].struct_value
    return value


def _valid_echo(manifest: dict[str, Any]) -> bool:
    """A remote object as a workload cluster's API server returns it (a Secret passes)."""
    if manifest.get("apiVersion") == "v1" and manifest.get("kind") == "Secret":
        return True
    return not validate_manifest(manifest)


def _manifest_errors(manifest: dict[str, Any]) -> list[str]:
    errors = validate_manifest(manifest)
    spec = manifest.get("spec")
    if manifest.get("kind") != "Object" or not isinstance(spec, dict):
        return errors
    if spec.get("managementPolicies") != ["Observe"]:
        return errors
    # Observe-only: the remote manifest is an identity (the provider reads, never writes).
    errors = [e for e in errors if " -> " not in e]
    inner = (spec.get("forProvider") or {}).get("manifest") or {}
    for part in ("apiVersion", "kind"):
        if not inner.get(part):
            errors.append(f"Observe-only Object: manifest.{part} is required")
    if not (inner.get("metadata") or {}).get("name"):
        errors.append("Observe-only Object: manifest.metadata.name is required")
    return errors


AUDIT = Audit()


def record_text(source: str, text: str) -> list[str]:
    """Scan text produced outside this process (CLI output, rendered YAML) for test tokens.
    Returns the token names found; the run fails at the end if any were."""
    return AUDIT.record_text(source, text)


@contextlib.contextmanager
def paused() -> Iterator[None]:
    """Leave the session audit out of a block: only for tests that plant leaks on purpose
    to prove the auditor catches them (they use an `Audit` of their own)."""
    AUDIT.paused = True
    try:
        yield
    finally:
        AUDIT.paused = False


class _LogTap(logging.Handler):
    def __init__(self, audit: Audit) -> None:
        super().__init__(level=logging.NOTSET)
        self._audit = audit
        self.setFormatter(logging.Formatter("%(name)s %(levelname)s %(message)s"))

    def emit(self, record: logging.LogRecord) -> None:
        if self._audit.paused:
            return
        try:
            self._audit.record_log(self.format(record))
        except Exception:  # a log line the auditor cannot format must not break the test
            self.handleError(record)


def _audited(original: Callable[..., Any], audit: Audit) -> Callable[..., Any]:
    def run(self: runner.SafeRunner, req: fnv1.RunFunctionRequest) -> Any:
        rsp = original(self, req)
        if audit.paused:
            return rsp
        name = getattr(self, "_name", "function")
        try:
            audit.record_call(name, req, rsp)
        except Exception as exc:  # the auditor must never change what a test sees
            audit.invalid.append(
                Finding(audit.current_test, name, f"audit failed: {type(exc).__name__}: {exc}")
            )
        return rsp

    run.__wrapped__ = original  # type: ignore[attr-defined]
    return run


_installed: dict[str, Any] = {}


def pytest_configure(config: pytest.Config) -> None:
    if _installed:
        return
    _installed["run"] = runner.SafeRunner.run
    runner.SafeRunner.run = _audited(runner.SafeRunner.run, AUDIT)  # type: ignore[method-assign]
    tap = _LogTap(AUDIT)
    logging.getLogger().addHandler(tap)
    modelfleet_log = logging.getLogger("modelfleet")
    _installed["tap"] = tap
    _installed["level"] = modelfleet_log.level
    modelfleet_log.setLevel(logging.DEBUG)


def pytest_unconfigure(config: pytest.Config) -> None:
    if not _installed:
        return
    runner.SafeRunner.run = _installed.pop("run")  # type: ignore[method-assign]
    logging.getLogger().removeHandler(_installed.pop("tap"))
    logging.getLogger("modelfleet").setLevel(_installed.pop("level"))


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Any:
    AUDIT.current_test = item.nodeid
    try:
        return (yield)
    finally:
        AUDIT.current_test = ""


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    """What each test printed or logged (captured by pytest), CLI output included."""
    if AUDIT.paused:
        return
    for title, text in report.sections:
        AUDIT.texts += 1
        AUDIT.scan(f"{report.nodeid} {title}", text.encode("utf-8", "surrogatepass"))


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    path = os.environ.get(REPORT_ENV)
    if path:
        with open(path, "w") as out:
            json.dump(AUDIT.figures(), out, indent=2)
    if AUDIT.failed and session.exitstatus == pytest.ExitCode.OK:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if not AUDIT.calls and not AUDIT.texts:
        return
    if AUDIT.failed:
        terminalreporter.section("modelfleet audit FAILED", sep="=", red=True, bold=True)
    else:
        terminalreporter.section("modelfleet audit", sep="-")
    for line in AUDIT.summary_lines():
        terminalreporter.write_line(line)
