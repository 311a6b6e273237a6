#!/usr/bin/env bash
# The whole test suite: lint (ruff), types (mypy), shellcheck, unit + API + integration tests.
# Integration tests need root and network namespaces; where they cannot run they skip with a reason.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
if [ "$(id -u)" = 0 ] && [ -x .ci/integration-deps.sh ]; then
  .ci/integration-deps.sh
fi
echo "== ruff"; .venv/bin/ruff check src tests bench
echo "== mypy"; .venv/bin/mypy
echo "== pytest"
.venv/bin/python -m pytest -q -p no:cacheprovider "$@"
