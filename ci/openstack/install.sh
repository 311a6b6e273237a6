#!/usr/bin/env bash
# Installs what the local OpenStack needs: MariaDB + RabbitMQ (Debian) and one venv with the
# OpenStack services (PyPI), cached under $VNFM_OS_CACHE. Re-running is cheap when nothing changed.
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
CACHE="${VNFM_OS_CACHE:-/var/cache/vnfm-openstack}"
VENV="$CACHE/venv"
PY="${VNFM_OS_PYTHON:-python3.11}"
mkdir -p "$CACHE"
t0=$(date +%s)

if ! command -v mariadbd >/dev/null || [ ! -x /usr/lib/rabbitmq/bin/rabbitmq-server ]; then
  export DEBIAN_FRONTEND=noninteractive
  # Debian's postinst would start the daemons: forbid it, bringup.sh starts them itself.
  policy=/usr/sbin/policy-rc.d; created_policy=0
  if [ ! -e "$policy" ]; then printf '#!/bin/sh\nexit 101\n' >"$policy"; chmod +x "$policy"; created_policy=1; fi
  apt-get update -qq || apt-get update
  apt-get install -y -qq --no-install-recommends mariadb-server mariadb-client rabbitmq-server
  if [ "$created_policy" = 1 ]; then rm -f "$policy"; fi
fi
t1=$(date +%s)

# The venv is keyed by the requirements (and the constraints, when present).
key=$({ cat "$HERE/requirements.txt"; cat "$HERE/constraints.txt" 2>/dev/null || true; } | sha256sum | cut -c1-16)
if [ ! -f "$VENV/.vnfm-key" ] || [ "$(cat "$VENV/.vnfm-key")" != "$key" ]; then
  rm -rf "$VENV"
  "$PY" -m venv "$VENV"
  "$VENV/bin/pip" install -q --upgrade pip
  if [ -f "$HERE/constraints.txt" ]; then
    "$VENV/bin/pip" install -q -r "$HERE/requirements.txt" -c "$HERE/constraints.txt"
  else
    "$VENV/bin/pip" install -q -r "$HERE/requirements.txt"
  fi
  echo "$key" >"$VENV/.vnfm-key"
fi
# The agent-less ML2 mechanism driver: a module plus a hand-written dist-info for its entry point.
SP=$("$VENV/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
cp "$HERE/vnfm_bindall.py" "$SP/vnfm_bindall.py"
mkdir -p "$SP/vnfm_bindall-1.0.dist-info"
printf 'Metadata-Version: 2.1\nName: vnfm-bindall\nVersion: 1.0\n' >"$SP/vnfm_bindall-1.0.dist-info/METADATA"
printf '[neutron.ml2.mechanism_drivers]\nbindall = vnfm_bindall:BindAllMechanismDriver\n' \
  >"$SP/vnfm_bindall-1.0.dist-info/entry_points.txt"
: >"$SP/vnfm_bindall-1.0.dist-info/RECORD"
t2=$(date +%s)
echo "install: apt $((t1 - t0)) s, venv $((t2 - t1)) s"
