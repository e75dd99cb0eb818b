# syntax=docker/dockerfile:1.7
# The render-node image: `petsing worker render`, a Temporal worker on the GPU task queue that runs the
# lip-sync model with onnxruntime-node's CUDA execution provider and encodes with ffmpeg. It needs
# Temporal and the object store only: no database credentials.
#
# Build from the repository root (linux/amd64 only: onnxruntime-node ships CUDA binaries for x64):
#   docker build --platform linux/amd64 -f infra/docker/render-node.Dockerfile -t petsing-render-node .
# Run on a host with the NVIDIA driver and the NVIDIA Container Toolkit:
#   docker run --gpus 1 -e TEMPORAL_ADDRESS=... -e S3_BUCKET=... petsing-render-node
ARG NODE_IMAGE=node:20-bookworm-slim
# CUDA 13 runtime + cuDNN 9: onnxruntime 1.30's CUDA provider (the onnxruntime-gpu 1.30.0 wheel) is a CUDA 13
# build (it links libcudart.so.13, libcublas(Lt).so.13, libcurand.so.10, libcufft.so.12).
ARG CUDA_IMAGE=nvidia/cuda:13.0.1-cudnn-runtime-ubuntu24.04
ARG ONNXRUNTIME_VERSION=1.30.0

FROM ${NODE_IMAGE} AS node

# --- the CUDA provider libraries of onnxruntime, from the official onnxruntime-gpu wheel (PyPI) --------
# The same version as onnxruntime-node: provider libraries only load into the core they were built with.
FROM python:3.12-slim AS onnxruntime-cuda
ARG ONNXRUNTIME_VERSION
RUN pip download --no-deps --only-binary=:all: --dest /wheel "onnxruntime-gpu==${ONNXRUNTIME_VERSION}" \
 && python -m zipfile -e /wheel/onnxruntime_gpu-*.whl /wheel/unpacked \
 && mkdir /providers \
 && cp /wheel/unpacked/onnxruntime/capi/libonnxruntime_providers_cuda.so \
       /wheel/unpacked/onnxruntime/capi/libonnxruntime_providers_shared.so /providers/

# --- build: production node_modules with onnxruntime's CUDA provider libraries ---------------------
FROM ${NODE_IMAGE} AS build
ARG ONNXRUNTIME_VERSION
WORKDIR /app
COPY package.json package-lock.json .npmrc ./
COPY platform/package.json platform/
COPY workflows/package.json workflows/
COPY control-plane/package.json control-plane/
COPY control-plane/bin control-plane/bin
COPY render-node/package.json render-node/
COPY render-node/bin render-node/bin
# Workspaces of the lockfile (npm ci wants every one); the render node never builds or serves them.
COPY dashboard/package.json dashboard/
COPY sdk/package.json sdk/
COPY infra/docker/install-production-deps.sh infra/docker/
RUN sh infra/docker/install-production-deps.sh
# onnxruntime loads its provider libraries from the folder of libonnxruntime.so.1 (verified on an H200:
# render-node/README.md, "CUDA"). No GPU is needed to build the image.
COPY --from=onnxruntime-cuda /providers/ node_modules/onnxruntime-node/bin/napi-v6/linux/x64/
RUN node -e "const v=require('onnxruntime-node/package.json').version; if (v !== process.argv[1]) throw new Error('onnxruntime-node ' + v + ' does not match the CUDA provider ' + process.argv[1])" "${ONNXRUNTIME_VERSION}"

COPY tsconfig.json ./
COPY platform platform
COPY workflows workflows
COPY control-plane control-plane
COPY render-node render-node

# --- runtime ---------------------------------------------------------------------------------------
FROM ${CUDA_IMAGE}
# ffmpeg (libx264 + aac) encodes; heif-convert decodes HEIC photos (libheif1 depends on libde265). espeak-ng is not needed here: speech is prepared by the control worker.
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      ffmpeg libheif-examples tini ca-certificates \
 && rm -rf /var/lib/apt/lists/*

# Node 20 from the official image (the same build as the control plane; needs glibc >= 2.28).
COPY --from=node /usr/local/bin/node /usr/local/bin/node
RUN node --version && groupadd --gid 1000 petsing \
 && useradd --uid 1000 --gid petsing --create-home --shell /usr/sbin/nologin petsing

ENV NODE_ENV=production \
    PATH=/app/node_modules/.bin:$PATH \
    DATA_DIR=/data \
    RENDER_EXECUTION_PROVIDER=cuda \
    RENDER_CUDA_FALLBACK=refuse \
    NVIDIA_VISIBLE_DEVICES=all \
    NVIDIA_DRIVER_CAPABILITIES=compute,utility

WORKDIR /app
COPY --from=build /app /app
# DATA_DIR holds models fetched from the object store (RENDER_MODEL_PATH as a key) and a generated
# signing secret; the generated stand-in model is cached under ~/.cache.
RUN mkdir -p /data && chown petsing:petsing /data
USER petsing
VOLUME ["/data"]

# `render-node doctor` checks ffmpeg, heif-convert and the model on CUDA:
#   docker run --gpus 1 --rm petsing-render-node render-node doctor --provider cuda
ENTRYPOINT ["/usr/bin/tini", "--"]
CMD ["petsing", "worker", "render"]
