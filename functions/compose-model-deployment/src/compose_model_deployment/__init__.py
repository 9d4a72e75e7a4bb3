"""Crossplane composition function compose-model-deployment."""
