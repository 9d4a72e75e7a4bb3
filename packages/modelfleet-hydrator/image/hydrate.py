"""The hydration Job's entry point in the image, where its command names it
(modelfleet_contracts.hydration.SCRIPT_PATH_IN_IMAGE): the package sits beside it."""

import sys

from modelfleet_hydrator.hydrate import main

if __name__ == "__main__":
    sys.exit(main())
