# Development OpenID Connect provider (NOT for production: in-memory state, accounts from a JSON
# file). Build from the repository root, after `pnpm install`:
#   docker build -f docker/dev-idp.Dockerfile -t hostctl/dev-idp:dev .
# Mount your own accounts with -v ./accounts.json:/app/apps/dev-idp/accounts.json:ro.
ARG BASE_IMAGE=local/node-base:20

FROM ${BASE_IMAGE} AS build
# Lets tooling find (and prune) this stage's leftover images.
LABEL org.hostctl.stage=build
WORKDIR /src
COPY . .
RUN node docker/bundle.mjs /out api worker dev-idp cli

FROM ${BASE_IMAGE}
WORKDIR /app
COPY --from=build /out/dev-idp/ /app/
# The issuer is the URL clients use to reach the provider: set DEV_IDP_ISSUER to match how it is published.
ENV DEV_IDP_HOST=0.0.0.0 DEV_IDP_PORT=3100 DEV_IDP_ISSUER=http://127.0.0.1:3100
USER 10001:10001
EXPOSE 3100
HEALTHCHECK --interval=10s --timeout=4s --start-period=10s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+process.env.DEV_IDP_PORT+'/.well-known/openid-configuration').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
CMD ["node", "--enable-source-maps", "apps/dev-idp/dist/main.mjs"]
