#!/bin/bash
# Point this node's kubelet at ENDPOINT (the control-plane VIP) and restart it; wait (DEADLINE_S)
# for it to be active again. Inputs: ENDPOINT DEADLINE_S. Output: "@@ changed=true|false".
set -euo pipefail
: "${ENDPOINT:?}" "${DEADLINE_S:?}"
conf=/etc/kubernetes/kubelet.conf
[ -f "$conf" ] || { echo "$conf is missing: this node has not joined" >&2; exit 1; }
grep -Eq '^ *server: ' "$conf" || { echo "$conf names no API server" >&2; exit 1; }
if grep -Eq "^ *server: https://$ENDPOINT\$" "$conf"; then echo "@@ changed=false"; exit 0; fi
sed -i -E "s#^( *server: ).*#\\1https://$ENDPOINT#" "$conf"
systemctl restart kubelet
end=$((SECONDS + DEADLINE_S))
until systemctl is-active --quiet kubelet; do
  [ $SECONDS -lt $end ] || { echo "kubelet not active within ${DEADLINE_S}s" >&2; exit 1; }
  sleep 1
done
echo "@@ changed=true"
