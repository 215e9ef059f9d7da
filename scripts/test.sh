#!/usr/bin/env bash
# Builds everything and runs the tests, in stages: dependencies
# (scripts/install_deps.sh), configure, build, tests (ctest), sanitized tests
# (scripts/test_sanitized.sh: the CPU tests again, with the host code under
# AddressSanitizer and UndefinedBehaviorSanitizer; the tests labelled
# `stress` run there only). Prints one line per stage
# and a summary; everything the stages print goes to BUILD_DIR/test.log. On a
# failure: the stage, the failed tests and the end of the output, exit 1
# (failed tests do not stop the sanitized tests from running).
# Without a GPU the GPU tests report themselves skipped; on a GPU machine they run.
#   scripts/test.sh [BUILD_DIR]   (default: build; the sanitized build goes
#                                  to BUILD_DIR-sanitize)
# Environment: CUDA_ARCHS (default 90); CONVGEN_SANITIZE_TESTS=0 leaves out
# the sanitized tests.
set -uo pipefail
if [[ "${1:-}" == "-h" || "${1:-}" == "--help" ]]; then
  sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'
  exit 0
fi
cd "$(dirname "$0")/.."
build=${1:-build}
mkdir -p "$build" || exit 1
log="$(cd "$build" && pwd)/test.log"
: >"$log"
started=$SECONDS
tail_lines=40  # of a failed stage's output, or of a failed test's

# stage NAME COMMAND...: runs COMMAND with its output appended to the log and
# prints NAME, ok or FAILED and the seconds it took (no newline: a test stage
# adds its counts); returns COMMAND's status.
stage_first_line=1
stage() {
  local name=$1 t0=$SECONDS rc
  shift
  printf '==> %s: %s\n' "$name" "$*" >>"$log"
  stage_first_line=$(($(wc -l <"$log") + 1))
  "$@" >>"$log" 2>&1
  rc=$?
  printf '%-16s %-6s %4d s' "$name" "$([[ $rc == 0 ]] && echo ok || echo FAILED)" $((SECONDS - t0))
  return $rc
}

# The stages that failed, named at the end.
failed_stages=()
finish_failed() {
  local IFS=,
  local stages="${failed_stages[*]}"
  echo "FAILED: ${stages//,/, }; the whole output is in $log"
  exit 1
}

# failed NAME: the end of the failed stage's output, and exit.
failed() {
  echo
  echo "--- the last $tail_lines lines of its output:"
  tail -n +"$stage_first_line" "$log" | tail -n "$tail_lines"
  failed_stages+=("$1")
  finish_failed
}

# test_stage NAME BUILD_DIR COMMAND...: a stage that runs ctest in BUILD_DIR
# with `--output-junit junit.xml`; adds the counts of passed, failed and
# skipped tests to its line and, on failures, their names and the end of the
# first one's output. Failed tests do not stop the next stage.
test_stage() {
  local name=$1 dir=$2
  shift 2
  rm -f "$dir/junit.xml"
  stage "$name" "$@" && { echo "   $(python3 scripts/ctest_report.py "$dir/junit.xml")"; return; }
  [[ -f "$dir/junit.xml" ]] || failed "$name"  # ctest did not get to run the tests
  echo "   $(python3 scripts/ctest_report.py --tail "$tail_lines" "$dir/junit.xml")"
  failed_stages+=("$name")
}

stage dependencies bash scripts/install_deps.sh || failed dependencies
echo
# The runtime too is built for CUDA_ARCHS only, as the libraries are (its
# default is five GPUs and PTX: a user's install serves any of them).
stage configure cmake -S . -B "$build" -G Ninja -DCMAKE_CUDA_ARCHITECTURES="${CUDA_ARCHS:-90}" \
  -DCONVGEN_RUNTIME_ARCHS="${CUDA_ARCHS:-90}" || failed configure
echo
stage build cmake --build "$build" || failed build
echo
# The stress tests (label `stress`: fuzz corpus, hostile and corrupted
# inputs, killed and concurrent writes) exercise the host code the
# sanitized stage instruments: they run there, not twice.
plain_only=()
[[ "${CONVGEN_SANITIZE_TESTS:-1}" != 0 ]] && plain_only=(-LE stress)
test_stage tests "$build" ctest --test-dir "$build" --output-on-failure -j 2 --output-junit junit.xml "${plain_only[@]}"
if [[ "${CONVGEN_SANITIZE_TESTS:-1}" != 0 ]]; then
  # The configure-time generator of the first build serves the sanitized
  # build's configure too.
  host=$(cd "$build" && pwd)/convgen-host/convgen
  [[ -x "$host" ]] || host=""
  test_stage "sanitized tests" "${build}-sanitize" \
    env CONVGEN_HOST_EXECUTABLE="$host" bash scripts/test_sanitized.sh "${build}-sanitize"
else
  printf '%-16s left out (CONVGEN_SANITIZE_TESTS=0)\n' "sanitized tests"
fi
((${#failed_stages[@]} == 0)) || finish_failed
echo "all stages passed in $((SECONDS - started)) s; the whole output is in $log"
