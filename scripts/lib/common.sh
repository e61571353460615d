# shellcheck shell=bash
# Shared helpers for the dev-stack scripts: paths, progress lines, waits, secrets and
# background processes. Sourced by scripts/*.sh, never run on its own.

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
DATA="$ROOT/.data"
LOGS="$DATA/logs"
RUN="$DATA/run"
# The dev stack's secrets (SECRETS_KEK above all) belong with its databases, and PostgreSQL is
# per machine: every clone on this machine must use the same key-encryption key, or a fresh clone
# generates another one and refuses to start on the data keys an earlier clone wrapped. So they
# live outside the checkout (HOSTCTL_SECRETS_FILE overrides); an older clone's .data/secrets is
# taken over on first use.
SECRETS="${HOSTCTL_SECRETS_FILE:-${XDG_STATE_HOME:-$HOME/.local/state}/hostctl/secrets}"
mkdir -p "$LOGS" "$RUN"
(umask 077 && mkdir -p "$(dirname "$SECRETS")")
if [[ ! -s $SECRETS && -s $DATA/secrets ]]; then
  (umask 077 && cp "$DATA/secrets" "$SECRETS")
fi

# Nothing here may phone home: the only reachable hosts are loopback and the package registries.
export DO_NOT_TRACK=1 TURBO_TELEMETRY_DISABLED=1 CHECKPOINT_DISABLE=1 PRISMA_HIDE_UPDATE_MESSAGE=1
export npm_config_update_notifier=false

say() { printf '==> %s\n' "$*"; }
warn() { printf 'warning: %s\n' "$*" >&2; }
die() {
  printf 'error: %s\n' "$*" >&2
  exit 1
}

# show_log FILE: the last 30 lines of FILE on stderr.
show_log() {
  printf -- '--- last lines of %s ---\n' "$1" >&2
  tail -n 30 "$1" >&2 2>/dev/null || true
}

# quietly NAME CMD...: runs CMD with its output in .data/logs/NAME.log; on failure shows the
# log's tail and exits.
quietly() {
  local name=$1
  shift
  if ! "$@" >"$LOGS/$name.log" 2>&1; then
    printf 'error: %s failed\n' "$name" >&2
    show_log "$LOGS/$name.log"
    exit 1
  fi
}

# wait_until SECONDS CMD...: polls CMD (output discarded) until it succeeds or time runs out.
wait_until() {
  local deadline=$((SECONDS + $1))
  shift
  until "$@" >/dev/null 2>&1; do
    ((SECONDS < deadline)) || return 1
    sleep 0.5
  done
}

# http_ok URL [curl args]: true when URL answers 2xx. Never through a proxy: loopback only.
http_ok() { curl -fs --noproxy '*' --max-time 5 -o /dev/null "$@"; }

# port_busy PORT: true when something accepts TCP connections on 127.0.0.1:PORT.
port_busy() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# load_env FILE: exports every variable FILE assigns.
load_env() {
  set -a
  # shellcheck disable=SC1090
  . "$1"
  set +a
}

# secret NAME LENGTH: prints the persisted secret NAME (hex), generating it on first use.
secret() {
  local value
  [[ -f $SECRETS ]] || (umask 077 && : >"$SECRETS")
  value=$(sed -n "s/^$1=//p" "$SECRETS" | tail -n 1)
  if [[ -z $value ]]; then
    value=$(od -An -tx1 -N "$((($2 + 1) / 2))" /dev/urandom | tr -d ' \n' | cut -c "1-$2")
    printf '%s=%s\n' "$1" "$value" >>"$SECRETS"
  fi
  printf '%s' "$value"
}

# secret_key NAME: like secret, for a 256-bit key in base64 (SECRETS_KEK); made once, kept.
secret_key() {
  local value
  [[ -f $SECRETS ]] || (umask 077 && : >"$SECRETS")
  value=$(sed -n "s/^$1=//p" "$SECRETS" | tail -n 1)
  if [[ -z $value ]]; then
    value=$(head -c 32 /dev/urandom | base64 | tr -d '\n')
    set_secret "$1" "$value"
  fi
  printf '%s' "$value"
}

# set_secret NAME VALUE: replaces a persisted secret.
set_secret() {
  local rest
  rest=$(grep -v "^$1=" "$SECRETS" || true)
  printf '%s\n%s=%s\n' "$rest" "$1" "$2" | sed '/^$/d' >"$SECRETS.new"
  chmod 600 "$SECRETS.new"
  mv "$SECRETS.new" "$SECRETS"
}

# --- background processes -------------------------------------------------------------------
# Each runs in its own session (so its whole process group can be stopped and it never holds the
# caller's terminal or pipes), logs to .data/logs/NAME.log and has "pid starttime" in
# .data/run/NAME.pid; the start time guards against a recycled pid.

proc_start_time() { sed 's/.*) //' "/proc/$1/stat" 2>/dev/null | cut -d' ' -f20; }

# start_bg NAME CMD...: starts CMD in the background (log appended).
start_bg() {
  local name=$1 pid
  shift
  setsid "$@" >>"$LOGS/$name.log" 2>&1 </dev/null &
  pid=$!
  printf '%s %s\n' "$pid" "$(proc_start_time "$pid")" >"$RUN/$name.pid"
}

# pid_of NAME: prints the pid of NAME when the recorded process is still alive.
pid_of() {
  local pid start
  [[ -f $RUN/$1.pid ]] || return 1
  read -r pid start <"$RUN/$1.pid" || true
  [[ $pid =~ ^[0-9]+$ ]] || return 1
  [[ -n $start && $(proc_start_time "$pid") == "$start" ]] || return 1
  printf '%s' "$pid"
}

# stop_bg NAME [GRACE_SECONDS]: TERM to NAME's process group, KILL after the grace period.
stop_bg() {
  local pid deadline
  if pid=$(pid_of "$1"); then
    kill -TERM -- "-$pid" 2>/dev/null || kill -TERM "$pid" 2>/dev/null || true
    deadline=$((SECONDS + ${2:-10}))
    while kill -0 -- "-$pid" 2>/dev/null && ((SECONDS < deadline)); do sleep 0.2; done
    kill -KILL -- "-$pid" 2>/dev/null || true
    say "$1: stopped (pid $pid)"
  fi
  rm -f "$RUN/$1.pid"
}
