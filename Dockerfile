# Multi-stage: compile with dev dependencies, run with production ones only.
# BASE can be overridden (e.g. a locally built image where Docker Hub is out of reach).
ARG BASE=node:24.21.0-bookworm-slim

FROM ${BASE} AS build
ENV NPM_CONFIG_UPDATE_NOTIFIER=false NPM_CONFIG_FUND=false NPM_CONFIG_AUDIT=false
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
RUN npm run build && npm prune --omit=dev

FROM ${BASE}
# Which build this is, for whoever finds the image in a registry: pass them at build (docs/OPERATIONS.md).
ARG VERSION=unknown REVISION=unknown SOURCE=unknown
LABEL org.opencontainers.image.title="token-booking-receiver" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${REVISION}" \
      org.opencontainers.image.source="${SOURCE}"
# glibc's malloc hands blocks of 1 MB and more straight to mmap, and back at once when freed (npm start sets the same):
# left to adjust its own threshold, it kept a 1,000,000-token memory store's freed arrays, about 50 MB (docs/BENCHMARKS.md).
ENV NODE_ENV=production PORT=3000 GLIBC_TUNABLES=glibc.malloc.mmap_threshold=1048576
# An image carries no stop timeout, and podman-compose 1.0.3 drops stop_grace_period: a runtime's default of 10 s
# before SIGKILL is what a container may get. The drain's own limit stays under it (raise both together).
ENV SHUTDOWN_TIMEOUT_MS=8000
WORKDIR /app
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY package.json ./
COPY seed ./seed
COPY migrations ./migrations
# A numeric user: it needs no entry in the base image's /etc/passwd.
USER 10001:10001
# The partners' port, and the metrics listener's (METRICS_PORT), for the operator's network only.
EXPOSE 3000 9464
# bash's /dev/tcp asks /readyz: 60-85 ms on a busy machine, where starting a whole Node took 1.0-1.5 s; the base has no curl.
HEALTHCHECK --interval=10s --timeout=3s --start-period=10s --retries=3 \
  CMD ["bash", "-c", "exec 3<>/dev/tcp/127.0.0.1/$PORT && printf 'GET /readyz HTTP/1.0\\r\\n\\r\\n' >&3 && read -r -t 3 _ status _ <&3 && [ \"$status\" = 200 ]"]
# A young generation of 16 MB semi-spaces, as npm start: less resident at a million tokens, less CPU on PostgreSQL (docs/BENCHMARKS.md).
CMD ["node", "--max-semi-space-size=16", "dist/server.js"]
