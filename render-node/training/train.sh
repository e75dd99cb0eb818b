#!/usr/bin/env bash
# npm run train:face: rebuilds render-node/models/petface-{detector,landmarks}.onnx from ../shared/petfaces
# (about 2 hours on 2 CPU cores), then evaluates them end to end in Python (held-out split and ../shared/pets)
# into checkpoints/evaluation.json. Arguments go to the training (e.g. --epochs 5 for a quick look). The figures
# of record come from the service's own code: npm run bench:detect.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
bash "$here/setup.sh"
cd "$here"
checkpoints="$here/checkpoints"
.venv/bin/python -m petface.train --out "$checkpoints" "$@"
.venv/bin/python -m petface.export --checkpoints "$checkpoints"
.venv/bin/python -m petface.evaluate --checkpoints "$checkpoints" --out "$checkpoints/evaluation.json"
