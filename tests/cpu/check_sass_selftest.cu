// Kernels for check_sass_selftest.sh: one clean, one with a loop over global
// memory that nothing unrolls (named like a generated dense kernel, so that
// a stem kernel's source can claim it), one with local memory.
extern "C" __global__ void clean_kernel(const float* in, float* out) {
  float sum = 0.0f;
#pragma unroll
  for (int i = 0; i < 9; ++i) sum += in[threadIdx.x + i];
  out[threadIdx.x] = sum;
}

extern "C" __global__ void conv_looping_kernel(const float* in, float* out, int taps) {
  float sum = 0.0f;
#pragma unroll 1
  for (int i = 0; i < taps; ++i) sum += in[threadIdx.x + i];
  out[threadIdx.x] = sum;
}

extern "C" __global__ void local_memory_kernel(const float* in, float* out, int pick) {
  float values[64];
#pragma unroll
  for (int i = 0; i < 64; ++i) values[i] = in[threadIdx.x * 64 + i];
  values[pick & 63] += 1.0f;  // a store at an index known only at run time
  out[threadIdx.x] = values[(pick >> 6) & 63];
}
