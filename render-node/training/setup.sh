#!/usr/bin/env bash
# Creates render-node/training/.venv with the pinned training requirements (idempotent: a venv whose
# requirements match is left alone). torch==2.13.0 is the CPU build; never unpinned (that pulls CUDA).
set -euo pipefail
cd "$(dirname "$0")"
stamp=.venv/requirements.installed
if [ -f "$stamp" ] && cmp -s requirements.txt "$stamp"; then exit 0; fi
python3 -m venv .venv
.venv/bin/python -m pip install --quiet --disable-pip-version-check -r requirements.txt
cp requirements.txt "$stamp"
