#!/bin/bash
# Renew this control plane's kubeadm-managed certificates and kubeconfigs (admin.conf and, on
# kubeadm 1.29+, super-admin.conf included), then restart its control-plane static pods (not every
# component reloads certificates: their pod sandboxes are removed, the kubelet recreates them from
# /etc/kubernetes/manifests) and wait until the local API server answers /readyz with the new
# admin.conf AND serves the renewed certificate (its notAfter is the file's). Kubespray keeps its
# kubeadm configuration in KUBEADM_CONFIG (given: passed as --config, as Kubespray's own
# k8s-certs-renew.sh does).
# Inputs: DEADLINE_S; APISERVER_CERT (the API server's certificate file); KUBEADM_CONFIG (may be
# empty). Output: "@@ changed=true".
set -euo pipefail
: "${DEADLINE_S:?}" "${APISERVER_CERT:?}"
args=(certs renew all)
if [ -n "${KUBEADM_CONFIG:-}" ]; then args+=(--config "$KUBEADM_CONFIG"); fi
kubeadm "${args[@]}" >&2
pods=$(crictl pods --namespace kube-system -q \
  --name 'kube-apiserver-|kube-controller-manager-|kube-scheduler-|etcd-')
if [ -z "$pods" ]; then
  echo "crictl found no control-plane pod sandbox to restart: the renewed certificates would not be served" >&2
  exit 1
fi
for p in $pods; do
  crictl stopp "$p" >/dev/null
  crictl rmp "$p" >/dev/null
done
want=$(openssl x509 -noout -enddate -in "$APISERVER_CERT")
served() {
  openssl s_client -connect 127.0.0.1:6443 -servername kubernetes </dev/null 2>/dev/null \
    | openssl x509 -noout -enddate 2>/dev/null || true
}
export KUBECONFIG=/etc/kubernetes/admin.conf
end=$((SECONDS + ${DEADLINE_S%.*}))
until kubectl get --raw=/readyz --server=https://127.0.0.1:6443 --tls-server-name=kubernetes >/dev/null 2>&1 \
  && [ "$(served)" = "$want" ]; do
  if [ "$SECONDS" -ge "$end" ]; then
    echo "the API server on this host did not answer /readyz with the renewed certificate ($want) within" \
      "${DEADLINE_S}s" >&2
    exit 1
  fi
  sleep 1
done
echo "@@ changed=true"
