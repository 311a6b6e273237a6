#!/bin/sh
# Placeholder install script of the example Kubernetes-cluster package.
#
# Instantiate requests name it in additionalParams.k8s_cluster_installation_param.script_path
# ("Scripts/install_k8s_cluster.sh"). vnfm itself never runs package content locally; the
# management driver decides what to run on the cluster's VMs.
set -eu
echo "install_k8s_cluster.sh: placeholder, nothing to do" >&2
exit 0
