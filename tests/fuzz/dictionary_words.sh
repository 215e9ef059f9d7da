#!/usr/bin/env bash
# The fuzzer's dictionary holds every word of the spec that a mutation must
# be able to reach: here, the data types and layouts and their keys (the
# dictionary is written from spec_vocabulary(); this checks that it is).
#   dictionary_words.sh FUZZ_SPEC_DICTIONARY
set -u
dict=$("${1:?usage: dictionary_words.sh FUZZ_SPEC_DICTIONARY}") || { echo "fuzz_spec_dictionary failed"; exit 1; }
status=0
for word in dtype layout float32 float16 bfloat16 NCHW NHWC; do
  for entry in "\"$word\"" "\"$word: \""; do
    if ! grep -qxF -- "$entry" <<<"$dict"; then
      echo "missing from the dictionary: $entry"
      status=1
    fi
  done
done
[ "$status" -eq 0 ] && echo "dictionary: $(wc -l <<<"$dict") entries, the dtype and layout words among them"
exit $status
