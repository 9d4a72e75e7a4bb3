"""Contracts shared by every Modelfleet function: one definition, imported by both sides."""
