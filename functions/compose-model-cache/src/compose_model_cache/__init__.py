"""Crossplane composition function compose-model-cache."""
