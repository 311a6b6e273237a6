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
if [ ! -f "$stamp" ] || [ pyproject.toml -nt "$stamp" ]; then
  echo "setup: installing vnfm and its dependencies into .venv"
  .venv/bin/python -m pip install --quiet --disable-pip-version-check --upgrade pip
  .venv/bin/python -m pip install --quiet --disable-pip-version-check -e ".[test,postgres]"
  touch "$stamp"
fi
echo "setup: done ($(.venv/bin/vnfm --version 2>/dev/null || echo vnfm))"
