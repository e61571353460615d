#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# The README's test command: brings up the services against the test database, recreates and
# migrates every test database, runs typecheck, lint, format check, knip, the vitest suites and the
# fault suite under both runtimes, and ends with one line "N passed, M failed" (each static check
# counts as one test). Exits non-zero when anything failed or vitest wrote no report.
#
# Environment: TEST_DATABASE_URL (default postgresql://postgres@127.0.0.1:5432/hostctl_test),
#              CHECK_TIMEOUT / VITEST_TIMEOUT / FAULT_TIMEOUT in seconds (defaults 600 / 1800 / 900;
#              VITEST_TIMEOUT bounds each vitest run of a lane),
#              FAULT_RESTART_DOCKER (default 1: each fault run restarts its engine once: the dev
#              engine for `fault`, the swarm engine for `fault-swarm`).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
. "$here/lib/common.sh"
cd "$ROOT"
started=$SECONDS

test_env="$DATA/env.test"

if ! HOSTCTL_ENV_FILE="$test_env" \
  DATABASE_URL="${TEST_DATABASE_URL:-postgresql://postgres@127.0.0.1:5432/hostctl_test}" \
  bash "$here/setup-services.sh"; then
  echo "setup-services.sh failed: no test ran"
  echo "0 passed, 1 failed"
  exit 1
fi
load_env "$test_env"
if ! pnpm -s exec tsx scripts/reset-test-databases.ts >"$LOGS/test-databases.log" 2>&1; then
  cat "$LOGS/test-databases.log"
  echo "the test databases could not be recreated: no test ran"
  echo "0 passed, 1 failed"
  exit 1
fi
say "test databases: recreated and migrated"
# The browser suites drive the built dashboard (the API serves apps/web/dist).
. "$here/lib/apps.sh"
(build_dashboard) || warn "the dashboard did not build: the browser suites will fail"

# Two lanes run at the same time: the CPU-bound one (static checks, then the API, package and logic
# tests) beside the one that mostly waits on Docker, containers and timers (worker, e2e, images,
# browser), which keeps the 2 cores busy instead of half idle. More lanes were tried: four at once
# drove the load to 12 and made timing-bound tests time out (docs/dev-stack.md). Each step writes
# its result into $results; the totals are added up once both lanes have finished. Output of a
# step: .data/logs/test-<step>.log.
results="$DATA/test-results"
rm -rf "$results"
mkdir -p "$results"

# bounded SECONDS CMD...: CMD under a time limit (TERM, then KILL 30s later).
bounded() {
  local limit=$1
  shift
  timeout --kill-after=30 "$limit" "$@"
}

# check NAME CMD...: one static check, counted as one test.
check() {
  local name=$1 t=$SECONDS rc=0 log="$LOGS/test-${1// /-}.log"
  shift
  bounded "${CHECK_TIMEOUT:-600}" "$@" >"$log" 2>&1 || rc=$?
  if ((rc == 0)); then
    echo "1 0" >"$results/$name"
    say "$name: passed ($((SECONDS - t))s)"
  else
    printf '0 1 %s\n' "$name ($([[ $rc == 124 ]] && echo "timed out" || echo "exit $rc"))" >"$results/$name"
    say "$name: FAILED ($((SECONDS - t))s), last lines of $log:"
    tail -n 40 "$log"
  fi
}

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

