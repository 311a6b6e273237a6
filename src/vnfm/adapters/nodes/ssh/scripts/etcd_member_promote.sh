#!/bin/bash
# Promote learner MEMBER_NAME to a voting member. etcd refuses until the learner is in sync with
# the leader ("can only promote a learner member which is in sync with leader"): retried until
# DEADLINE_S. No-op when the member already votes. A member gets its name once its etcd has started
# and joined, so while an unstarted (nameless) member exists the name is awaited until DEADLINE_S;
# fails at once when no member has that name and none is unstarted.
# Inputs: ENDPOINTS MEMBER_NAME DEADLINE_S. Output: "@@ changed=true|false", "@@ id=<hex>".
set -euo pipefail
: "${ENDPOINTS:?}" "${MEMBER_NAME:?}" "${DEADLINE_S:?}"
export ETCDCTL_API=3
# @include etcd_tools
etcdctl_bin=$(need_etcd_tool etcdctl)
ctl() { "$etcdctl_bin" --endpoints="$ENDPOINTS" --dial-timeout=2s --command-timeout=5s "$@"; }
deadline=$((SECONDS + ${DEADLINE_S%.*}))
while :; do
  # "ID, status, name, peer urls, client urls, is learner" (read whole: no SIGPIPE for etcdctl)
  members=$(ctl member list)
  row=$(awk -F', ' -v n="$MEMBER_NAME" '$3 == n { print $1 " " $NF; exit }' <<<"$members")
  if [ -z "$row" ]; then
    if awk -F', ' '$2 == "unstarted" { found = 1 } END { exit !found }' <<<"$members" \
        && [ "$SECONDS" -lt "$deadline" ]; then
      sleep 0.2; continue  # the new member has not started (or not published its name) yet
    fi
    echo "etcd has no member named $MEMBER_NAME" >&2; exit 1
  fi
  id=${row%% *}
  if [ "${row##* }" = false ]; then echo "@@ changed=false"; echo "@@ id=$id"; exit 0; fi
  if err=$(ctl member promote "$id" 2>&1 >/dev/null); then
    echo "@@ changed=true"; echo "@@ id=$id"; exit 0
  fi
  case $err in
    *"in sync with leader"*|*"unhealthy cluster"*|*"timed out"*|*"leader changed"*|*"no leader"*|*"context deadline"*) ;;
    *) echo "member promote $MEMBER_NAME: $err" >&2; exit 1 ;;
  esac
  if [ "$SECONDS" -ge "$deadline" ]; then
    echo "member promote $MEMBER_NAME still refused after ${DEADLINE_S}s: $err" >&2
    exit 1
  fi
  sleep 0.2
done
