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
echo "setup: done ($(.venv/bin/vnfm --version 2>/dev/null || echo vnfm))"
