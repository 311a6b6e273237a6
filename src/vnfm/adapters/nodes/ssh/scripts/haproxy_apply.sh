#!/bin/bash
# Install an HAProxy configuration without dropping connections.
# Inputs: HAPROXY_CFG (the whole file) CFG_PATH PIDFILE DEADLINE_S.
# 1. the new file is validated with `haproxy -c`; a broken one is refused (exit 3) and the
#    running configuration and process are left alone;
# 2. identical to the installed one and HAProxy running: nothing to do;
# 3. swapped in with a rename; HAProxy (master-worker) is reloaded with USR2, and the script
#    waits for the new worker; old workers finish their connections; or HAProxy is started.
# Output: "@@ changed=true|false", "@@ action=none|reload|start", "@@ master_pid=N".
set -euo pipefail
: "${HAPROXY_CFG:?}" "${CFG_PATH:?}" "${PIDFILE:?}" "${DEADLINE_S:?}"
cfg_dir=$(dirname "$CFG_PATH")
mkdir -p "$cfg_dir" "$(dirname "$PIDFILE")"
new=$(mktemp "$cfg_dir/.haproxy.cfg.XXXXXX")
trap 'rm -f "$new"' EXIT
printf '%s\n' "$HAPROXY_CFG" > "$new"
chmod 644 "$new"

if ! check=$(haproxy -c -f "$new" 2>&1); then
  echo "haproxy rejected the new configuration; the running one is unchanged:" >&2
  printf '%s\n' "$check" | grep -v '^Configuration file is valid' | tail -n 20 >&2
  exit 3
fi

master=""
if [ -s "$PIDFILE" ] && kill -0 "$(head -n 1 "$PIDFILE")" 2>/dev/null; then
  master=$(head -n 1 "$PIDFILE")
fi
workers() { ps -o pid= --ppid "$1" 2>/dev/null | tr -d ' ' | sort; }
deadline=$((SECONDS + ${DEADLINE_S%.*}))

if [ -n "$master" ] && [ -f "$CFG_PATH" ] && cmp -s "$new" "$CFG_PATH"; then
  echo "@@ changed=false"
  echo "@@ action=none"
  echo "@@ master_pid=$master"
  exit 0
fi

mv -f "$new" "$CFG_PATH"
trap - EXIT

if [ -n "$master" ]; then
  before=$(workers "$master")
  kill -USR2 "$master"
  # the reload is done when the master has a worker that was not there before
  while :; do
    now=$(workers "$master")
    if [ -n "$(comm -13 <(printf '%s\n' "$before") <(printf '%s\n' "$now") | grep -v '^$' || true)" ]; then
      break
    fi
    if [ "$SECONDS" -ge "$deadline" ]; then
      echo "haproxy master $master started no new worker within ${DEADLINE_S}s after USR2" >&2
      exit 1
    fi
    sleep 0.02
  done
  echo "@@ changed=true"
  echo "@@ action=reload"
  echo "@@ master_pid=$master"
  exit 0
fi

rm -f "$PIDFILE"
haproxy -W -D -p "$PIDFILE" -f "$CFG_PATH"
while :; do
  if [ -s "$PIDFILE" ]; then
    master=$(head -n 1 "$PIDFILE")
    if [ -n "$(workers "$master")" ]; then break; fi
  fi
  if [ "$SECONDS" -ge "$deadline" ]; then
    echo "haproxy did not start a worker within ${DEADLINE_S}s" >&2
    exit 1
  fi
  sleep 0.02
done
echo "@@ changed=true"
echo "@@ action=start"
echo "@@ master_pid=$master"
