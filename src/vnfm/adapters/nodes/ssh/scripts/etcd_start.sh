#!/bin/bash
# Start an etcd member unless it already runs. Inputs (shell variables set by the executor):
#   ETCD_NAME PEER_URL CLIENT_URL INITIAL_CLUSTER CLUSTER_STATE TOKEN DATA_DIR
# Output: "@@ changed=true|false", "@@ pid=N".
set -euo pipefail
: "${ETCD_NAME:?}" "${PEER_URL:?}" "${CLIENT_URL:?}" "${INITIAL_CLUSTER:?}" "${CLUSTER_STATE:?}" "${TOKEN:?}" "${DATA_DIR:?}"
pidfile=/run/vnfm/etcd.pid
member_dir="$DATA_DIR/$ETCD_NAME"

if [ -s "$pidfile" ] && kill -0 "$(cat "$pidfile")" 2>/dev/null \
   && grep -q -- "--name $ETCD_NAME " <<<"$(tr '\0' ' ' < "/proc/$(cat "$pidfile")/cmdline")"; then
  echo "@@ changed=false"
  echo "@@ pid=$(cat "$pidfile")"
  exit 0
fi

mkdir -p /run/vnfm "$DATA_DIR" /var/log/vnfm
chmod 700 "$DATA_DIR"
# the peer URL's host is where this member listens
listen_host=${PEER_URL#*://}; listen_host=${listen_host%:*}
client_port=${CLIENT_URL##*:}
nohup setsid etcd \
  --name "$ETCD_NAME" \
  --data-dir "$member_dir" \
  --listen-peer-urls "$PEER_URL" \
  --initial-advertise-peer-urls "$PEER_URL" \
  --listen-client-urls "$CLIENT_URL,http://127.0.0.1:$client_port" \
  --advertise-client-urls "$CLIENT_URL" \
  --initial-cluster "$INITIAL_CLUSTER" \
  --initial-cluster-state "$CLUSTER_STATE" \
  --initial-cluster-token "$TOKEN" \
  >"/var/log/vnfm/etcd-$ETCD_NAME.log" 2>&1 </dev/null &
pid=$!
echo "$pid" > "$pidfile"
# it must still be alive once it has bound its peer port (a bad flag makes it exit at once)
deadline=$((SECONDS + 10))
until grep -q ":$(printf '%04X' "${PEER_URL##*:}") 00000000:0000 0A" /proc/net/tcp /proc/net/tcp6 2>/dev/null; do
  if ! kill -0 "$pid" 2>/dev/null; then
    echo "etcd $ETCD_NAME exited at start (listen $listen_host):" >&2
    tail -n 20 "/var/log/vnfm/etcd-$ETCD_NAME.log" >&2
    rm -f "$pidfile"
    exit 1
  fi
  if [ "$SECONDS" -ge "$deadline" ]; then
    echo "etcd $ETCD_NAME did not open its peer port within 10 s" >&2
    exit 1
  fi
  sleep 0.02
done
echo "@@ changed=true"
echo "@@ pid=$pid"
