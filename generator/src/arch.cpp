#include "convgen/gen/arch.hpp"

#include <algorithm>
#include <cctype>
#include <stdexcept>

namespace convgen::gen {
namespace {

constexpr int kKiB = 1024;

std::string cuda_text(int version) { return std::to_string(version / 10) + "." + std::to_string(version % 10); }

std::string known_list() {
  std::string s;
  for (const ArchFacts& f : arch_table()) s += (s.empty() ? "" : ", ") + std::to_string(f.sm);
  return s;
}

// The tightest of every fact over `facts`.
ArchFacts tightest_of(const std::vector<ArchFacts>& facts) {
  ArchFacts t = facts.front();
  for (const ArchFacts& f : facts) {
    t.shared_per_block = std::min(t.shared_per_block, f.shared_per_block);
    t.shared_per_sm = std::min(t.shared_per_sm, f.shared_per_sm);
    t.shared_reserved = std::max(t.shared_reserved, f.shared_reserved);
    t.registers_per_sm = std::min(t.registers_per_sm, f.registers_per_sm);
    t.threads_per_sm = std::min(t.threads_per_sm, f.threads_per_sm);
    t.blocks_per_sm = std::min(t.blocks_per_sm, f.blocks_per_sm);
    t.cp_async = t.cp_async && f.cp_async;
    if (f.sm_count > 0 && (t.sm_count == 0 || f.sm_count < t.sm_count)) t.sm_count = f.sm_count;
  }
  t.sm = facts.front().sm;
  t.family = "the tightest of the table";
  t.example_gpu = "";
  t.tensor_cores = "";
  return t;
}

}  // namespace

const std::vector<ArchFacts>& arch_table() {
  // sm, family, example GPU, shared per block (opt-in), per SM, reserved per
  // block, registers, threads and blocks per SM, SMs of the example GPU,
  // cp.async, tensor cores, first and last CUDA.
  static const std::vector<ArchFacts> table = {
      {70, "Volta", "V100", 96 * kKiB, 96 * kKiB, 0, 65536, 2048, 32, 80, false,
       "fp16 mma.sync (first generation)", 90, 129},
      {75, "Turing", "T4", 64 * kKiB, 64 * kKiB, 0, 65536, 1024, 16, 40, false, "fp16, int8 mma.sync", 100, 0},
      {80, "Ampere", "A100", 163 * kKiB, 164 * kKiB, kKiB, 65536, 2048, 32, 108, true,
       "fp16, bf16, tf32, int8 mma.sync", 110, 0},
      {86, "Ampere", "A10", 99 * kKiB, 100 * kKiB, kKiB, 65536, 1536, 16, 72, true, "fp16, bf16, tf32, int8 mma.sync",
       111, 0},
      {87, "Ampere", "Jetson AGX Orin", 163 * kKiB, 164 * kKiB, kKiB, 65536, 2048, 16, 16, true,
       "fp16, bf16, tf32, int8 mma.sync", 114, 0},
      {89, "Ada", "L4", 99 * kKiB, 100 * kKiB, kKiB, 65536, 1536, 24, 58, true,
       "fp16, bf16, tf32, fp8, int8 mma.sync", 118, 0},
      {90, "Hopper", "H100 SXM", 227 * kKiB, 228 * kKiB, kKiB, 65536, 2048, 32, 132, true,
       "wgmma and mma.sync: fp16, bf16, tf32, fp8, int8", 118, 0},
      {100, "Blackwell", "B200", 227 * kKiB, 228 * kKiB, kKiB, 65536, 2048, 32, 148, true,
       "tcgen05 and mma.sync: fp16, bf16, tf32, fp8, fp6, fp4, int8", 128, 0},
      {120, "Blackwell", "RTX 5090", 99 * kKiB, 100 * kKiB, kKiB, 65536, 1536, 32, 170, true,
       "mma.sync: fp16, bf16, tf32, fp8, fp6, fp4, int8", 128, 0},
  };
  return table;
}

const ArchFacts* find_arch(int sm) {
  for (const ArchFacts& f : arch_table()) {
    if (f.sm == sm) return &f;
  }
  return nullptr;
}

int min_arch() { return arch_table().front().sm; }

const char* default_archs() { return "75-real;80-real;86-real;89-real;90"; }

std::string ArchTarget::list() const {
  std::string s;
  for (const ArchEntry& e : entries) s += (s.empty() ? "" : ";") + e.text;
  return s;
}

int ArchTarget::resident_blocks(int threads, int shared_bytes) const {
  int blocks = 1 << 30;
  for (const ArchFacts& f : facts) {
    int b = std::min(f.blocks_per_sm, f.threads_per_sm / std::max(1, threads));
    if (shared_bytes > 0) b = std::min(b, f.shared_per_sm / (shared_bytes + f.shared_reserved));
    blocks = std::min(blocks, b);
  }
  return std::max(1, blocks);
}

ArchTarget parse_arch_list(const std::string& list, int cuda_version) {
  ArchTarget t;
  std::string item;
  const auto take = [&](std::string text) {
    while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) text.pop_back();
    text.erase(0, text.find_first_not_of(" \t"));
    if (text.empty()) return;
    // CMake's forms: 90, 90-real, 90-virtual, and the arch-specific 90a / 100f.
    std::size_t digits = 0;
    while (digits < text.size() && std::isdigit(static_cast<unsigned char>(text[digits]))) ++digits;
    std::string rest = text.substr(digits);
    if (!rest.empty() && (rest[0] == 'a' || rest[0] == 'f')) rest.erase(0, 1);
    if (digits == 0 || digits > 4 || !(rest.empty() || rest == "-real" || rest == "-virtual")) {
      throw std::invalid_argument("architecture '" + text +
                                  "' is not one CMake's CUDA_ARCHITECTURES accepts: write a compute capability "
                                  "times ten, e.g. 75, 80-real or 90-virtual (native, all and all-major are "
                                  "resolved by convgen_add_library before they reach the generator)");
    }
    const int sm = std::stoi(text.substr(0, digits));
    if (sm < min_arch()) {
      throw std::invalid_argument("architecture " + text + " is below sm_" + std::to_string(min_arch()) +
                                  ", the oldest GPU convgen builds for; convgen knows sm " + known_list());
    }
    if (const ArchFacts* f = find_arch(sm); f != nullptr && cuda_version > 0) {
      if (cuda_version < f->first_cuda || (f->last_cuda > 0 && cuda_version > f->last_cuda)) {
        throw std::invalid_argument(
            "architecture " + text + " (" + f->family + ", e.g. " + f->example_gpu + ") is not supported by CUDA " +
            cuda_text(cuda_version) + ": it needs CUDA " + cuda_text(f->first_cuda) +
            (f->last_cuda > 0 ? " to " + cuda_text(f->last_cuda) : " or later"));
      }
    }
    t.entries.push_back({text, sm});
  };
  for (char c : list) {
    if (c == ';' || c == ',') {
      take(item);
      item.clear();
    } else {
      item += c;
    }
  }
  take(item);
  if (t.entries.empty()) {
    throw std::invalid_argument("the architecture list is empty: name at least one, e.g. 90 (the default is " +
                                std::string(default_archs()) + ")");
  }
  std::vector<int> sms;
  for (const ArchEntry& e : t.entries) sms.push_back(e.sm);
  std::sort(sms.begin(), sms.end());
  sms.erase(std::unique(sms.begin(), sms.end()), sms.end());
  for (int sm : sms) {
    if (const ArchFacts* f = find_arch(sm)) {
      t.facts.push_back(*f);
    } else {
      t.unknown.push_back(sm);
    }
  }
  // An architecture the table does not hold is held to every fact of the
  // table at its tightest, so whatever it is, the schedules fit it.
  if (!t.unknown.empty()) {
    ArchFacts unknown = tightest_of(arch_table());
    unknown.sm = t.unknown.back();
    unknown.family = "unknown";
    unknown.sm_count = arch_table().back().sm_count;  // for the default rule: as the newest GPU convgen knows
    t.facts.push_back(unknown);
  }
  // The newest known architecture of the list (the default rule sizes for
  // its GPU); an unknown one newer than all of them counts as the newest
  // known one.
  t.newest = t.facts.front();
  for (const ArchFacts& f : t.facts) {
    if (find_arch(f.sm) != nullptr && f.sm >= t.newest.sm) t.newest = f;
  }
  return t;
}

const ArchTarget& default_target() {
  static const ArchTarget target = parse_arch_list(default_archs());
  return target;
}

}  // namespace convgen::gen
