#!/bin/bash
# On a control plane: an etcd snapshot at SNAPSHOT (etcdctl snapshot save), read back with
# `etcdutl snapshot status` (etcd 3.4: `etcdctl snapshot status`); at most KEEP snapshots are kept in its directory (oldest removed).
# An existing snapshot at SNAPSHOT that reads back is kept. Inputs: ENDPOINTS SNAPSHOT KEEP;
# optional exported ETCDCTL_CACERT/CERT/KEY. The etcd programs: PATH, else the running etcd's (lib/etcd_tools.sh).
# Output: "@@ changed=true|false", "@@ sha256=", "@@ size=", "@@ revision=", "@@ keys=".
set -euo pipefail
: "${ENDPOINTS:?}" "${SNAPSHOT:?}" "${KEEP:?}"
export ETCDCTL_API=3
dir=$(dirname "$SNAPSHOT")
install -d -m 0700 "$dir"
changed=false
# @include etcd_tools
etcdctl_bin=$(need_etcd_tool etcdctl)
# etcdutl (etcd >= 3.5) reads snapshots; etcd 3.4's etcdctl does it itself
util_bin=$(etcd_tool etcdutl) || util_bin=$etcdctl_bin
status() { "$util_bin" snapshot status "$1" -w json; }
if [ -f "$SNAPSHOT" ] && st=$(status "$SNAPSHOT" 2>/dev/null); then
  :
else
  tmp="$SNAPSHOT.part"
  rm -f "$tmp"
  "$etcdctl_bin" --endpoints="$ENDPOINTS" --dial-timeout=5s --command-timeout=300s snapshot save "$tmp" >/dev/null
  st=$(status "$tmp") || { rm -f "$tmp"; echo "the snapshot does not read back" >&2; exit 1; }
  chmod 0600 "$tmp"
  mv -f "$tmp" "$SNAPSHOT"
  changed=true
fi
# bounded: the newest KEEP snapshots stay
find "$dir" -maxdepth 1 -name '*.db' -printf '%T@ %p\n' | sort -rn | tail -n +$((KEEP + 1)) \
  | cut -d' ' -f2- | while IFS= read -r old; do rm -f -- "$old"; done
echo "@@ changed=$changed"
echo "@@ sha256=$(sha256sum "$SNAPSHOT" | cut -d' ' -f1)"
echo "@@ size=$(stat -c %s "$SNAPSHOT")"
echo "@@ revision=$(printf '%s' "$st" | sed -nE 's/.*"revision":([0-9]+).*/\1/p')"
echo "@@ keys=$(printf '%s' "$st" | sed -nE 's/.*"totalKey":([0-9]+).*/\1/p')"
