#!/bin/bash
# keepalived VRRP (unicast) holding VIP on the interface with LOCAL_ADDR, tracking HAProxy.
# Inputs: VIP LOCAL_ADDR PRIORITY PEERS (comma list) ROUTER_ID. Output "@@ changed=true|false".
set -euo pipefail
: "${VIP:?}" "${LOCAL_ADDR:?}" "${PRIORITY:?}" "${ROUTER_ID:?}"
command -v keepalived >/dev/null || DEBIAN_FRONTEND=noninteractive apt-get install -y -q keepalived >/dev/null
# (no early exit in the pipeline: under pipefail a reader that stops first fails it with SIGPIPE)
iface=$(ip -o -4 addr show | awk -v a="$LOCAL_ADDR" '{split($4, p, "/"); if (p[1] == a && !f) { print $2; f = 1 }}')
[ -n "$iface" ] || { echo "no interface has address $LOCAL_ADDR" >&2; exit 1; }
peers=""
IFS=',' read -r -a arr <<< "${PEERS:-}"
for p in "${arr[@]}"; do [ -n "$p" ] && peers="$peers    $p"$'\n'; done
cfg=$(mktemp); trap 'rm -f "$cfg"' EXIT
cat > "$cfg" <<CFG
# managed by vnfm: changes are overwritten
vrrp_script chk_haproxy {
  script "/usr/bin/pgrep -x haproxy"
  interval 2
  fall 2
  rise 1
}
vrrp_instance VNFM_K8S {
  state BACKUP
  interface $iface
  virtual_router_id $ROUTER_ID
  priority $PRIORITY
  advert_int 1
  unicast_src_ip $LOCAL_ADDR
  unicast_peer {
$peers  }
  virtual_ipaddress {
    $VIP
  }
  track_script {
    chk_haproxy
  }
}
CFG
if cmp -s "$cfg" /etc/keepalived/keepalived.conf && systemctl is-active --quiet keepalived; then
  echo "@@ changed=false"; exit 0
fi
install -D -m 0644 "$cfg" /etc/keepalived/keepalived.conf
systemctl enable keepalived >/dev/null 2>&1
systemctl reload-or-restart keepalived
echo "@@ changed=true"
