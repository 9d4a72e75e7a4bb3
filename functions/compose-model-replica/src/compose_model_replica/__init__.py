"""Crossplane composition function compose-model-replica."""
