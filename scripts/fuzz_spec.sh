#!/usr/bin/env bash
# Fuzzes the spec reader and the generator behind it with libFuzzer, under
# AddressSanitizer and UndefinedBehaviorSanitizer (tests/fuzz/README.md).
#   scripts/fuzz_spec.sh [SECONDS] [BUILD_DIR]       fuzz for SECONDS (default 600)
#   scripts/fuzz_spec.sh --merge [BUILD_DIR]         add the run's new inputs that
#                                                    reach new code to tests/fuzz/corpus
#   scripts/fuzz_spec.sh --minimize [BUILD_DIR]      keep in tests/fuzz/corpus only the
#                                                    inputs that reach code no smaller
#                                                    one does (the replay test runs them all)
# Seeds: tests/fuzz/corpus, specs/, tests/bad_specs/ and the CPU tests' specs.
# Inputs that break a guarantee land in BUILD_DIR/crashes/; replay one with
#   BUILD_DIR/fuzz_spec_replay BUILD_DIR/crashes/<file>
set -euo pipefail
cd "$(dirname "$0")/.."
if [[ "${1:-}" == "-h" || "${1:-}" == "--help" ]]; then
  sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'
  exit 0
fi
merge=0
minimize=0
if [[ "${1:-}" == "--merge" || "${1:-}" == "--minimize" ]]; then
  [[ $1 == --merge ]] && merge=1 || minimize=1
  shift
  seconds=0
else
  seconds=${1:-600}
  [[ $# -gt 0 ]] && shift
fi
build=${1:-build-fuzz}

if ! command -v clang++ > /dev/null || ! clang++ -print-file-name=libclang_rt.fuzzer-x86_64.a | grep -q /; then
  echo "fuzz_spec: installing clang (libFuzzer comes with it)"
  apt-get install -y clang > /dev/null
fi
cmake -S tests/fuzz -B "$build" -G Ninja -DCMAKE_CXX_COMPILER=clang++ > /dev/null
cmake --build "$build" --target fuzz_spec fuzz_spec_replay fuzz_spec_dictionary
"$build/fuzz_spec_dictionary" > "$build/spec.dict"
mkdir -p "$build/corpus" "$build/crashes"

if [[ $minimize == 1 ]]; then
  # libFuzzer's merge into an empty folder keeps, smallest first, the inputs
  # that add coverage; the folder then replaces the corpus.
  rm -rf "$build/minimized" && mkdir -p "$build/minimized"
  "$build/fuzz_spec" -merge=1 -max_len=4096 -timeout=10 -rss_limit_mb=2048 "$build/minimized" tests/fuzz/corpus
  before=$(ls tests/fuzz/corpus | wc -l)
  find tests/fuzz/corpus -type f -delete
  cp "$build/minimized"/* tests/fuzz/corpus/
  echo "fuzz_spec: tests/fuzz/corpus holds $(ls tests/fuzz/corpus | wc -l) inputs (was $before)"
  exit 0
fi
if [[ $merge == 1 ]]; then
  "$build/fuzz_spec" -merge=1 -max_len=4096 -timeout=10 -rss_limit_mb=2048 tests/fuzz/corpus "$build/corpus"
  echo "fuzz_spec: tests/fuzz/corpus holds $(ls tests/fuzz/corpus | wc -l) inputs"
  exit 0
fi
# New inputs go to BUILD_DIR/corpus (the first directory); the seeds stay as they are.
"$build/fuzz_spec" -dict="$build/spec.dict" -max_total_time="$seconds" -max_len=4096 -timeout=10 \
  -rss_limit_mb=2048 -artifact_prefix="$build/crashes/" -print_final_stats=1 \
  "$build/corpus" tests/fuzz/corpus specs tests/bad_specs tests/cpu
