"""Who wrote what while a cache staged: the audit log's window, summed by client."""

import json
from datetime import UTC, datetime

import pytest
from modelfleet_devtools.e2e.scale_audit import POLICY, AuditLog, who_wrote, writes_between

PROVIDER = "provider-kubernetes/v0.0.0 (linux/amd64) kubernetes/$Format"
CROSSPLANE = "crossplane/v2.3.4 (linux/amd64) kubernetes/$Format"
START = datetime(2026, 11, 28, 23, 0, 0, tzinfo=UTC)
END = datetime(2026, 11, 28, 23, 5, 0, tzinfo=UTC)


def event(at: str, agent: str, verb: str, resource: str, code: int = 200, sub: str = "") -> str:
    ref = {"resource": resource, "name": "o"} | ({"subresource": sub} if sub else {})
    return json.dumps(
        {
            "requestReceivedTimestamp": f"2026-11-28T{at}Z",
            "userAgent": agent,
            "verb": verb,
            "objectRef": ref,
            "responseStatus": {"code": code},
        }
    )


@pytest.mark.parametrize(
    ("case", "lines", "writes", "conflicts"),
    [
        (
            "the provider's writes and Crossplane's apply are told apart",
            [
                event("23:01:00.000001", PROVIDER, "update", "objects"),
                event("23:01:01.5", CROSSPLANE, "patch", "objects"),
            ],
            {
                ("provider-kubernetes", "update", "objects"): 1,
                ("crossplane", "patch", "objects"): 1,
            },
            {},
        ),
        (
            "a status write counts under its subresource, a refused one as a conflict too",
            [
                event("23:02:00.0", PROVIDER, "update", "objects", sub="status"),
                event("23:02:01.0", PROVIDER, "update", "objects", code=409, sub="status"),
            ],
            {("provider-kubernetes", "update", "objects/status"): 2},
            {("provider-kubernetes", "update", "objects/status"): 1},
        ),
        (
            "writes before the cache was applied or after it was Ready are not the staging's",
            [
                event("22:59:59.999999", PROVIDER, "update", "objects"),
                event("23:05:00.0", PROVIDER, "update", "objects"),
                event("23:04:59.9", PROVIDER, "create", "events"),
            ],
            {("provider-kubernetes", "create", "events"): 1},
            {},
        ),
    ],
)
def test_writes_in_the_staging_window(case, lines, writes, conflicts):
    counted, refused = writes_between(lines, START, END)
    assert dict(counted) == writes, case
    assert dict(refused) == conflicts, case


def test_the_summary_is_per_staging_busiest_first_with_its_conflicts(tmp_path):
    log = tmp_path / "audit.log"
    lines = [event("23:01:00.0", PROVIDER, "update", "objects", code=409)] * 10
    lines += [event("23:01:00.0", CROSSPLANE, "patch", "objects")] * 30
    log.write_text("\n".join(lines) + "\n")
    said = who_wrote(log, START, END, per=10)
    assert said == (
        "crossplane patch objects 3.00, "
        "provider-kubernetes update objects 1.00 (1.00 refused as conflicts)"
    )


def test_the_api_server_is_told_to_log_writes_only(tmp_path):
    audit = AuditLog.under(tmp_path / "audit")
    flags = audit.apiserver_flags()
    assert flags[flags.index("--audit-log-path") + 1] == str(audit.log)
    # One file, never rotated: the summary reads only that one.
    assert int(flags[flags.index("--audit-log-maxsize") + 1]) >= 1_000_000
    assert json.loads(audit.policy.read_text()) == POLICY
    first, last = POLICY["rules"]
    assert set(first["verbs"]) == {"create", "update", "patch", "delete"}
    assert last == {"level": "None"}
