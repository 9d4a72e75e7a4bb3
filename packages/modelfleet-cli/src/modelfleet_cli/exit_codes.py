"""The exit codes of `modelfleet render` and `modelfleet simulate`, one meaning each (the
table in docs/cli.md is checked against this one)."""

from enum import IntEnum


class ExitCode(IntEnum):
    OK = 0
    """render: rendered. simulate: every XR Ready and every fault survived."""
    INPUT_ERROR = 1
    """The input cannot be rendered or simulated; one line on stderr says why."""
    USAGE = 2
    """A usage error: an unknown option or a bad option value (click's own code)."""
    ROUND_LIMIT = 3
    """simulate: the round limit was hit before every XR was Ready."""
    FAULT_NOT_SURVIVED = 4
    """simulate: a fault was not survived, or never took effect (nothing was tested)."""
