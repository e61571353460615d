# shellcheck shell=bash
# The three app processes of the dev stack: name, entry point, readiness URL (empty: none).

APPS=(dev-idp api worker)
declare -A APP_ENTRY=(
  [dev-idp]=apps/dev-idp/src/main.ts
  [api]=apps/api/src/main.ts
  [worker]=apps/worker/src/main.ts
)
declare -A APP_PORT=([dev-idp]=3100 [api]=3000)
declare -A APP_READY=(
  [dev-idp]=http://127.0.0.1:3100/.well-known/openid-configuration
  [api]=http://127.0.0.1:3000/readyz
)

# start_app NAME: starts NAME under supervise.sh (restarted whenever it exits, each exit logged)
# with the sourced environment and waits until it is ready (60s). A process that exits before it
# is ready fails the start instead of looping.
start_app() {
  local name=$1 port=${APP_PORT[$1]:-} url=${APP_READY[$1]:-}
  [[ -f $ROOT/${APP_ENTRY[$name]} ]] || die "$name: ${APP_ENTRY[$name]} does not exist yet"
  if [[ -n $port ]] && port_busy "$port"; then
    die "$name: 127.0.0.1:$port is already in use by a process this script did not start"
  fi
  : >"$LOGS/$name.log"
  start_bg "$name" bash "$ROOT/scripts/lib/supervise.sh" "$name" pnpm exec tsx "${APP_ENTRY[$name]}"
  if [[ -n $url ]]; then
    wait_app "$name" "$url" 60
  else
    # No fixed port to probe (the worker's health port is random): it must at least stay up.
    sleep 3
    app_exited "$name" && fail_app "$name" "exited right after starting"
  fi
  say "$name: running (pid $(pid_of "$name"))"
}

# wait_app NAME URL SECONDS: until URL answers; fails at once when NAME's process has exited.
wait_app() {
  local deadline=$((SECONDS + $3))
  until http_ok "$2"; do
    app_exited "$1" && fail_app "$1" "exited before answering $2"
    ((SECONDS < deadline)) || fail_app "$1" "did not answer $2 within $3s"
    sleep 0.5
  done
}

# app_exited NAME: true when NAME's process (not its supervisor) has exited since it was started.
app_exited() { ! pid_of "$1" >/dev/null || grep -q "supervise: $1 exited" "$LOGS/$1.log"; }

fail_app() {
  stop_bg "$1" 5
  show_log "$LOGS/$1.log"
  die "$1 $2"
}

stop_apps() {
  local i
  for ((i = ${#APPS[@]} - 1; i >= 0; i--)); do stop_bg "${APPS[i]}" 10; done
}

# build_dashboard: builds the web dashboard (apps/web/dist, served by the API at /) unless the
# build is newer than every source file of it; idempotent, ~10s when it does build.
build_dashboard() {
  local web=$ROOT/apps/web stamp=$ROOT/apps/web/dist/index.html
  if [[ -f $stamp ]] && [[ -z $(find "$web/src" "$web/public" "$web/index.html" "$web/vite.config.ts" \
    "$web/package.json" -newer "$stamp" -print -quit) ]]; then
    say "dashboard: up to date (apps/web/dist)"
    return
  fi
  quietly web-build pnpm -s web:build
  say "dashboard: built (apps/web/dist)"
}
