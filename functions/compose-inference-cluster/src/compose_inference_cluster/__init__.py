"""Crossplane composition function compose-inference-cluster."""
