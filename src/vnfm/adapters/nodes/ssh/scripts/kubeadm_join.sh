#!/bin/bash
# Join this host as a worker or control plane. Secrets (env): TOKEN CERT_KEY.
# Inputs: NODE ADVERTISE ENDPOINT CA_HASH CONTROL_PLANE (0|1). Output: "@@ changed=true|false".
set -euo pipefail
: "${NODE:?}" "${ADVERTISE:?}" "${ENDPOINT:?}" "${CA_HASH:?}" "${CONTROL_PLANE:?}" "${TOKEN:?}"
K=/etc/kubernetes
if [ -f $K/kubelet.conf ] && systemctl is-active --quiet kubelet; then
  unset TOKEN CERT_KEY; echo "@@ changed=false"; exit 0
fi
# Joined before (the TLS bootstrap wrote kubelet.conf) but the kubelet is down: start it again and
# wait for it (30 s deadline) rather than reset a node that may be serving.
if [ -f $K/kubelet.conf ] && [ ! -f $K/bootstrap-kubelet.conf ]; then
  systemctl restart kubelet || true
  deadline=$((SECONDS + 30))
  while [ "$SECONDS" -lt "$deadline" ]; do
    if systemctl is-active --quiet kubelet; then unset TOKEN CERT_KEY; echo "@@ changed=true"; exit 0; fi
    sleep 1
  done
fi
# Not joined. Leftovers of a join that failed halfway make kubeadm's preflight refuse a retry
# (FileAvailable/DirAvailable checks): kubelet.conf / bootstrap-kubelet.conf (kubelet-start phase),
# admin.conf and static pod manifests (control-plane-prepare). `kubeadm reset -f` removes them with
# the pki and kubelet state and stops the kubelet. It leaves the stacked etcd data directory when it
# finds no etcd manifest, which a control-plane join refuses (DirAvailable--var-lib-etcd), so that
# is emptied too. (The pki alone is not a marker: kubeadm writes it together with the files above.)
if [ -f $K/kubelet.conf ] || [ -f $K/bootstrap-kubelet.conf ] || [ -f $K/admin.conf ] \
   || [ -n "$(ls -A $K/manifests 2>/dev/null)" ]; then
  out=$(kubeadm reset -f 2>&1) || { printf 'kubeadm reset of a partial join failed:\n%s\n' "$out" | tail -10 >&2; exit 1; }
  if [ "$CONTROL_PLANE" = 1 ] && [ -d /var/lib/etcd ]; then find /var/lib/etcd -mindepth 1 -delete; fi
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
