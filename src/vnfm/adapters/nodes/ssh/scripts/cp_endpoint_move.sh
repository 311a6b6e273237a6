#!/bin/bash
# Turn the only control plane of a kubeadm cluster into the first of an HA one: its endpoint moves
# to ENDPOINT (VIP:HAProxy port). kubeadm has no command for this (kubernetes/kubeadm#1955): the
# API server certificate is re-issued with CERT_SANS, kubeadm-config's controlPlaneEndpoint and
# certSANs are changed, the admin/super-admin/controller-manager/scheduler kubeconfigs and the
# kube-proxy and cluster-info ConfigMaps point at ENDPOINT, and the static pods restart.
# Inputs: ENDPOINT CERT_SANS (comma list) DEADLINE_S. Output: "@@ changed=true|false".
set -euo pipefail
: "${ENDPOINT:?}" "${CERT_SANS:?}" "${DEADLINE_S:?}"
K=/etc/kubernetes
export KUBECONFIG=$K/admin.conf
server="https://$ENDPOINT"
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
kubectl -n kube-system get configmap kubeadm-config -o jsonpath='{.data.ClusterConfiguration}' >"$work/cc.yaml"
if grep -qx "controlPlaneEndpoint: $ENDPOINT" "$work/cc.yaml" \
   && grep -q "server: $server\$" $K/admin.conf \
   && kubectl get --raw /readyz --server "$server" >/dev/null 2>&1; then
  echo "@@ changed=false"; exit 0
fi
# the new ClusterConfiguration: endpoint and SANs replaced (other keys kept as kubeadm wrote them)
{
  grep -v -e '^controlPlaneEndpoint:' "$work/cc.yaml" | sed 's/^apiServer: {}$/apiServer:/' | awk '
    /^apiServer:/ { print; print "  certSANs:"; insans = 1; skip = 0; next }
    insans && /^  certSANs:/ { skip = 1; next }
    skip && /^  - / { next }
    { skip = 0; if (!/^ /) insans = 0; print }'
  echo "controlPlaneEndpoint: $ENDPOINT"
} >"$work/cc.new"
IFS=',' read -r -a sans <<<"$CERT_SANS"
for ((i = ${#sans[@]} - 1; i >= 0; i--)); do  # each lands right below certSANs: last first keeps the order
  sed -i "/^  certSANs:\$/a\\  - \"${sans[i]}\"" "$work/cc.new"
done
# the API server certificate with the new SANs (kubeadm keeps a valid one otherwise)
mkdir -p "$work/old"
mv $K/pki/apiserver.crt $K/pki/apiserver.key "$work/old/"
if ! out=$(kubeadm init phase certs apiserver --config "$work/cc.new" 2>&1); then
  mv "$work/old/apiserver.crt" "$work/old/apiserver.key" $K/pki/
  printf 'kubeadm init phase certs apiserver failed:\n%s\n' "$out" | tail -10 >&2; exit 1
fi
for f in admin.conf super-admin.conf controller-manager.conf scheduler.conf; do
  if [ -f "$K/$f" ]; then sed -i -E "s#^( *server: ).*#\\1$server#" "$K/$f"; fi
done
# restart the static pods (the kubelet re-creates a pod whose manifest reappears)
mkdir -p "$work/manifests"
for m in kube-apiserver kube-controller-manager kube-scheduler; do
  if [ -f "$K/manifests/$m.yaml" ]; then mv "$K/manifests/$m.yaml" "$work/manifests/"; fi
done
[ -f "$work/manifests/kube-apiserver.yaml" ] || { echo "no kube-apiserver manifest: not a control plane" >&2; exit 1; }
end=$((SECONDS + DEADLINE_S))
while crictl ps -q --name 'kube-apiserver|kube-controller-manager|kube-scheduler' 2>/dev/null | grep -q .; do
  [ $SECONDS -lt $end ] || { mv "$work"/manifests/*.yaml $K/manifests/; echo "static pods did not stop" >&2; exit 1; }
  sleep 1
done
mv "$work"/manifests/*.yaml $K/manifests/
until kubectl get --raw /readyz --server "$server" >/dev/null 2>&1; do
  [ $SECONDS -lt $end ] || { echo "the API did not answer at $server within ${DEADLINE_S}s" >&2; exit 1; }
  sleep 1
done
kubeadm init phase upload-config kubeadm --config "$work/cc.new" >/dev/null
for cm in "kube-system kube-proxy kubeconfig.conf" "kube-public cluster-info kubeconfig"; do
  read -r ns name key <<<"$cm"
  kubectl -n "$ns" get configmap "$name" -o json >"$work/cm.json"
  python3 - "$work/cm.json" "$key" "$server" <<'PY'
import json, re, sys
path, key, server = sys.argv[1:]
cm = json.load(open(path))
cm["data"][key] = re.sub(r"(?m)^(\s*server: ).*$", lambda m: m.group(1) + server, cm["data"][key])
json.dump(cm, open(path, "w"))
PY
  kubectl replace -f "$work/cm.json" >/dev/null
done
kubectl -n kube-system rollout restart daemonset/kube-proxy >/dev/null
echo "@@ changed=true"
