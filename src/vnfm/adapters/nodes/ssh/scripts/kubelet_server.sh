#!/bin/bash
# Point this node's kubelet at the API server ENDPOINT (address:port): the `server:` of its
# kubeconfig KUBELET_CONF rewritten and the kubelet restarted, when it named another one.
# Output: "@@ changed=true|false".
set -euo pipefail
: "${ENDPOINT:?}"
KUBELET_CONF=${KUBELET_CONF:-/etc/kubernetes/kubelet.conf}
[ -f "$KUBELET_CONF" ] || { echo "no kubelet kubeconfig at $KUBELET_CONF (not a node of the cluster)" >&2; exit 1; }
want="https://$ENDPOINT"
count=$(grep -cE '^[[:space:]]*server:' "$KUBELET_CONF" || true)
[ "$count" = 1 ] || { echo "$KUBELET_CONF names $count servers, expected one" >&2; exit 1; }
current=$(sed -nE 's/^[[:space:]]*server:[[:space:]]*//p' "$KUBELET_CONF")
if [ "$current" = "$want" ]; then echo "@@ changed=false"; exit 0; fi
tmp="$KUBELET_CONF.vnfm-new"
sed -E "s#^([[:space:]]*server:[[:space:]]*).*#\\1$want#" "$KUBELET_CONF" > "$tmp"
chmod --reference="$KUBELET_CONF" "$tmp"
mv -f "$tmp" "$KUBELET_CONF"
systemctl restart kubelet
echo "@@ changed=true"
