# shellcheck shell=bash
# pnpm, the workspace's dependencies and the generated Prisma client.

STAMPS="$DATA/stamps"

# stamp_fresh NAME HASH: true when step NAME last ran for the same inputs.
stamp_fresh() { [[ -f $STAMPS/$1 && $(<"$STAMPS/$1") == "$2" ]]; }
stamp_write() { mkdir -p "$STAMPS" && printf '%s\n' "$2" >"$STAMPS/$1"; }
files_hash() { cat "$@" 2>/dev/null | sha256sum | cut -d' ' -f1; }

ensure_pnpm() {
  local want
  want=$(sed -n 's/.*"packageManager": *"pnpm@\([^"]*\)".*/\1/p' "$ROOT/package.json")
  if command -v pnpm >/dev/null; then
    say "pnpm: $(pnpm --version)"
    return
  fi
  say "pnpm: installing pnpm@${want:-10.34.9}"
  quietly npm-install-pnpm npm install -g "pnpm@${want:-10.34.9}"
}

# pnpm_install: `pnpm install` when node_modules is missing or a manifest/lockfile changed.
pnpm_install() {
  local hash args=(install --config.confirmModulesPurge=false)
  hash=$(cd "$ROOT" && files_hash pnpm-lock.yaml pnpm-workspace.yaml package.json apps/*/package.json packages/*/package.json)
  if [[ -f $ROOT/node_modules/.modules.yaml ]] && stamp_fresh pnpm-install "$hash"; then
    say "dependencies: up to date"
    return
  fi
  if [[ -f $ROOT/pnpm-lock.yaml ]]; then args+=(--frozen-lockfile); fi
  say "dependencies: pnpm ${args[*]}"
  (cd "$ROOT" && quietly pnpm-install pnpm "${args[@]}")
  stamp_write pnpm-install "$hash"
}

# prisma_generate: regenerates the Prisma client when the schema or the Prisma version changed.
prisma_generate() {
  local hash out
  out=$(sed -n 's/^ *output *= *"\(.*\)"/\1/p' "$ROOT/prisma/schema.prisma" | head -n 1)
  hash=$(cd "$ROOT" && files_hash prisma/schema.prisma node_modules/prisma/package.json)
  if [[ -n $out && -d $ROOT/prisma/$out ]] && stamp_fresh prisma-generate "$hash"; then
    say "prisma client: up to date"
    return
  fi
  say "prisma client: generating"
  # Offline: scripts/prisma-generate.mjs keeps the CLI from downloading a schema engine.
  (cd "$ROOT" && quietly prisma-generate pnpm -s db:generate)
  stamp_write prisma-generate "$hash"
}

# migrate_database URL: creates the database when missing and applies pending migrations.
migrate_database() {
  (cd "$ROOT" && DATABASE_URL="$1" quietly db-migrate pnpm -s db:migrate)
  say "database ${1##*/}: migrated ($(tail -n 1 "$LOGS/db-migrate.log"))"
}
