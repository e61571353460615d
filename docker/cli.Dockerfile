# hostctl CLI for CI pipelines: the API client only (no database client, no operator commands).
# Build from the repository root, after `pnpm install` and `pnpm db:generate`:
#   docker build -f docker/cli.Dockerfile -t hostctl/cli:dev .
# Run:  docker run --rm -e HOSTCTL_URL -e HOSTCTL_TOKEN hostctl/cli:dev deploy web --wait
# `hostctl` is also on PATH, for CI systems that run a shell script in the image (GitLab: set
# `entrypoint: [""]`). docs/ci.md. The build stage is the same in all four Dockerfiles.
ARG BASE_IMAGE=local/node-base:20

FROM ${BASE_IMAGE} AS build
# Lets tooling find (and prune) this stage's leftover images.
LABEL org.hostctl.stage=build
WORKDIR /src
COPY . .
RUN node docker/bundle.mjs /out api worker dev-idp cli

FROM ${BASE_IMAGE}
WORKDIR /app
COPY --from=build /out/cli/ /app/
RUN printf '#!/bin/sh\nexec node --enable-source-maps /app/apps/cli/dist/hostctl.mjs "$@"\n' >/usr/local/bin/hostctl \
  && chmod 755 /usr/local/bin/hostctl
ENV NODE_ENV=production
# Files stay root-owned and read-only to the process; a stored login (`hostctl login`) would go
# to $HOME/.config, which CI never needs: it sets HOSTCTL_URL and HOSTCTL_TOKEN.
USER 10001:10001
# A one-shot command, not a server: nothing to probe.
HEALTHCHECK NONE
ENTRYPOINT ["hostctl"]
CMD ["--help"]
