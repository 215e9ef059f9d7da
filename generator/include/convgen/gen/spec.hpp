// Stage 1 of the generator: a YAML spec file becomes a list of workloads.
//
// Every value keeps the file:line:col it came from, so that later stages can
// report errors against the spec a person wrote.
#pragma once

#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace convgen::gen {

struct SourceLocation {
  std::string file;
  int line = 0;    // 1-based
  int column = 0;  // 1-based

  std::string str() const;  // "file:line:col"
};

// One error the user must fix. Several are collected before giving up, so a
// spec with three mistakes is fixed in one round.
struct Diagnostic {
  SourceLocation where;
  std::string message;

  std::string str() const;  // "file:line:col: error: message"
};

// Thrown when a spec cannot be used; holds every diagnostic found.
class SpecError : public std::runtime_error {
 public:
  explicit SpecError(std::vector<Diagnostic> diagnostics);
  const std::vector<Diagnostic>& diagnostics() const { return diagnostics_; }

 private:
  std::vector<Diagnostic> diagnostics_;
};

enum class Epilogue { kNone, kBias, kScaleShift };
// How a kernel is built (see docs/performance.md):
//   kTiles: TVM's schedule; a block stages a 2-D input tile with its halo in
//           shared memory, threads and virtual threads split the output tile.
//   kRows:  a group of warp lanes owns a band of output rows; each lane keeps
//           its input columns in registers and trades the halo with its
//           neighbours by warp shuffle; no shared memory, no barrier.
//   kPlanes: small planes; each lane owns a whole plane. A warp copies its 32
//           planes (one contiguous run) into shared memory, each lane computes
//           its plane from there, and the warp copies the outputs out.
enum class Algorithm { kTiles, kRows, kPlanes };
enum class Activation { kNone, kRelu, kRelu6 };
// The L2 eviction priority of a kernel's input loads or output stores:
//   kNormal:     the default (loads through the read-only cache, __ldg).
//   kEvictFirst: data used once (__ldcs / __stcs): its lines are the first
//                the cache reuses, so that a read-once stream pushes out as
//                few as possible of the lines other data still needs.
enum class CachePolicy { kNormal, kEvictFirst };

// Letters, digits and '_', not starting with a digit: a library name.
bool is_c_identifier(const std::string& s);

const char* to_string(Epilogue e);
const char* to_string(Activation a);
const char* to_string(Algorithm a);
const char* to_string(CachePolicy c);

// Schedule knobs. Those of the tiles algorithm use the vocabulary of TVM's
// depthwise schedules. Each field is optional in the spec; unset fields are
// filled by the default rule in plan.cpp.
struct ScheduleRequest {
  std::optional<Algorithm> algorithm;
  std::optional<int> tile_h, tile_w;          // block_tile: outputs per block (blocking_h, blocking_w)
  std::optional<int> threads_y, threads_x;    // threads: threads per block (num_thread_y, num_thread_x)
  std::optional<int> vthreads_y, vthreads_x;  // vthreads: virtual threads (num_vthread_y, num_vthread_x)
  std::optional<bool> shared_input;           // stage the input tile (with halo) in shared memory
  std::optional<bool> shared_filter;          // stage the filter in shared memory (else registers via the read-only cache)
  std::optional<int> channels_per_block;      // input channels one block computes (small planes: amortize block start-up)
  // The rows algorithm's knobs.
  std::optional<int> rows_per_thread;    // output rows each lane computes (the band height)
  std::optional<int> vector_width;       // input columns each lane loads at once: 1, 2 or 4
  std::optional<int> threads_per_block;  // a multiple of 32
  // The planes algorithm's knob.
  std::optional<int> warps_per_block;  // warps of 32 planes each per block
  // Knobs of every algorithm.
  std::optional<CachePolicy> input_cache;   // L2 priority of the input loads
  std::optional<CachePolicy> output_cache;  // L2 priority of the output stores
  SourceLocation where;                  // the `schedule:` node, or the workload if none
  SourceLocation tile_where, threads_where, vthreads_where, channels_where;  // each key's value, for messages
  SourceLocation algorithm_where, rows_where, vector_where, block_threads_where, warps_where;
  // The first key of each algorithm the spec sets ("" if none), and where.
  std::string tiles_key, rows_key, planes_key;
  SourceLocation tiles_key_where, rows_key_where, planes_key_where;
};

// One depthwise conv2d problem as the spec states it, with defaults applied.
struct Workload {
  SourceLocation where;  // the workload's list item
  int n = 1;             // declared batch; 0 means `runtime`
  int c = 0, h = 0, w = 0;
  int kh = 0, kw = 0;
  int stride_h = 1, stride_w = 1;
  int pad_top = 0, pad_bottom = 0, pad_left = 0, pad_right = 0;
  int dilation_h = 1, dilation_w = 1;
  int multiplier = 1;
  Epilogue epilogue = Epilogue::kNone;
  Activation activation = Activation::kNone;
  ScheduleRequest schedule;

  int out_channels() const { return c * multiplier; }
  int out_h() const { return (h + pad_top + pad_bottom - dilation_h * (kh - 1) - 1) / stride_h + 1; }
  int out_w() const { return (w + pad_left + pad_right - dilation_w * (kw - 1) - 1) / stride_w + 1; }
};

// What to do with a workload that is invalid: fail the whole spec (the
// default: a build must not silently lose a kernel), or leave it out and
// report it (for randomized test draws, where rejections are counted).
enum class OnInvalidWorkload { kFail, kSkip };

struct Spec {
  std::string file;
  std::string library;  // may be empty: the caller then names the library
  SourceLocation library_where;
  std::vector<Workload> workloads;
  std::vector<Diagnostic> skipped;  // with OnInvalidWorkload::kSkip: the workloads left out, and why
};

// Parses and validates one spec file. Throws SpecError listing every problem
// found (each with file:line:col, what is wrong and what is allowed).
Spec parse_spec_file(const std::string& path, OnInvalidWorkload on_invalid = OnInvalidWorkload::kFail);
// Same, from text; `path` is used in messages only.
Spec parse_spec_text(const std::string& text, const std::string& path,
                     OnInvalidWorkload on_invalid = OnInvalidWorkload::kFail);

}  // namespace convgen::gen
