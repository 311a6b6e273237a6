#!/bin/bash
# Restore this control plane's etcd member from SNAPSHOT (digest SHA256): etcd is stopped (kubeadm's
# static pod: its manifest moved away; Kubespray's etcd_deployment_type host: the systemd unit
# `etcd`), `etcdutl snapshot restore` writes a fresh data directory as member NAME (PEER_URL) of
# INITIAL_CLUSTER, which replaces DATA_DIR, and etcd starts again.
# No-op when this member was restored as MARKER (the digest, and which restore of it: a rollback
# after the change was retried restores again). Output: "@@ changed=true|false".
set -euo pipefail
: "${SNAPSHOT:?}" "${SHA256:?}" "${NAME:?}" "${PEER_URL:?}" "${INITIAL_CLUSTER:?}" "${DATA_DIR:?}"
MARKER=${MARKER:-$SHA256}
marker=/etc/vnfm/etcd-restored
if [ -f "$marker" ] && [ "$(cat "$marker")" = "$MARKER" ]; then
  echo "@@ changed=false"; exit 0
fi
[ "$(sha256sum "$SNAPSHOT" | cut -d' ' -f1)" = "$SHA256" ] \
  || { echo "no snapshot with that digest at $SNAPSHOT" >&2; exit 1; }
# the restore program is found while etcd still runs (a stock kubeadm master has it only in the
# etcd static pod's image: lib/etcd_tools.sh)
# @include etcd_tools
# and copied out of /proc/<pid>/root, which goes with the static pod
restore_bin=$(etcd_tool etcdutl) || restore_bin=$(need_etcd_tool etcdctl)  # etcdutl from 3.5 on; etcd 3.4: etcdctl
tools=$(mktemp -d "${TMPDIR:-/var/tmp}/vnfm-etcd-tools.XXXXXX")
case $restore_bin in /proc/*) install -m 0755 "$restore_bin" "$tools/restore"; restore_bin=$tools/restore ;; esac
manifest=/etc/kubernetes/manifests/etcd.yaml
parked=/etc/kubernetes/etcd.yaml.vnfm-restore
fresh="$DATA_DIR.vnfm-restore"
# whatever happens from here on, the etcd static pod comes back (on the old data when the restore
# failed; a systemd etcd likewise) and no half-written data directory stays behind
unit=""
trap 'rm -rf -- "$fresh" "$tools"; if [ -f "$parked" ]; then mv -f "$parked" "$manifest"; fi; if [ -n "$unit" ]; then systemctl start "$unit" || true; fi' EXIT
if [ -f "$manifest" ]; then mv -f "$manifest" "$parked"; fi
if [ ! -f "$parked" ] && systemctl cat etcd.service >/dev/null 2>&1; then
  unit=etcd.service
  systemctl stop "$unit"
fi
# the kubelet stops the static pod once its manifest is gone
end=$((SECONDS + 120))
while crictl ps -q --name '^etcd$' 2>/dev/null | grep -q .; do
  [ "$SECONDS" -lt "$end" ] || { echo "etcd did not stop within 120s" >&2; exit 1; }
  sleep 1
done
rm -rf -- "$fresh"
"$restore_bin" snapshot restore "$SNAPSHOT" --name "$NAME" --initial-cluster "$INITIAL_CLUSTER" \
  --initial-advertise-peer-urls "$PEER_URL" --initial-cluster-token vnfm-etcd-restore --data-dir "$fresh" >/dev/null
rm -rf -- "$DATA_DIR.vnfm-old"
if [ -d "$DATA_DIR" ]; then mv "$DATA_DIR" "$DATA_DIR.vnfm-old"; fi
mv "$fresh" "$DATA_DIR"
# a systemd etcd (Kubespray) starts again here, so that a start that fails fails the step
if [ -n "$unit" ]; then systemctl start "$unit"; unit=""; fi
mkdir -p /etc/vnfm
printf '%s' "$MARKER" > "$marker"
echo "@@ changed=true"
