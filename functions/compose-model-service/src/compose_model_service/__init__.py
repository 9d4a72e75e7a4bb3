"""compose-model-service: one model name across the fleet, split by weight over ModelDeployments."""
