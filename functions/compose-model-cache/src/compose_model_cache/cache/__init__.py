"""What a ModelCache composes: its ModelCacheShards, and the fleet's rows read back from them."""
