#!/usr/bin/env bash
# supervise.sh NAME CMD...: runs CMD and starts it again whenever it exits, so one crashed worker
# or API process does not stop the dev stack (every deploy would otherwise wait for a human).
# Each exit is logged with its code; restarts back off from 1 s to 30 s and the back-off resets
# once the process has stayed up for a minute. TERM/INT (stack-down.sh) stop the child and end
# the loop: a process being stopped on purpose is never restarted.
set -uo pipefail
name=$1
shift

child=
stopping=0
stop() {
  stopping=1
  [[ -n $child ]] && kill -TERM "$child" 2>/dev/null
}
trap stop TERM INT

stamp() { date -u +%Y-%m-%dT%H:%M:%SZ; }

delay=1
while :; do
  started=$SECONDS
  "$@" &
  child=$!
  # wait returns early when a trapped signal arrives: keep waiting for the child itself.
  while kill -0 "$child" 2>/dev/null; do wait "$child"; done
  wait "$child"
  code=$?
  child=
  ((stopping)) && exit 0
  ((SECONDS - started >= 60)) && delay=1
  printf '%s supervise: %s exited with code %s; restarting in %ss\n' "$(stamp)" "$name" "$code" "$delay"
  sleep "$delay" &
  wait $! || true
  ((stopping)) && exit 0
  delay=$((delay * 2 > 30 ? 30 : delay * 2))
done
