import sys
from pathlib import Path

# Test helper modules (cache_world.py) sit beside the tests.
sys.path.insert(0, str(Path(__file__).parent))
