"""A real control plane to try things on by hand, with an example fleet applied if given.

    uv run python -m modelfleet_devtools.e2e.by_hand DIR [EXAMPLE]

It runs until stopped (SIGTERM or Ctrl-C), and stops what it started.
"""

import signal
import sys
import time
from pathlib import Path

from ..realcp import SHARED_REALCP_DIR
from .fleet import apply_fleet
from .stack import link_binaries, start_control_plane


def main(argv: list[str]) -> None:
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # stop what it started
    started = time.monotonic()
    work = Path(argv[0])
    plane = start_control_plane(link_binaries(work / "bin"), SHARED_REALCP_DIR, work)
    print(f"up in {time.monotonic() - started:.0f}s; kubeconfig {plane.client.config.path}")
    if len(argv) > 1:
        apply_fleet(plane, Path(argv[1]))
        print("applied", argv[1], flush=True)
    try:
        while True:
            time.sleep(5)
            plane.check_alive()
            plane.point_revisions()
    finally:
        plane.stop()


if __name__ == "__main__":
    main(sys.argv[1:])
