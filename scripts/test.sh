#!/usr/bin/env bash
# The whole test suite: lint (ruff), types (mypy), shellcheck, unit + API + integration tests.
# Integration tests need root and network namespaces; where they cannot run they skip with a reason.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
if [ "$(id -u)" = 0 ] && [ -x .ci/integration-deps.sh ]; then
  .ci/integration-deps.sh
fi
# ruff and mypy run inside pytest (tests/test_quality.py)
.venv/bin/python -m pytest -q -p no:cacheprovider "$@"
