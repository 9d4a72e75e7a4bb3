"""Repository-wide pytest settings: hypothesis profiles shared by every suite.

`ci` (default) keeps property tests quick; `long` is the fuzzing profile
(MODELFLEET_FUZZ_PROFILE=long uv run pytest -m "not slow" -k property ...), see docs/reliability.md.
"""

import os

from hypothesis import HealthCheck, settings

settings.register_profile(
    "ci", max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.register_profile(
    "long", max_examples=10_000, deadline=None, suppress_health_check=list(HealthCheck)
)
settings.load_profile(os.environ.get("MODELFLEET_FUZZ_PROFILE", "ci"))
