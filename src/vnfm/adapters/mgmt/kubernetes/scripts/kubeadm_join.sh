#!/bin/bash
# Join this host as a worker or control plane. Secrets (env): TOKEN CERT_KEY.
# Inputs: NODE ADVERTISE ENDPOINT CA_HASH CONTROL_PLANE (0|1). Output: "@@ changed=true|false".
set -euo pipefail
: "${NODE:?}" "${ADVERTISE:?}" "${ENDPOINT:?}" "${CA_HASH:?}" "${CONTROL_PLANE:?}" "${TOKEN:?}"
if [ -f /etc/kubernetes/kubelet.conf ] && systemctl is-active --quiet kubelet; then
  unset TOKEN CERT_KEY; echo "@@ changed=false"; exit 0
fi
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
chmod 700 "$work"
(umask 077
cat > "$work/join.yaml" <<CFG
apiVersion: kubeadm.k8s.io/v1beta3
kind: JoinConfiguration
discovery:
  bootstrapToken:
    apiServerEndpoint: "$ENDPOINT"
    token: "$TOKEN"
    caCertHashes: ["$CA_HASH"]
nodeRegistration:
  name: "$NODE"
  criSocket: unix:///run/containerd/containerd.sock
CFG
if [ "$CONTROL_PLANE" = 1 ]; then
  cat >> "$work/join.yaml" <<CFG
controlPlane:
  certificateKey: "${CERT_KEY:?}"
  localAPIEndpoint:
    advertiseAddress: "$ADVERTISE"
    bindPort: 6443
CFG
fi)
unset TOKEN CERT_KEY
# on failure show kubeadm's own words, with anything shaped like a bootstrap token or a
# certificate key masked (dropping every line that mentions "token" hid the reason)
kubeadm join --config "$work/join.yaml" >"$work/join.log" 2>&1 || {
  sed -E 's/[a-z0-9]{6}\.[a-z0-9]{16}/<token>/g; s/[a-f0-9]{64}/<redacted>/g' "$work/join.log" | tail -20 >&2
  exit 1
}
echo "@@ changed=true"