# suite NAME LIMIT VITEST-ARGS...: one vitest run, its tests counted from its JSON report; a
# non-zero exit without a failed test (unhandled errors, a timeout) or no report counts as one
# failure. On failure the end of its output (vitest's summary of what failed) is printed.
suite() {
  local name=$1 limit=$2 t=$SECONDS rc=0 counts suite_passed suite_failed
  local report="$DATA/vitest-$name.json" log="$LOGS/test-$name.log" problem=''
  shift 2
  rm -f "$report"
  bounded "$limit" pnpm exec vitest run "$@" --reporter=default --reporter=json --outputFile="$report" \
    >"$log" 2>&1 || rc=$?
  if [[ -s $report ]] && counts=$(tally "$report"); then
    read -r suite_passed suite_failed <<<"$counts"
    ((suite_failed == 0)) || problem="$name: $suite_failed test(s)"
    if ((rc != 0 && suite_failed == 0)); then
      suite_failed=1
      problem="$name exited with $rc"
    fi
  else
    suite_passed=0 suite_failed=1 problem="$name wrote no report (exit $rc)"
  fi
  printf '%s %s %s\n' "$suite_passed" "$suite_failed" "$problem" >"$results/$name"
  say "$name: $suite_passed passed, $suite_failed failed ($((SECONDS - t))s, exit $rc, output $log)"
  if ((suite_failed > 0)); then tail -n 120 "$log"; fi
}

# The project names of the workspace, so the CPU-bound lane takes every project the other steps do
# not name (a new project is run without editing this script).
docker_lane=(worker e2e-swarm images upgrade)
# After the CPU-bound projects, in the first lane: since those share one module graph per run
# (isolate: false) that lane finishes first, and the browser suite evens the two out.
late_projects=(e2e web-browser)
mapfile -t all_projects < <(pnpm exec vitest list --config vitest.workspace.ts --filesOnly --json 2>/dev/null |
  node -e 'const files = JSON.parse(require("node:fs").readFileSync(0, "utf8"));
    console.log([...new Set(files.map((f) => f.projectName))].sort().join("\n"))')
rest_args=()
for project in "${all_projects[@]}"; do
  [[ " ${docker_lane[*]} ${late_projects[*]} " == *" $project "* ]] || rest_args+=(--project "$project")
done
if ((${#all_projects[@]} == 0)); then
  echo "0 1 vitest could not list the workspace's projects" >"$results/projects"
fi

limit=${VITEST_TIMEOUT:-1800}
say "two lanes at once: static checks, $((${#rest_args[@]} / 2)) projects, ${late_projects[*]} | ${docker_lane[*]}, fault-swarm"
(
  check typecheck pnpm -s typecheck
  check lint pnpm -s lint
  check format pnpm -s format:check
  check "dead code (knip)" pnpm -s knip
  if ((${#rest_args[@]} > 0)); then
    suite rest "$limit" --config vitest.workspace.ts "${rest_args[@]}"
  fi
  # The single engine's e2e run and the browser suite (their own databases: beside e2e-swarm is fine).
  for project in "${late_projects[@]}"; do
    suite "$project" "$limit" --config vitest.workspace.ts --project "$project"
  done
) &
(
  for project in "${docker_lane[@]}"; do
    suite "$project" "$limit" --config vitest.workspace.ts --project "$project"
  done
  # Its own database, Redis, workers; it restarts the swarm engine, so it runs once this lane's
  # projects that use that engine (worker, e2e-swarm) are done; the other lane never uses it.
  FAULT_RUNTIME=swarm FAULT_RESTART_DOCKER=${FAULT_RESTART_DOCKER:-1} \
    suite fault-swarm "${FAULT_TIMEOUT:-900}" --config tests/fault/vitest.config.ts
) &
wait

# Alone and last: it SIGKILLs workers, restarts its own Redis and, with FAULT_RESTART_DOCKER=1,
# the shared Docker engine, which would disturb any test still running (docs/operations.md).
FAULT_RESTART_DOCKER=${FAULT_RESTART_DOCKER:-1} \
  suite fault "${FAULT_TIMEOUT:-900}" --config tests/fault/vitest.config.ts

passed=0
failed=0
failures=()
for result in "$results"/*; do
  read -r step_passed step_failed problem <"$result"
  passed=$((passed + step_passed))
  failed=$((failed + step_failed))
  [[ -z $problem ]] || failures+=("$problem")
done
say "finished in $((SECONDS - started))s"
if ((${#failures[@]} > 0)); then
  printf 'failed: %s\n' "$(printf '%s; ' "${failures[@]}" | sed 's/; $//')"
fi
echo "$passed passed, $failed failed"
((failed == 0))
