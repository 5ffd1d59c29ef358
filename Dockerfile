# syntax=docker/dockerfile:1
# inferq container images, one multi-stage build with three targets:
#   docker build --target api         -t inferq-api .          Fastify API + web console + migrations (no onnxruntime: invariant 3)
#   docker build --target worker      -t inferq-worker .       CPU worker
#   docker build --target worker-cuda -t inferq-worker-cuda .  GPU worker: CUDA 12, onnxruntime's CUDA provider fetched at build time
# Every runtime image runs `node` on bundled JavaScript (scripts/build-server.mjs)
# as uid 10001, with production npm dependencies only.

ARG NODE_IMAGE=node:24-bookworm-slim
ARG CUDA_IMAGE=nvidia/cuda:12.8.1-cudnn-runtime-ubuntu24.04

# npm needs every workspace's manifest to install from the lockfile.
FROM ${NODE_IMAGE} AS manifests
WORKDIR /src
COPY package.json package-lock.json .npmrc ./
COPY apps/api/package.json apps/api/
COPY apps/bench/package.json apps/bench/
COPY apps/web/package.json apps/web/
COPY apps/worker/package.json apps/worker/
COPY packages/contracts/package.json packages/contracts/
COPY packages/core/package.json packages/core/
COPY packages/db/package.json packages/db/
COPY packages/dev-stack/package.json packages/dev-stack/
COPY packages/inference/package.json packages/inference/
COPY packages/onnx-model/package.json packages/onnx-model/
COPY packages/queue/package.json packages/queue/
COPY packages/sdk/package.json packages/sdk/
COPY packages/storage/package.json packages/storage/
COPY packages/test-utils/package.json packages/test-utils/
COPY scripts/install-runtime-deps.sh scripts/

# Everything, dev tools included: builds the console and the server bundles.
FROM manifests AS build
RUN --mount=type=cache,target=/root/.npm npm ci --no-audit --no-fund
COPY . .
RUN npm run build:web && node scripts/build-server.mjs

FROM manifests AS api-deps
RUN --mount=type=cache,target=/root/.npm sh scripts/install-runtime-deps.sh @inferq/api

# .npmrc skips onnxruntime's CUDA download: the npm package bundles the CPU provider.
FROM manifests AS worker-deps
RUN --mount=type=cache,target=/root/.npm sh scripts/install-runtime-deps.sh @inferq/worker

# The CUDA provider libraries come from onnxruntime's own install script (network needed at build time).
FROM manifests AS worker-cuda-deps
ENV ONNXRUNTIME_NODE_INSTALL=cuda12
RUN --mount=type=cache,target=/root/.npm sh scripts/install-runtime-deps.sh @inferq/worker

FROM ${NODE_IMAGE} AS api
ENV NODE_ENV=production HOST=0.0.0.0 PORT=8080 CONSOLE_DIR=/app/console MIGRATIONS_DIR=/app/prisma/migrations
WORKDIR /app
COPY --from=api-deps /src/node_modules node_modules
COPY --from=build /src/dist/api dist/api
COPY scripts/container-healthcheck.mjs healthcheck.mjs
COPY --from=build /src/apps/web/dist console
COPY prisma/migrations prisma/migrations
USER 10001:10001
EXPOSE 8080
HEALTHCHECK --interval=10s --timeout=3s --start-period=20s CMD ["node", "healthcheck.mjs", "PORT", "8080", "HOST"]
# The same image runs the migration step: `node dist/api/migrate.js`.
CMD ["node", "--enable-source-maps", "dist/api/main.js"]

FROM ${NODE_IMAGE} AS worker
ENV NODE_ENV=production WORKER_DEVICES=cpu MODEL_CACHE_DIR=/var/cache/inferq/models
WORKDIR /app
RUN mkdir -p /var/cache/inferq/models && chown -R 10001:10001 /var/cache/inferq
COPY --from=worker-deps /src/node_modules node_modules
COPY --from=build /src/dist/worker dist/worker
COPY scripts/container-healthcheck.mjs healthcheck.mjs
USER 10001:10001
# Prometheus metrics and /healthz (one port per device process: 9464, 9465, …).
EXPOSE 9464
HEALTHCHECK --interval=10s --timeout=3s --start-period=30s CMD ["node", "healthcheck.mjs", "METRICS_PORT", "9464", "METRICS_HOST"]
CMD ["node", "--enable-source-maps", "dist/worker/launcher.js"]

# Node from the official image on NVIDIA's CUDA + cuDNN runtime (onnxruntime's CUDA 12 provider needs cuDNN 9).
FROM ${NODE_IMAGE} AS node
FROM ${CUDA_IMAGE} AS worker-cuda
COPY --from=node /usr/local/bin/node /usr/local/bin/node
ENV NODE_ENV=production WORKER_DEVICES=cuda:0 MODEL_CACHE_DIR=/var/cache/inferq/models \
    NVIDIA_DRIVER_CAPABILITIES=compute,utility
WORKDIR /app
RUN mkdir -p /var/cache/inferq/models && chown -R 10001:10001 /var/cache/inferq
COPY --from=worker-cuda-deps /src/node_modules node_modules
COPY --from=build /src/dist/worker dist/worker
COPY scripts/container-healthcheck.mjs healthcheck.mjs
USER 10001:10001
EXPOSE 9464
HEALTHCHECK --interval=10s --timeout=3s --start-period=60s CMD ["node", "healthcheck.mjs", "METRICS_PORT", "9464", "METRICS_HOST"]
CMD ["node", "--enable-source-maps", "dist/worker/launcher.js"]
