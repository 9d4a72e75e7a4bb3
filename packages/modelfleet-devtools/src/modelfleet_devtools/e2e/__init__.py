"""A private, real Crossplane control plane for end-to-end tests.

Everything here starts real binaries (etcd, kube-apiserver, kube-controller-manager, Crossplane
core, provider-kubernetes, an OCI registry) as local processes on loopback ports, installs
Modelfleet as packages the way a platform team would, and plays the parts no binary here plays
(kubelet, Job and Deployment controllers) on the workload side.
"""
