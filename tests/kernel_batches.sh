# Sourced by the scripts that compile many generated kernels with nvcc
# (tests/cpu/ptxas_no_local_memory.sh, tests/arch/arch_matrix.sh): writes
# them as a few translation units instead of one a kernel. nvcc's front end
# spends most of a lone kernel's time parsing the CUDA headers, which a
# batch parses once (about half the compile time on 2 cores).
#
# Each kernel sits in a namespace of its own, kernel_<i>_ (i: its index in
# the list), so that the constants of two kernels of one library do not
# collide and the compiler's reports name the kernel in every function of
# it. The headers the kernels include come first, at file scope, so that a
# kernel's own #include lines add nothing inside its namespace. A kernel's
# text is copied in, not #included and without a #line naming its file:
# nvcc's front end reports some warnings (a constant never referenced) only
# in the file it compiles, as a user's build, a kernel a translation unit,
# does. A batch's diagnostics therefore name the batch's lines;
# arch_matrix.sh compiles a batch that has any again a kernel at a time
# (ptxas_no_local_memory.sh one that fails), which names the kernel's own.
#
#   write_kernel_batches DIR BATCHES KERNEL...
# writes DIR/batch_<b>.cu for b < BATCHES (at most one a kernel), batch b
# holding the kernels b, b + BATCHES, ..., and prints their paths.
write_kernel_batches() {
  local dir=$1 batches=$2
  shift 2
  local kernels=("$@") b i
  (( batches > ${#kernels[@]} )) && batches=${#kernels[@]}
  for ((b = 0; b < batches; b++)); do
    {
      grep -h '^#include <' "${kernels[@]}" | sort -u
      for ((i = b; i < ${#kernels[@]}; i += batches)); do
        printf 'namespace kernel_%d_ {  // %s\n' "$i" "$(realpath "${kernels[$i]}")"
        cat "${kernels[$i]}"
        printf '\n}  // namespace kernel_%d_\n' "$i"  # (after a last line without its newline too)
      done
    } >"$dir/batch_$b.cu"
    echo "$dir/batch_$b.cu"
  done
}
