# hostctl API and the web dashboard it serves. Build from the repository root, after `pnpm install`,
# `pnpm db:generate` and `pnpm web:build` (the dashboard is built on the host: Vite is a dev tool
# the build stage does not carry; without apps/web/dist the COPY below fails):
#   docker build -f docker/api.Dockerfile -t hostctl/api:dev .
# BASE_IMAGE needs node 20+ and /bin/sh; docker/build-base-image.sh makes local/node-base:20 offline.
# The build stage is the same in all three Dockerfiles, so the second and third builds reuse it.
ARG BASE_IMAGE=local/node-base:20

FROM ${BASE_IMAGE} AS build
# Lets tooling find (and prune) this stage's leftover images.
LABEL org.hostctl.stage=build
WORKDIR /src
COPY . .
RUN node docker/bundle.mjs /out api worker dev-idp cli

FROM ${BASE_IMAGE}
WORKDIR /app
COPY --from=build /out/api/ /app/
COPY --from=build /src/apps/web/dist/ /app/apps/web/dist/
# Two malloc arenas instead of one per thread: the threads that compile the bundles at start leave
# their arenas mostly free but resident (~40 MiB of the idle RSS, docs/performance.md#memory).
ENV NODE_ENV=production API_HOST=0.0.0.0 API_PORT=3000 DASHBOARD_DIR=/app/apps/web/dist MALLOC_ARENA_MAX=2
# Files stay root-owned and read-only to the process.
USER 10001:10001
EXPOSE 3000
HEALTHCHECK --interval=10s --timeout=4s --start-period=20s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.API_PORT||3000)+'/readyz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
# `node --enable-source-maps apps/api/dist/migrate.mjs` applies the database migrations (one-shot).
# Without --enable-source-maps: loading the maps costs ~30 MiB per process (docs/performance.md#memory);
# stack traces keep function names. NODE_OPTIONS=--enable-source-maps maps them to the TypeScript.
CMD ["node", "apps/api/dist/main.mjs"]
