#!/bin/bash
# Restore SNAPSHOT (digest SHA256) into DATA_DIR as the only member NAME (PEER_URL) of a new etcd
# cluster, on a host where no etcd runs yet (no etcd static pod manifest MANIFEST): `etcdutl snapshot
# restore` (etcdctl on etcd 3.4), whose hash check refuses a corrupt snapshot. kubeadm init then
# starts etcd on it. No-op when DATA_DIR was restored from that digest.
# Output: "@@ changed=true|false".
set -euo pipefail
: "${SNAPSHOT:?}" "${SHA256:?}" "${NAME:?}" "${PEER_URL:?}" "${DATA_DIR:?}"
MANIFEST=${MANIFEST:-/etc/kubernetes/manifests/etcd.yaml}
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
trap 'rm -rf -- "$fresh"' EXIT
rm -rf -- "$fresh"
restore=(etcdctl snapshot restore)  # etcd 3.4; etcdutl from 3.5 on
if command -v etcdutl >/dev/null; then restore=(etcdutl snapshot restore); fi
ETCDCTL_API=3 "${restore[@]}" "$SNAPSHOT" --name "$NAME" --initial-cluster "$NAME=$PEER_URL" \
  --initial-advertise-peer-urls "$PEER_URL" --initial-cluster-token vnfm-etcd-restore --data-dir "$fresh" >/dev/null
# the marker first: a retry after a crash between the two lines restores again instead of refusing
printf '%s' "$SHA256" > "$marker"
rm -rf -- "$DATA_DIR/member"
install -d -m 0700 "$DATA_DIR"
mv "$fresh/member" "$DATA_DIR/member"
echo "@@ changed=true"
