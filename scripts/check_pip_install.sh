#!/usr/bin/env bash
# `pip install .` alone, in a fresh virtual environment outside the checkout, gives
# `import graphsub` and the `graphsub` command (what a user who is not developing graphsub
# does). Reuses the wheel build folder (build-wheel/), so after setup it only relinks.
#   scripts/check_pip_install.sh
set -euo pipefail
cd "$(dirname "$0")/.."
venv=$(mktemp -d "${TMPDIR:-/tmp}/graphsub-pip.XXXXXX")
trap 'rm -rf "$venv"' EXIT
/usr/bin/python3 -m venv "$venv"
"$venv/bin/pip" install -q --disable-pip-version-check .
cd "$venv"  # away from the checkout: the import must come from the installation
"$venv/bin/python" -c 'import graphsub, onnx; assert "site-packages" in graphsub.__file__, graphsub.__file__; print("pip install: import graphsub from", graphsub.__file__)'
"$venv/bin/graphsub" optimize --model squeezenet --budget 50 >/dev/null
echo "pip install: the graphsub command optimizes the built-in SqueezeNet"
