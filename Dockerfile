# syntax=docker/dockerfile:1
# The service's image: an LTS Node, the dependencies the lock file pins (production ones
# only in the image that runs), the web app built in a stage of its own, run as the
# unprivileged `node` user. Redis, Kafka, the schema registry and ClickHouse come from their
# own images (docker-compose.yml) or from the environment (KAFKA_BROKERS, REDIS_URL,
# SCHEMA_REGISTRY_URL, CLICKHOUSE_URL; without CLICKHOUSE_URL the embedded engine keeps its
# data under DATA_DIR).
ARG NODE_VERSION=24

# Every dependency, to build web/ into web/dist with Vite.
FROM node:${NODE_VERSION}-bookworm AS web
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY . .
RUN node --import tsx --input-type=module -e "const { ensureWebBuild } = await import('./ops/web-build.ts'); await ensureWebBuild();"

# The production dependencies only. glibc (Debian), not musl: chdb ships for glibc alone.
FROM node:${NODE_VERSION}-bookworm-slim
# glibc's allocator in huge pages where the host gives them on request (ops/huge-pages.mjs).
ENV NODE_ENV=production HOST=0.0.0.0 PORT=8080 DATA_DIR=/app/.data GLIBC_TUNABLES=glibc.malloc.hugetlb=1
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force
COPY . .
# After the sources, so the build is newer than them and `npm start` does not rebuild it.
COPY --from=web /app/web/dist ./web/dist
RUN mkdir -p /app/.data && chown node:node /app/.data
USER node
EXPOSE 8080
# The TypeScript sources run through tsx (a production dependency), as with npm start.
CMD ["node", "--import", "tsx", "ops/cli/start.ts"]
