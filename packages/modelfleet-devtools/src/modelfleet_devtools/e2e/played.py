"""The examples the e2e suite runs on the real control plane, and those it cannot run yet."""

from modelfleet_devtools.paths import EXAMPLES_DIR

# Examples whose real run the harness cannot make what simulate shows yet, and why; each is
# named in docs/development.md as not yet checked on the real control plane.
NOT_YET_PLAYED = {
    "canary": "applied at once, clusters and deployments together, a deployment is placed on "
    "the clusters connected by then and stays there, so the real run can pack each revision "
    "onto one cluster where simulate spreads them; tests/e2e/test_canary_real.py plays it "
    "with the clusters registered first, its Gateways' controller played and its edits made",
}
ALL_EXAMPLES = sorted(
    p.name for p in EXAMPLES_DIR.iterdir() if p.is_dir() and any(p.glob("*.yaml"))
)
PLAYED_EXAMPLES = [e for e in ALL_EXAMPLES if e not in NOT_YET_PLAYED]
