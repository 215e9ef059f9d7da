# Helpers shared by the CMake flow tests (sourced; expects $scratch).
fail() {
  echo
  echo "FAIL: $*"
  exit 1
}
# Removes the scratch folder unless CONVGEN_KEEP_SCRATCH=1.
cleanup() {
  if [[ "${CONVGEN_KEEP_SCRATCH:-0}" == 1 ]]; then
    echo "scratch kept: $scratch"
  else
    rm -rf "$scratch"
  fi
}
# Runs a command with its output in a log; on failure shows the log's tail.
logged() {  # logged LOG CMD...
  local log=$1
  shift
  if ! "$@" >"$log" 2>&1; then
    echo "---- last lines of $log"
    tail -n 40 "$log"
    fail "command failed: $*"
  fi
}
