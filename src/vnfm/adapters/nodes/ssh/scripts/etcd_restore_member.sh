#!/bin/bash
# Restore SNAPSHOT (digest SHA256) into DATA_DIR as the only member NAME (PEER_URL) of a new etcd
# cluster, on a host where no etcd runs yet (no etcd static pod manifest MANIFEST): `etcdutl snapshot
# restore` (etcdctl on etcd 3.4), whose hash check refuses a corrupt snapshot. kubeadm init then
# starts etcd on it. No-op when DATA_DIR was restored from that digest.
# etcdutl (or etcd 3.4's etcdctl) is taken from PATH; a stock kubeadm host has neither (etcd runs
# only inside its static pod, and none runs here yet), so it is then taken from the etcd image
# kubeadm lists for K8S_VERSION: pulled through the CRI (containerd's own registry mirrors and
# proxy apply, and kubeadm init finds the image pulled), mounted read-only with `ctr images
# mount`, its static /usr/local/bin/etcdutl run from the host, unmounted on exit.
# Output: "@@ changed=true|false".
set -euo pipefail
: "${SNAPSHOT:?}" "${SHA256:?}" "${NAME:?}" "${PEER_URL:?}" "${K8S_VERSION:?}" "${DATA_DIR:?}"
MANIFEST=${MANIFEST:-/etc/kubernetes/manifests/etcd.yaml}
CRI_SOCKET=${CRI_SOCKET:-unix:///run/containerd/containerd.sock}
marker="$DATA_DIR.vnfm-restored"
if [ -f "$marker" ] && [ "$(cat "$marker")" = "$SHA256" ] && [ -d "$DATA_DIR/member" ]; then
  echo "@@ changed=false"; exit 0
fi
[ ! -f "$MANIFEST" ] || { echo "an etcd member already runs on this host ($MANIFEST exists)" >&2; exit 1; }
if [ ! -f "$SNAPSHOT" ] || [ "$(sha256sum "$SNAPSHOT" | cut -d' ' -f1)" != "$SHA256" ]; then
  echo "no snapshot with that digest at $SNAPSHOT" >&2; exit 1
fi
if [ -d "$DATA_DIR/member" ] && [ ! -f "$marker" ]; then
  echo "$DATA_DIR already holds etcd data that was not restored by vnfm" >&2; exit 1
fi
fresh="$DATA_DIR.vnfm-restore"
mnt=""
cleanup() {
  rm -rf -- "$fresh"
  if [ -n "$mnt" ]; then
    ctr -n k8s.io images unmount --rm "$mnt" >/dev/null 2>&1 || true
    rmdir -- "$mnt" 2>/dev/null || true
  fi
}
trap cleanup EXIT
rm -rf -- "$fresh"
if command -v etcdutl >/dev/null; then
  restore=(etcdutl snapshot restore)
elif command -v etcdctl >/dev/null; then
  restore=(etcdctl snapshot restore)  # etcd 3.4
else
  for tool in kubeadm crictl ctr; do
    command -v "$tool" >/dev/null || { echo "no etcdutl on this host, and no $tool to take it from the etcd image" >&2; exit 1; }
  done
  image=$(kubeadm config images list --kubernetes-version "v$K8S_VERSION" 2>/dev/null | grep -m1 '/etcd:') || {
    echo "kubeadm lists no etcd image for Kubernetes $K8S_VERSION" >&2; exit 1; }
  crictl --runtime-endpoint "$CRI_SOCKET" pull "$image" >/dev/null
  mnt=$(mktemp -d /tmp/vnfm-etcd-image.XXXXXX)
  ctr -n k8s.io images mount "$image" "$mnt" >/dev/null
  restore=("$mnt/usr/local/bin/etcdutl" snapshot restore)
  [ -x "${restore[0]}" ] || { echo "the etcd image $image has no /usr/local/bin/etcdutl" >&2; exit 1; }
fi
ETCDCTL_API=3 "${restore[@]}" "$SNAPSHOT" --name "$NAME" --initial-cluster "$NAME=$PEER_URL" \
  --initial-advertise-peer-urls "$PEER_URL" --initial-cluster-token vnfm-etcd-restore --data-dir "$fresh" >/dev/null
# the marker first: a retry after a crash between the two lines restores again instead of refusing
printf '%s' "$SHA256" > "$marker"
rm -rf -- "$DATA_DIR/member"
install -d -m 0700 "$DATA_DIR"
mv "$fresh/member" "$DATA_DIR/member"
echo "@@ changed=true"
