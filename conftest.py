"""Repository-wide pytest settings: hypothesis profiles shared by every suite.

`ci` (default, 150 cases a property) keeps property tests quick and derandomized, so a gate
run is the same run every time; `long` (10,000 random cases a property) is the fuzzing
profile that explores, see docs/reliability.md:

    MODELFLEET_FUZZ_PROFILE=long uv run pytest functions -k fuzz --hypothesis-show-statistics

The audit plugin watches every function call of the session: no test token may leak into
a response, log, event, status or CLI output, and every manifest composed for a valid XR
must validate (see modelfleet_devtools/audit.py). Under CI (`CI=true`) a skipped test fails
the run unless .ci/allowed-skips.txt allows its reason (modelfleet_devtools/skip_guard.py).
"""

import os

from hypothesis import HealthCheck, settings

pytest_plugins = ["modelfleet_devtools.audit", "modelfleet_devtools.skip_guard"]

settings.register_profile(
    "ci",
    max_examples=150,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile(
    "long", max_examples=10_000, deadline=None, suppress_health_check=list(HealthCheck)
)
settings.load_profile(os.environ.get("MODELFLEET_FUZZ_PROFILE", "ci"))
