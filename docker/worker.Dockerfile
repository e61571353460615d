# hostctl worker. Build from the repository root, after `pnpm install` and `pnpm db:generate`:
#   docker build -f docker/worker.Dockerfile -t hostctl/worker:dev .
# BASE_IMAGE needs node 20+, /bin/sh and git (git deploys clone with it); docker/build-base-image.sh
# makes local/node-base:20 with all three, offline. The build stage is shared with the other images.
ARG BASE_IMAGE=local/node-base:20

FROM ${BASE_IMAGE} AS build
# Lets tooling find (and prune) this stage's leftover images.
LABEL org.hostctl.stage=build
WORKDIR /src
COPY . .
RUN node docker/bundle.mjs /out api worker dev-idp cli

FROM ${BASE_IMAGE}
# Fail the build, not the first git deploy, when the base image has no git.
RUN git --version
WORKDIR /app
COPY --from=build /out/worker/ /app/
# Two malloc arenas instead of one per thread: the threads that compile the bundles at start leave
# their arenas mostly free but resident (~40 MiB of the idle RSS, docs/performance.md#memory).
ENV NODE_ENV=production WORKER_HEALTH_PORT=3001 MALLOC_ARENA_MAX=2
# The Docker socket is root:docker on the host: run with `--group-add <gid of the socket>`.
USER 10001:10001
EXPOSE 3001
HEALTHCHECK --interval=10s --timeout=4s --start-period=20s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+process.env.WORKER_HEALTH_PORT+'/livez').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
# Without --enable-source-maps: loading the maps costs ~30 MiB per process (docs/performance.md#memory);
# stack traces keep function names. NODE_OPTIONS=--enable-source-maps maps them to the TypeScript.
CMD ["node", "apps/worker/dist/main.mjs"]
