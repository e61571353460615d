#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# Brings up every infrastructure service of the dev stack on loopback (state under .data/) and
# prepares the workspace: apt packages, pnpm dependencies, Prisma client, database migrations.
# Idempotent: whatever is already installed or running is left as it is.
#
# Environment: DATABASE_URL  database to migrate and record (default: the dev database)
#              HOSTCTL_ENV_FILE  environment file to write (default: .data/env)
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
. "$here/lib/common.sh"
. "$here/lib/apt.sh"
. "$here/lib/node.sh"
. "$here/lib/datastores.sh"
. "$here/lib/docker.sh"
. "$here/lib/swarm-engine.sh"
. "$here/lib/pdns.sh"
. "$here/lib/caddy.sh"
. "$here/lib/pebble.sh"
. "$here/lib/env.sh"
cd "$ROOT"
started=$SECONDS

database_url=${DATABASE_URL:-postgresql://postgres@127.0.0.1:5432/hostctl}
env_file=${HOSTCTL_ENV_FILE:-$DATA/env}

ensure_apt_packages
ensure_pnpm
pnpm_install
ensure_postgres
ensure_redis
ensure_dockerd
ensure_registry
ensure_base_image
ensure_default_bridge
ensure_swarm_engine
ensure_pdns "$APPS_DOMAIN"
ensure_caddy
ensure_pebble
write_env "$env_file" "$database_url"
prisma_generate
migrate_database "$database_url"

say "services ready in $((SECONDS - started))s; environment: ${env_file#"$ROOT"/}"
