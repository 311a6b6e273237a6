#!/bin/bash
# Initialise the first control plane with kubeadm and install the CNI (pinned CNI_VERSION).
# Inputs: NODE ADVERTISE ENDPOINT POD_CIDR SVC_CIDR K8S_VERSION CERT_SANS (comma list) CNI_VERSION;
# EXISTING_ETCD=1: on an etcd data directory restored from a snapshot (etcd_restore_member.sh), as
# kubeadm's restore does it (the CA files in /etc/kubernetes/pki are kept by kubeadm).
# Output: "@@ changed=true|false". Waits for the API server with a deadline (DEADLINE_S).
set -euo pipefail
: "${NODE:?}" "${ADVERTISE:?}" "${ENDPOINT:?}" "${POD_CIDR:?}" "${SVC_CIDR:?}" "${K8S_VERSION:?}"
CNI_VERSION=${CNI_VERSION:-v3.28.1}
DEADLINE_S=${DEADLINE_S:-300}
export KUBECONFIG=/etc/kubernetes/admin.conf
if [ -f "$KUBECONFIG" ] && kubectl get node "$NODE" >/dev/null 2>&1; then
  echo "@@ changed=false"; exit 0
fi
if [ -f /etc/kubernetes/manifests/kube-apiserver.yaml ]; then
  echo "a partial control plane exists on this host; run 'kubeadm reset' before retrying" >&2; exit 1
fi
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
sans=""
IFS=',' read -r -a arr <<< "${CERT_SANS:-}"
for s in "${arr[@]}"; do [ -n "$s" ] && sans="$sans    - \"$s\""$'\n'; done
cat > "$work/kubeadm.yaml" <<CFG
apiVersion: kubeadm.k8s.io/v1beta3
kind: InitConfiguration
localAPIEndpoint:
  advertiseAddress: "$ADVERTISE"
  bindPort: 6443
nodeRegistration:
  name: "$NODE"
  criSocket: unix:///run/containerd/containerd.sock
---
apiVersion: kubeadm.k8s.io/v1beta3
kind: ClusterConfiguration
kubernetesVersion: "v$K8S_VERSION"
controlPlaneEndpoint: "$ENDPOINT"
networking:
  podSubnet: "$POD_CIDR"
  serviceSubnet: "$SVC_CIDR"
apiServer:
  certSANs:
$sans
CFG
flags=(--config "$work/kubeadm.yaml" --upload-certs)
if [ "${EXISTING_ETCD:-0}" = 1 ]; then flags+=(--ignore-preflight-errors=DirAvailable--var-lib-etcd); fi
kubeadm init "${flags[@]}" >"$work/init.log" 2>&1 || { tail -20 "$work/init.log" >&2; exit 1; }
end=$((SECONDS + DEADLINE_S))
until kubectl get --raw /readyz >/dev/null 2>&1; do
  [ $SECONDS -lt $end ] || { echo "API server not ready within ${DEADLINE_S}s" >&2; exit 1; }
  sleep 2
done
kubectl apply -f "https://raw.githubusercontent.com/projectcalico/calico/${CNI_VERSION}/manifests/calico.yaml" >/dev/null
kubectl -n kube-system set env daemonset/calico-node CALICO_IPV4POOL_CIDR="$POD_CIDR" >/dev/null
echo "@@ changed=true"
