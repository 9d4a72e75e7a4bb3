"""Loopback stand-ins for what a cluster downloads from: a Hugging Face Hub (hub.py) and the
model images pushed to an OCI registry (modelcar.py), shared by the hydrator's tests and the
end-to-end suite."""
