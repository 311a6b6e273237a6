#!/bin/bash
# One owner's part of an external load balancer's HAProxy configuration (LbFrontends).
# Inputs: CONF_DIR MAIN_CFG MAIN_TEXT OWNER OWNER_TEXT (empty: the owner's part goes) PORTS
# (the owner's frontend ports, space-separated) PIDFILE DEADLINE_S.
# Layout: MAIN_CFG holds the global settings; CONF_DIR/<owner>.cfg is each owner's part; HAProxy
# runs as `haproxy -W -D -p PIDFILE -f MAIN_CFG -f CONF_DIR` (files of CONF_DIR in lexical order).
# 1. under a lock on CONF_DIR/.lock (one change at a time), a port bound in another file is
#    refused (exit 4), nothing changed;
# 2. files identical to the wanted ones and HAProxy running with them (CONF_DIR/.active, the digest
#    of what the last activation loaded): nothing to do (no reload);
# 3. the files are swapped in and the whole configuration is checked with `haproxy -c`; a broken
#    one is refused (exit 3) and the previous files are restored: never activated;
# 4. HAProxy (master-worker) reloads with USR2 (new worker takes the listeners over, old workers
#    finish their connections), or is started when not running.
# Output: "@@ changed=true|false", "@@ action=none|reload|start|removed", "@@ master_pid=N".
set -euo pipefail
shopt -s nullglob
: "${CONF_DIR:?}" "${MAIN_CFG:?}" "${MAIN_TEXT:?}" "${OWNER:?}" "${PIDFILE:?}" "${DEADLINE_S:?}"
OWNER_TEXT=${OWNER_TEXT-}
PORTS=${PORTS-}
if ! command -v haproxy >/dev/null; then
  echo "haproxy is not installed on this host" >&2
  exit 1
fi
mkdir -p "$CONF_DIR" "$(dirname "$MAIN_CFG")" "$(dirname "$PIDFILE")"
deadline=$((SECONDS + ${DEADLINE_S%.*}))

exec 9>"$CONF_DIR/.lock"
if ! flock -w "${DEADLINE_S%.*}" 9; then
  echo "another change of $CONF_DIR did not finish within ${DEADLINE_S}s" >&2
  exit 1
fi
own="$CONF_DIR/$OWNER.cfg"

