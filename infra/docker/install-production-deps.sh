#!/bin/sh
# Installs the npm workspace for a production image: run from the repository root inside a Docker
# build, after the manifests (package.json, package-lock.json, .npmrc and each workspace's
# package.json) are in place. Shared by control-plane.Dockerfile and render-node.Dockerfile.
#
# tsx runs the TypeScript sources at runtime (control-plane/bin/petsing.mjs registers it), but it is
# a root devDependency. `npm ci --omit=dev` would drop it, so this does a full `npm ci`, re-declares
# tsx as a runtime dependency at the exact version the lockfile resolved, and then prunes the dev
# dependencies (TypeScript, ESLint, Vitest, ...). tsx and its own dependency (esbuild) stay.
#
# package.json's allowScripts keeps onnxruntime-node from downloading its CUDA binaries here (npm 11.19+);
# ONNXRUNTIME_NODE_INSTALL=skip says the same to an older npm, through the environment its install script reads. The render-node image
# adds the CUDA provider libraries afterwards, from the onnxruntime-gpu wheel of the same version.
set -eu

ONNXRUNTIME_NODE_INSTALL=skip npm ci --no-audit --no-fund

tsx_version="$(node -p "require('./node_modules/tsx/package.json').version")"
npm pkg delete devDependencies.tsx
npm pkg set "dependencies.tsx=${tsx_version}"
npm prune --omit=dev --no-audit --no-fund
test -f node_modules/tsx/package.json || { echo "tsx was pruned; the image could not run the sources" >&2; exit 1; }

# Native prebuilds for other platforms are dead weight (about 350 MB): keep only this one.
arch="$(node -p process.arch)"
case "$arch" in
  x64) triple=x86_64-unknown-linux-gnu ;;
  arm64) triple=aarch64-unknown-linux-gnu ;;
  *) echo "unsupported architecture: $arch" >&2; exit 1 ;;
esac
ort=node_modules/onnxruntime-node/bin/napi-v6
find "$ort" -mindepth 1 -maxdepth 1 -type d ! -name linux -exec rm -rf {} +
find "$ort/linux" -mindepth 1 -maxdepth 1 -type d ! -name "$arch" -exec rm -rf {} +
find node_modules/@temporalio/core-bridge/releases -mindepth 1 -maxdepth 1 -type d ! -name "$triple" -exec rm -rf {} +
npm cache clean --force >/dev/null 2>&1 || true
