"""`modelfleet-release`: build every image and package of a release and push them.

Images are made without a container engine or a base image from any registry: a Debian root
filesystem from Debian's packages (mmdebstrap), wheels pinned by hash in uv.lock, our code,
assembled and pushed with crane; packages with `crossplane xpkg build`.
"""
