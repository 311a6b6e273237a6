#!/bin/bash
# Renew this control plane's kubeadm-managed certificates and kubeconfigs (admin.conf and, on
# kubeadm 1.29+, super-admin.conf included), then restart its control-plane static pods (not every
# component reloads certificates) and wait until the local API server answers /readyz with the new
# admin.conf. Kubespray keeps its kubeadm configuration in KUBEADM_CONFIG (given: passed as
# --config, as Kubespray's own k8s-certs-renew.sh does).
# Inputs: DEADLINE_S; KUBEADM_CONFIG (may be empty). Output: "@@ changed=true".
set -euo pipefail
: "${DEADLINE_S:?}"
args=(certs renew all)
if [ -n "${KUBEADM_CONFIG:-}" ]; then args+=(--config "$KUBEADM_CONFIG"); fi
kubeadm "${args[@]}" >&2
# The kubelet recreates static pods from /etc/kubernetes/manifests once their sandboxes are gone.
pods=$(crictl pods --namespace kube-system -q \
  --name 'kube-apiserver-|kube-controller-manager-|kube-scheduler-|etcd-' 2>/dev/null || true)
for p in $pods; do
  crictl stopp "$p" >/dev/null 2>&1 || true
  crictl rmp "$p" >/dev/null 2>&1 || true
done
export KUBECONFIG=/etc/kubernetes/admin.conf
end=$((SECONDS + ${DEADLINE_S%.*}))
until kubectl get --raw=/readyz --server=https://127.0.0.1:6443 --tls-server-name=kubernetes >/dev/null 2>&1; do
  if [ "$SECONDS" -ge "$end" ]; then
    echo "the API server on this host did not answer /readyz within ${DEADLINE_S}s after the renewal" >&2
    exit 1
  fi
  sleep 1
done
echo "@@ changed=true"
