#!/usr/bin/env bash
# Installs vnfm and its test tools into ./.venv (idempotent; quick when already done).
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  echo "setup: creating .venv with $($PY --version)"
  "$PY" -m venv .venv
fi
stamp=.venv/.vnfm-installed
# constraints.txt pins every package (scripts/lock.sh regenerates it): the same versions everywhere
if [ ! -f "$stamp" ] || [ pyproject.toml -nt "$stamp" ] || [ constraints.txt -nt "$stamp" ]; then
  echo "setup: installing vnfm and its dependencies into .venv (pinned by constraints.txt)"
  .venv/bin/python -m pip install --quiet --disable-pip-version-check --upgrade pip
  .venv/bin/python -m pip install --quiet --disable-pip-version-check --constraint constraints.txt \
    -e ".[test,postgres]"
  touch "$stamp"
fi
# the S3-compatible server the etcd backups' store is tested against (moto's server mode): a venv of
# its own, as botocore pins python-dateutil < 3 and the kubernetes client needs >= 3
MOTO_VERSION=5.2.5
if [ ! -x .venv-s3/bin/moto_server ] || ! grep -qx "$MOTO_VERSION" .venv-s3/.moto-version 2>/dev/null; then
  echo "setup: installing moto[server] $MOTO_VERSION into .venv-s3 (the tests' S3 server)"
  "$PY" -m venv .venv-s3
  .venv-s3/bin/python -m pip install --quiet --disable-pip-version-check "moto[server]==$MOTO_VERSION"
  echo "$MOTO_VERSION" > .venv-s3/.moto-version
fi
echo "setup: done ($(.venv/bin/vnfm --version 2>/dev/null || echo vnfm))"
