"""What a ModelCacheShard composes: the cache staged on each of its clusters."""
