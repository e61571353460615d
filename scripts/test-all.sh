#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# The README's test command: brings up the services against the test database, runs typecheck,
# lint, format check and the vitest suites, and ends with one line "N passed, M failed" (each static
# check counts as one test). Exits non-zero when anything failed or vitest wrote no report.
#
# Environment: TEST_DATABASE_URL (default postgresql://postgres@127.0.0.1:5432/hostctl_test),
#              CHECK_TIMEOUT / VITEST_TIMEOUT / FAULT_TIMEOUT in seconds (defaults 600 / 2700 / 900),
#              FAULT_RESTART_DOCKER (default 1: the fault suite restarts the Docker engine once).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
. "$here/lib/common.sh"
cd "$ROOT"
started=$SECONDS

test_env="$DATA/env.test"
report="$DATA/vitest.json"
passed=0
failed=0
failures=()

if ! HOSTCTL_ENV_FILE="$test_env" \
  DATABASE_URL="${TEST_DATABASE_URL:-postgresql://postgres@127.0.0.1:5432/hostctl_test}" \
  bash "$here/setup-services.sh"; then
  echo "setup-services.sh failed: no test ran"
  echo "0 passed, 1 failed"
  exit 1
fi
load_env "$test_env"
# The browser suites drive the built dashboard (the API serves apps/web/dist).
. "$here/lib/apps.sh"
(build_dashboard) || warn "the dashboard did not build: the browser suites will fail"

# bounded SECONDS CMD...: CMD under a time limit (TERM, then KILL 30s later).
bounded() {
  local limit=$1
  shift
  timeout --kill-after=30 "$limit" "$@"
}

# check NAME CMD...: one static check, counted as one test.
check() {
  local name=$1 t=$SECONDS rc=0
  shift
  say "$name"
  bounded "${CHECK_TIMEOUT:-600}" "$@" || rc=$?
  if ((rc == 0)); then
    passed=$((passed + 1))
    say "$name: passed ($((SECONDS - t))s)"
  else
    failed=$((failed + 1))
    failures+=("$name")
    say "$name: FAILED ($([[ $rc == 124 ]] && echo "timed out" || echo "exit $rc"), $((SECONDS - t))s)"
  fi
}

check typecheck pnpm -s typecheck
check lint pnpm -s lint
check format pnpm -s format:check
check "dead code (knip)" pnpm -s knip

# tally REPORT: "<passed> <failed>" from vitest's JSON report. A test file that failed without a
# failed test (it did not load, or a hook threw) counts as one failed test, so it cannot hide.
tally() {
  # shellcheck disable=SC2016 # JavaScript, not shell
  node -e '
    const report = JSON.parse(require("node:fs").readFileSync(process.argv[1], "utf8"));
    const broken = (report.testResults ?? []).filter((file) => file.status === "failed" &&
      !(file.assertionResults ?? []).some((test) => test.status === "failed")).length;
    console.log(`${report.numPassedTests ?? 0} ${(report.numFailedTests ?? 0) + broken}`);
  ' "$1"
}

# suite NAME REPORT VITEST-ARGS...: one vitest run, its tests counted from its JSON report; a
# non-zero exit without a failed test (unhandled errors, a timeout) or no report counts as one failure.
suite() {
  local name=$1 file=$2 t=$SECONDS rc=0 counts suite_passed suite_failed
  shift 2
  say "$name"
  rm -f "$file"
  bounded "${SUITE_TIMEOUT:?}" pnpm exec vitest run "$@" --reporter=default --reporter=json --outputFile="$file" || rc=$?
  say "$name: exit $rc ($((SECONDS - t))s)"
  if [[ -s $file ]] && counts=$(tally "$file"); then
    read -r suite_passed suite_failed <<<"$counts"
    passed=$((passed + suite_passed))
    failed=$((failed + suite_failed))
    ((suite_failed == 0)) || failures+=("$name: $suite_failed test(s)")
    if ((rc != 0 && suite_failed == 0)); then
      failed=$((failed + 1))
      failures+=("$name exited with $rc")
    fi
  else
    failed=$((failed + 1))
    failures+=("$name wrote no report (exit $rc)")
  fi
}

SUITE_TIMEOUT=${VITEST_TIMEOUT:-2700} suite vitest "$report" --config vitest.workspace.ts
# Alone and last: it SIGKILLs workers, restarts its own Redis and, with FAULT_RESTART_DOCKER=1,
# the shared Docker engine, which would disturb any test still running (docs/operations.md).
FAULT_RESTART_DOCKER=${FAULT_RESTART_DOCKER:-1} SUITE_TIMEOUT=${FAULT_TIMEOUT:-900} \
  suite "fault suite" "$DATA/vitest-fault.json" --config tests/fault/vitest.config.ts

say "finished in $((SECONDS - started))s"
if ((${#failures[@]} > 0)); then
  printf 'failed: %s\n' "$(printf '%s; ' "${failures[@]}" | sed 's/; $//')"
fi
echo "$passed passed, $failed failed"
((failed == 0))
