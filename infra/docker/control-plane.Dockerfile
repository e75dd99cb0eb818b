# syntax=docker/dockerfile:1.7
# The control-plane image. One image, three processes (see docs/deployment.md):
#   petsing api             (default) the API server and the status websocket on $PORT
#   petsing worker control  the Temporal worker on the control task queue (workflows, database, audio)
#   petsing migrate         one-off: apply database migrations before a rollout
# plus the operator CLI (petsing users create, petsing credits grant, ...).
#
# Build from the repository root (the build context must be the root; see infra/docker/README.md):
#   docker build -f infra/docker/control-plane.Dockerfile -t petsing-control-plane .
ARG NODE_IMAGE=node:20-bookworm-slim

# --- the web app: static files (dashboard/dist), built with the full development toolchain -------
# Its types come from the control plane's OpenAPI builder, so the control plane's sources come along.
FROM ${NODE_IMAGE} AS dashboard
WORKDIR /app
COPY package.json package-lock.json .npmrc ./
COPY platform/package.json platform/
COPY workflows/package.json workflows/
COPY control-plane/package.json control-plane/
COPY control-plane/bin control-plane/bin
COPY render-node/package.json render-node/
COPY render-node/bin render-node/bin
COPY dashboard/package.json dashboard/
COPY sdk/package.json sdk/
# The root `prepare` script builds the dashboard only where its sources are present: not yet here.
RUN ONNXRUNTIME_NODE_INSTALL=skip npm ci --no-audit --no-fund
COPY tsconfig.json ./
COPY platform platform
COPY workflows workflows
COPY control-plane control-plane
COPY render-node render-node
COPY dashboard dashboard
RUN npm run build:dashboard && test -s dashboard/dist/index.html

# --- build: production node_modules (tsx kept) and the workflow bundle --------------------------
FROM ${NODE_IMAGE} AS build
WORKDIR /app
# Manifests first, so the dependency layer is reused while only sources change. The bin folders come
# along because npm links them into node_modules/.bin. .npmrc sets onnxruntime-node-install=skip: no
# CUDA download on the control plane.
COPY package.json package-lock.json .npmrc ./
COPY platform/package.json platform/
COPY workflows/package.json workflows/
COPY control-plane/package.json control-plane/
COPY control-plane/bin control-plane/bin
COPY render-node/package.json render-node/
COPY render-node/bin render-node/bin
COPY dashboard/package.json dashboard/
COPY sdk/package.json sdk/
COPY infra/docker/install-production-deps.sh infra/docker/
RUN sh infra/docker/install-production-deps.sh

COPY tsconfig.json ./
COPY platform platform
COPY workflows workflows
COPY control-plane control-plane
COPY render-node render-node
# Control workers load this instead of running webpack at every start (WORKFLOW_BUNDLE_PATH below).
RUN npm run bundle:workflows && test -s workflows/dist/workflow-bundle.js

# --- runtime ---------------------------------------------------------------------------------------
FROM ${NODE_IMAGE}
# ffmpeg: audio preparation and template previews; espeak-ng: local speech; libheif-examples:
# heif-convert for HEIC photos (libheif1 on bookworm depends on libde265); tini: PID 1 that forwards
# signals and reaps ffmpeg/espeak-ng children. yt-dlp (POST /social/extract-audio) comes from PyPI, not
# Debian: platforms change often and Debian's copy lags behind; rebuild the image to update it.
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      ffmpeg espeak-ng libheif-examples tini ca-certificates python3 python3-venv \
 && rm -rf /var/lib/apt/lists/* \
 && python3 -m venv /opt/yt-dlp \
 && /opt/yt-dlp/bin/pip install --no-cache-dir --disable-pip-version-check yt-dlp \
 && /opt/yt-dlp/bin/yt-dlp --version

# Amazon RDS CA bundle (public certificates only). terraform/ sets DATABASE_URL with
# sslmode=verify-full&sslrootcert=<this file>: Node's built-in CA list does not include the RDS CAs.
ADD --chmod=644 https://truststore.pki.rds.amazonaws.com/global/global-bundle.pem /usr/local/share/petsing/rds-global-bundle.pem

# HOST=0.0.0.0: the API answers on the container's interfaces (the service's own default is 127.0.0.1).
ENV NODE_ENV=production \
    PATH=/app/node_modules/.bin:$PATH \
    HOST=0.0.0.0 \
    PORT=8080 \
    DATA_DIR=/data \
    YTDLP_PATH=/opt/yt-dlp/bin/yt-dlp \
    WORKFLOW_BUNDLE_PATH=/app/workflows/dist/workflow-bundle.js

WORKDIR /app
# Owned by root and read-only to the service user; only DATA_DIR and /tmp (tsx's cache) are written.
COPY --from=build /app /app
# The API serves the web app from here (DASHBOARD_DIR's default).
COPY --from=dashboard /app/dashboard/dist /app/dashboard/dist
RUN mkdir -p /data && chown node:node /data
USER node
# External mode keeps nothing here that matters across replicas (Postgres, S3 and Temporal hold the
# state); in embedded mode it holds PGlite, the local object store and the generated secrets.
VOLUME ["/data"]
EXPOSE 8080

# Meaningful for `petsing api` only. Workers serve no HTTP: disable it for them (compose does;
# ECS ignores Dockerfile health checks and uses the task definition's).
HEALTHCHECK --interval=15s --timeout=5s --start-period=60s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.PORT || 8080) + '/health').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]

ENTRYPOINT ["/usr/bin/tini", "--"]
CMD ["petsing", "api"]
