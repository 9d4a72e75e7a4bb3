"""The examples the e2e suite runs on the real control plane, and those it cannot run yet."""

from modelfleet_devtools.paths import EXAMPLES_DIR

# Examples whose real run the harness cannot make what simulate shows yet, and why; each is
# named in docs/development.md as not yet checked on the real control plane.
NOT_YET_PLAYED = {
    "canary": "its clusters' Gateways need a gateway controller, and its simulation.yaml edits "
    "the ModelService mid-run; the harness plays neither for an example yet "
    "(tests/e2e/test_routes_real.py checks routes on the real control plane)",
}
ALL_EXAMPLES = sorted(
    p.name for p in EXAMPLES_DIR.iterdir() if p.is_dir() and any(p.glob("*.yaml"))
)
PLAYED_EXAMPLES = [e for e in ALL_EXAMPLES if e not in NOT_YET_PLAYED]
