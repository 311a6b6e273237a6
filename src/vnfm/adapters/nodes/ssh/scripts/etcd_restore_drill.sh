#!/bin/bash
# On a control plane: the restore drill of the etcd snapshot at SNAPSHOT (digest SHA256). It is
# restored into a throw-away data directory (`etcdutl snapshot restore` on etcd >= 3.5, etcdctl on
# 3.4), the restored backend's key count (snapshot status totalKey) must be KEYS, then a scratch etcd
# (loopback, client PORT, peer PORT+1) starts from it and must answer at REVISION. The scratch etcd
# is stopped and its directory removed whatever happens; the cluster's etcd is never touched.
# The etcd programs: PATH, else the running etcd's (lib/etcd_tools.sh: a stock kubeadm master's
# static pod). Inputs: SNAPSHOT SHA256 KEYS REVISION PORT.
# Output: "@@ keys=", "@@ live_keys=", "@@ revision=".
set -euo pipefail
: "${SNAPSHOT:?}" "${SHA256:?}" "${KEYS:?}" "${REVISION:?}" "${PORT:?}"
export ETCDCTL_API=3
[ -f "$SNAPSHOT" ] || { echo "no snapshot at $SNAPSHOT" >&2; exit 1; }
[ "$(sha256sum "$SNAPSHOT" | cut -d' ' -f1)" = "$SHA256" ] \
  || { echo "the snapshot at $SNAPSHOT is not the one expected (digest differs)" >&2; exit 1; }
# @include etcd_tools
etcd_bin=$(need_etcd_tool etcd)
etcdctl_bin=$(need_etcd_tool etcdctl)
util=$(etcd_tool etcdutl) || util=$etcdctl_bin
work=$(mktemp -d "${TMPDIR:-/var/tmp}/vnfm-etcd-drill.XXXXXX")
pid=""
cleanup() {
  if [ -n "$pid" ]; then kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; fi
  rm -rf -- "$work"
}
trap cleanup EXIT
client="http://127.0.0.1:$PORT"
peer="http://127.0.0.1:$((PORT + 1))"
"$util" snapshot restore "$SNAPSHOT" --name drill --data-dir "$work/data" --initial-cluster "drill=$peer" \
  --initial-advertise-peer-urls "$peer" --initial-cluster-token vnfm-drill >"$work/restore.log" 2>&1 \
  || { tail -n 5 "$work/restore.log" >&2; echo "the snapshot does not restore" >&2; exit 1; }
st=$("$util" snapshot status "$work/data/member/snap/db" -w json)
keys=$(printf '%s' "$st" | sed -nE 's/.*"totalKey":([0-9]+).*/\1/p')
[ "$keys" = "$KEYS" ] || { echo "the restored etcd holds $keys keys, the snapshot $KEYS" >&2; exit 1; }
"$etcd_bin" --name drill --data-dir "$work/data" --listen-client-urls "$client" --advertise-client-urls "$client" \
  --listen-peer-urls "$peer" --initial-advertise-peer-urls "$peer" --initial-cluster "drill=$peer" \
  >"$work/etcd.log" 2>&1 &
pid=$!
end=$((SECONDS + 30))
until "$etcdctl_bin" --endpoints="$client" --dial-timeout=2s endpoint health >/dev/null 2>&1; do
  kill -0 "$pid" 2>/dev/null || { tail -n 5 "$work/etcd.log" >&2; echo "the scratch etcd exited" >&2; exit 1; }
  [ "$SECONDS" -lt "$end" ] || { echo "the scratch etcd did not answer within 30s" >&2; exit 1; }
  sleep 0.2
done
rev=$("$etcdctl_bin" --endpoints="$client" endpoint status -w json | sed -nE 's/.*"revision":([0-9]+).*/\1/p')
[ "$rev" = "$REVISION" ] || { echo "the scratch etcd is at revision $rev, the snapshot at $REVISION" >&2; exit 1; }
live=$("$etcdctl_bin" --endpoints="$client" get "" --prefix --keys-only --limit=1 -w json | sed -nE 's/.*"count":([0-9]+).*/\1/p')
echo "@@ keys=$keys"
echo "@@ live_keys=${live:-0}"
echo "@@ revision=$rev"
