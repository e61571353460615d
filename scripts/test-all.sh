#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# The README's test command: brings up the services against the test database, runs typecheck,
# lint, format check and the vitest suites, and ends with one line "N passed, M failed" (each static
# check counts as one test). Exits non-zero when anything failed or vitest wrote no report.
#
# Environment: TEST_DATABASE_URL (default postgresql://postgres@127.0.0.1:5432/hostctl_test),
#              CHECK_TIMEOUT / VITEST_TIMEOUT in seconds (defaults 600 / 1500).
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

say "vitest"
rm -f "$report"
t=$SECONDS
rc=0
bounded "${VITEST_TIMEOUT:-1500}" pnpm exec vitest run --config vitest.workspace.ts \
  --reporter=default --reporter=json --outputFile="$report" || rc=$?
say "vitest: exit $rc ($((SECONDS - t))s)"
if [[ -s $report ]] && counts=$(tally "$report"); then
  read -r vitest_passed vitest_failed <<<"$counts"
  passed=$((passed + vitest_passed))
  failed=$((failed + vitest_failed))
  ((vitest_failed == 0)) || failures+=("vitest: $vitest_failed test(s)")
  # e.g. unhandled errors or a timeout after the report: vitest failed though no test did.
  if ((rc != 0 && vitest_failed == 0)); then
    failed=$((failed + 1))
    failures+=("vitest exited with $rc")
  fi
else
  failed=$((failed + 1))
  failures+=("vitest wrote no report (exit $rc)")
fi

say "finished in $((SECONDS - started))s"
if ((${#failures[@]} > 0)); then
  printf 'failed: %s\n' "$(printf '%s; ' "${failures[@]}" | sed 's/; $//')"
fi
echo "$passed passed, $failed failed"
((failed == 0))