# 1. a port belongs to one owner only (bind lines of every other file, the main one included)
bound_ports() { awk '$1 == "bind" { n = split($2, a, ":"); print a[n] }' "$1"; }
for f in "$MAIN_CFG" "$CONF_DIR"/*.cfg; do
  if [ ! -f "$f" ] || [ "$f" = "$own" ]; then continue; fi
  taken=$(bound_ports "$f")
  clash=""
  for p in $PORTS; do
    if printf '%s\n' "$taken" | grep -qx -- "$p"; then clash="$clash $p"; fi
  done
  if [ -n "$clash" ]; then
    echo "port(s)$clash already served for owner $(basename "$f" .cfg) ($f); the configuration is unchanged" >&2
    exit 4
  fi
done

# 2. check: what differs from the wanted files
same() {  # same FILE TEXT: FILE exists with exactly TEXT
  [ -f "$1" ] && [ "$(cat "$1"; echo .)" = "${2}." ]
}
main_same=false; own_same=false
if same "$MAIN_CFG" "$MAIN_TEXT"; then main_same=true; fi
if [ -z "$OWNER_TEXT" ]; then
  [ -e "$own" ] || own_same=true
elif same "$own" "$OWNER_TEXT"; then
  own_same=true
fi

master=""
if [ -s "$PIDFILE" ] && kill -0 "$(head -n 1 "$PIDFILE")" 2>/dev/null; then
  master=$(head -n 1 "$PIDFILE")
  args=$(tr '\0' '\n' < "/proc/$master/cmdline")
  if ! printf '%s\n' "$args" | grep -qFx -- "$MAIN_CFG" || ! printf '%s\n' "$args" | grep -qFx -- "$CONF_DIR"; then
    echo "HAProxy (pid $master, $PIDFILE) runs another configuration than $MAIN_CFG + $CONF_DIR;" \
         "stop it or give this step its own pid file; nothing changed" >&2
    exit 5
  fi
fi
workers() { ps -o pid= --ppid "$1" 2>/dev/null | tr -d ' ' | sort; }

# what the running HAProxy loaded: a digest of every file, written after each activation (a
# reload that did not finish leaves it behind, so a re-run reloads again)
digest() { cat "$MAIN_CFG" "$CONF_DIR"/*.cfg | sha256sum | cut -d' ' -f1; }
active() { [ -n "$master" ] && [ -f "$CONF_DIR/.active" ] && [ "$(cat "$CONF_DIR/.active")" = "$(digest)" ]; }
activated() { digest > "$CONF_DIR/.active"; }

if $main_same && $own_same; then
  if active || { [ -z "$master" ] && ! compgen -G "$CONF_DIR/*.cfg" >/dev/null; }; then
    echo "@@ changed=false"
    echo "@@ action=none"
    echo "@@ master_pid=${master:-0}"
    exit 0
  fi
fi

# 3. act: swap the files in, keeping the previous ones until the whole configuration checks
backup=$(mktemp -d "$CONF_DIR/.previous.XXXXXX")
trap 'rm -rf "$backup"' EXIT
stage() {  # stage PATH TEXT NAME: install TEXT at PATH (empty TEXT: remove), previous one kept
  if [ -e "$1" ]; then cp -p "$1" "$backup/$3"; fi
  if [ -z "$2" ]; then
    rm -f "$1"
  else
    tmp=$(mktemp "$(dirname "$1")/.$(basename "$1").XXXXXX")
    printf '%s' "$2" > "$tmp"
    chmod 644 "$tmp"
    mv -f "$tmp" "$1"
  fi
}
restore() {  # restore PATH NAME
  if [ -e "$backup/$2" ]; then mv -f "$backup/$2" "$1"; else rm -f "$1"; fi
}
$main_same || stage "$MAIN_CFG" "$MAIN_TEXT" main
$own_same || stage "$own" "$OWNER_TEXT" own
if ! check=$(haproxy -c -f "$MAIN_CFG" -f "$CONF_DIR" 2>&1); then
  $main_same || restore "$MAIN_CFG" main
  $own_same || restore "$own" own
  echo "haproxy rejected the configuration with owner $OWNER's new part; the previous files are restored" \
       "and the running configuration is unchanged:" >&2
  printf '%s\n' "$check" | grep -v -e '^Configuration file is valid' -e '\[NOTICE\]' | tail -n 20 >&2
  exit 3
fi

# 4. activate
if [ -n "$master" ]; then
  before=$(workers "$master")
  kill -USR2 "$master"
  # the reload is done when the master has a worker that was not there before
  while [ -z "$(comm -13 <(printf '%s\n' "$before") <(workers "$master") | grep -v '^$' || true)" ]; do
    if [ "$SECONDS" -ge "$deadline" ]; then
      echo "haproxy master $master started no new worker within ${DEADLINE_S}s after USR2" >&2
      exit 1
    fi
    sleep 0.02
  done
  activated
  echo "@@ changed=true"
  echo "@@ action=reload"
  echo "@@ master_pid=$master"
  exit 0
fi
if ! compgen -G "$CONF_DIR/*.cfg" >/dev/null; then
  echo "@@ changed=true"  # the last owner left and HAProxy is not running: nothing to start
  echo "@@ action=removed"
  echo "@@ master_pid=0"
  exit 0
fi
rm -f "$PIDFILE"
haproxy -W -D -p "$PIDFILE" -f "$MAIN_CFG" -f "$CONF_DIR" 9>&-  # the daemon must not hold the lock
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
activated
echo "@@ changed=true"
echo "@@ action=start"
echo "@@ master_pid=$master"
