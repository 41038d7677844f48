#!/usr/bin/env bash
# Installs the LiteLLM proxy into its own virtual environment (default .venv-gateway), for the integration test
# and the benchmark that put a real proxy in front of a scripted provider. The proxy is a separate process, so its
# LiteLLM version is pinned here independently of the service's own LiteLLM dependency.
#
# Why this pin: from 1.110 on, `litellm[proxy]` requires a `litellm-proxy` distribution the package index does not
# carry, and the newer 1.108/1.109 releases pin `litellm-proxy-extras` / `litellm-enterprise` builds it lacks too;
# 1.108.7 is the newest release whose proxy extra resolves completely.
#
# Does nothing when the environment already holds this pin (CI runs it before every test run).
set -euo pipefail
cd "$(dirname "$0")/../.."

PIN="1.108.7"
VENV="${DSX_GATEWAY_VENV:-.venv-gateway}"
PYTHON="${PYTHON:-python3}"
STAMP="$VENV/.litellm-proxy-$PIN"

if [ -f "$STAMP" ] && [ -x "$VENV/bin/litellm" ]; then
  exit 0
fi
echo "installing litellm[proxy]==$PIN into $VENV"
test -x "$VENV/bin/python" || "$PYTHON" -m venv "$VENV"
"$VENV/bin/python" -m pip install --quiet --upgrade pip
"$VENV/bin/python" -m pip install --quiet "litellm[proxy]==$PIN"
rm -f "$VENV"/.litellm-proxy-*
touch "$STAMP"
