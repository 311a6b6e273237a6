#!/usr/bin/env bash
# The whole test suite: lint (ruff), types (mypy), shellcheck, unit + API + integration tests,
# then the OpenStack (Heat) tests against a real local OpenStack.
#
#   ./scripts/test.sh                       everything this machine can run
#   ./scripts/test.sh tests/unit -k scale   just those (arguments go to pytest; no OpenStack bring-up)
#   VNFM_OPENSTACK_IT=0 ./scripts/test.sh   everything but the OpenStack bring-up (they skip, saying why)
#
# Integration tests need root and network namespaces; where they cannot run they skip with a reason.
# The OpenStack phase runs as root unless VNFM_OPENSTACK_IT=0: ci/openstack/bringup.sh installs and
# starts Keystone, Glance, Neutron, Nova (fake virt), Placement and Heat (~3 min cold, install cached
# in /var/cache/vnfm-openstack), the tests in tests/integration/openstack run (~4 min), and the cloud
# is stopped and wiped again unless it was already running before.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
if [ "$(id -u)" = 0 ] && [ -x .ci/integration-deps.sh ]; then
  .ci/integration-deps.sh
fi
PYTEST=(.venv/bin/python -m pytest -q -p no:cacheprovider)
# ruff and mypy run inside pytest (tests/test_quality.py)
if [ $# -gt 0 ]; then
  exec "${PYTEST[@]}" "$@"
fi

openstack=${VNFM_OPENSTACK_IT:-}
if [ -z "$openstack" ]; then
  if [ "$(id -u)" = 0 ]; then openstack=1; else openstack=0; fi
fi
if [ "$openstack" != 1 ]; then
  exec "${PYTEST[@]}"
fi

# Phase 1: everything but the live OpenStack tests (the cloud's daemons are not running yet).
"${PYTEST[@]}" -m "not openstack"

# Phase 2: bring the local OpenStack up, run its tests, take it down again.
STATE="${VNFM_OS_STATE:-/var/tmp/vnfm-openstack}"
export VNFM_OS_STATE="$STATE"
started_here=1
if [ -f "$STATE/ready" ]; then started_here=0; fi
mkdir -p "$STATE"
bringup_log=$(mktemp /tmp/vnfm-os-bringup.XXXXXX.log)
if [ "$started_here" = 1 ]; then
  trap 'ci/openstack/teardown.sh --wipe >/dev/null || true' EXIT
fi
echo "OpenStack phase: ci/openstack/bringup.sh (log: $bringup_log)"
t0=$(date +%s)
bringup_failed() {  # what went wrong: the end of the bring-up log and of every service log
  echo "ci/openstack/bringup.sh failed after $(($(date +%s) - t0)) s; the end of its log:" >&2
  tail -n 60 "$bringup_log" >&2
  for f in "$STATE"/log/*.log; do
    [ -f "$f" ] || continue
    echo "--- last lines of $f" >&2
    tail -n 15 "$f" >&2
  done
}
if ! ci/openstack/bringup.sh >"$bringup_log" 2>&1; then
  # One more try from scratch (a daemon that lost a race at start-up); the install stays cached.
  bringup_failed
  echo "retrying the bring-up once" >&2
  if ! ci/openstack/bringup.sh >"$bringup_log" 2>&1; then
    bringup_failed
    exit 1
  fi
fi
grep '^\[bringup' "$bringup_log" || true
echo "OpenStack up after $(($(date +%s) - t0)) s"
VNFM_OPENSTACK_IT=1 "${PYTEST[@]}" -m openstack tests/integration/openstack
