import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
# Test helper modules (hydrator_world.py, oci_world.py) sit beside the tests; cache_world.py,
# beside compose-model-cache's, composes the Job whose exact command these tests run.
sys.path.insert(0, str(HERE))
sys.path.insert(1, str(HERE.parents[2] / "functions/compose-model-cache/tests"))
