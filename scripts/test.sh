#!/usr/bin/env bash
# Builds everything and runs the tests, in stages: dependencies
# (scripts/install_deps.sh), configure, build, tests (ctest), sanitized tests
# (scripts/test_sanitized.sh: the CPU tests with the host code under
# AddressSanitizer and UndefinedBehaviorSanitizer). With the sanitized stage,
# the tests stage runs the nvcc and GPU tests only, so that each test runs
# once; without it, every test. Prints one line per stage
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
# With the sanitized stage, this build leaves out the CPU tests' programs,
# which that stage builds and runs (see plain_only below).
cpu_tests=ON
[[ "${CONVGEN_SANITIZE_TESTS:-1}" != 0 ]] && cpu_tests=OFF
# The generator at -O1: this build's tests spend their time in nvcc and
# nested builds, and -O1 compiles it in two thirds of -O2's time while GCC
# still warns of values used uninitialized.
stage configure cmake -S . -B "$build" -G Ninja -DCMAKE_CUDA_ARCHITECTURES="${CUDA_ARCHS:-90}" \
  -DCONVGEN_RUNTIME_ARCHS="${CUDA_ARCHS:-90}" -DCONVGEN_BUILD_CPU_TESTS=$cpu_tests \
  -DCONVGEN_GENERATOR_OPTIMIZATION=-O1 || failed configure
echo
stage build cmake --build "$build" || failed build
echo
# Each test runs in one stage. The sanitized stage runs the CPU tests
# (label `cpu`, the stress tests among them: fuzz corpus, hostile and
# corrupted inputs, killed and concurrent writes) with the host code
# instrumented, which finds what a plain run finds and more; so the plain
# stage, when the sanitized one follows, runs the rest: the tests of nvcc's
# output and the consumer-project flows (label `nvcc`) and the GPU tests
# (label `gpu`, skipped without a GPU).
plain_only=()
[[ "${CONVGEN_SANITIZE_TESTS:-1}" != 0 ]] && plain_only=(-L "nvcc|gpu")
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
