// The tuning database: schedules `convgen tune` measured best on a GPU, kept
// in a YAML file beside the spec and applied by the build (a schedule the
// spec writes wins, then the database's entry for the target GPU, then the
// default rule). Its reader and writer are one unit (tuning_db.cpp), as are
// the lookup of a kernel's entry and the check that an entry is current.
//
// The file is tamper-evident: each entry carries a SHA-256 checksum of its
// content (tuning_entry_canonical), and the file ends with a record counting
// its entries. An entry edited after convgen wrote it, or a file cut short,
// is an error; --allow-unverified-tuning uses such entries marked
// unverified, and `convgen vouch` re-signs a file whose entries a person
// vouches for.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "convgen/gen/output.hpp"
#include "convgen/gen/plan.hpp"
#include "convgen/gen/spec.hpp"

namespace convgen::gen {

struct Templates;  // render.hpp

// The generator's version (convgen/limits.h): part of every fingerprint, and `--version`.
inline constexpr const char* kConvgenVersion = CONVGEN_VERSION;

// The GPU an entry was tuned on, as the CUDA driver names it.
struct GpuId {
  std::string name;                // e.g. "NVIDIA H100 80GB HBM3"
  int sms = 0;                     // streaming multiprocessors
  std::string compute_capability;  // e.g. "9.0"
};

// One kernel tuned on one GPU.
struct TuningEntry {
  SourceLocation where;      // the entry's list item
  std::string kernel;        // the kernel's one name (kernel_name())
  const Operator* op = nullptr;
  GpuId gpu;
  ScheduleRequest schedule;  // the chosen schedule, parsed as a spec's `schedule:` is
  std::string objective = "hot";  // what it was ranked by: hot or cold
  double time_us = 0;        // the chosen schedule's time, by the objective
  double default_us = 0;     // the default rule's schedule's, in the same run
  std::string default_schedule;  // the default rule's schedule, for the reader
  int compiled = 0, verified = 0, rejected = 0, failed = 0;  // candidates
  double tuning_s = 0;       // wall time spent on this kernel
  std::string date;          // YYYY-MM-DD
  std::string fingerprint;   // tuning_fingerprint() of the generator that tuned it
  std::string convgen_version = kConvgenVersion;  // the convgen that tuned it
  // False for an entry whose checksum does not match its content (or that
  // has none), kept because the reader was told to (TuningTrust): an
  // unverified entry. The writer signs only entries whose checksum matches.
  bool checksum_matches = true;
};

// The database format the writer writes and the reader reads.
inline constexpr int kTuningFormat = 2;

// What the reader does with an entry whose checksum does not match its
// content, and with a file's end record.
enum class TuningTrust {
  kVerify,           // an error at the entry: the default
  kAllowUnverified,  // --allow-unverified-tuning: kept, marked unverified
  // `convgen vouch`: also reads format 1 (no checksums), and a missing or
  // wrong end record; every entry is marked unverified until the caller
  // vouches for it.
  kVouch,
};

struct TuningDb {
  std::string file;
  std::vector<TuningEntry> entries;  // sorted by kernel, then GPU name

  // The entry of `kernel` on the GPU named `gpu`; null if none.
  const TuningEntry* find(const std::string& kernel, const std::string& gpu) const;
  // The GPU names the entries are for, sorted, each once.
  std::vector<std::string> gpus() const;
  // Adds or replaces the entry of the same kernel and GPU, keeping the order.
  void put(TuningEntry entry);
};

// Parses a tuning database. Throws InputError listing every problem found
// (file:line:col, what is wrong and what is allowed), as for a spec: with
// TuningTrust::kVerify, an entry whose checksum fails and a missing or
// wrong end record are among them.
TuningDb parse_tuning_file(const std::string& path, TuningTrust trust = TuningTrust::kVerify);
TuningDb parse_tuning_text(const std::string& text, const std::string& path,
                           TuningTrust trust = TuningTrust::kVerify);

// The content an entry's checksum covers, one field a line, exact (numbers
// as hex floats): two entries with the same rendering mean the same thing.
// Everything but the entry's location and its checksum.
std::string tuning_entry_canonical(const TuningEntry& entry);

// The database as YAML, entries in order, each with its checksum, and the
// end record; parse_tuning_text reads it back. Throws std::logic_error for
// an unverified entry: convgen signs only what it measured or what a
// person vouched for (`convgen vouch`).
std::string tuning_text(const TuningDb& db);
// Writes `tuning_text(db)` to `path`, replacing the file, by the write
// protocol of output.hpp (the folder locked, a temporary file renamed into
// place): a reader (or a killed run) never sees half a database. The folder
// must exist. Throws std::runtime_error on an I/O failure or a lock wait
// that times out.
void write_tuning_file(const std::string& path, const TuningDb& db, double lock_timeout_s = kDefaultLockTimeoutS);

// Removes the entries whose checksum fails (read with
// TuningTrust::kAllowUnverified), returning a note for each: what
// `convgen tune` does, as it never signs what it did not measure.
std::vector<std::string> drop_unverified_entries(TuningDb& db);

// Reads the database at `path` (as `trust` says), lets `edit` change it and
// writes it back, all under the lock of its folder: an entry another run
// writes meanwhile is never lost (`convgen vouch`). Returns it as written.
TuningDb update_tuning_file(const std::string& path, TuningTrust trust, const std::function<void(TuningDb&)>& edit,
                            double lock_timeout_s = kDefaultLockTimeoutS);

// What merge_into_tuning_file did.
struct TuningMerge {
  TuningDb db;  // the database as written
  int added = 0, replaced = 0;
  int kept = 0;       // kKeepFaster: entries left out, the database holding a faster one
  int conflicts = 0;  // kKeepFaster: entries whose fingerprint differs from the one held (the new one is put)
  std::vector<std::string> notes;  // entries replaced by one with another schedule, kept, conflicting, or dropped
};

// What becomes of an entry for a kernel and GPU the database already holds.
enum class MergePolicy {
  kReplace,     // the new entry replaces it (`convgen tune`: the latest measurement)
  kKeepFaster,  // the faster of the two stays, where both were measured alike: the same fingerprint
                // (generator and template) and objective; else the new one, with a note
                // (`convgen tune merge`, the cluster driver)
};

// Read-merge-write under the folder's lock: reads the database at `path`
// (none: an empty one), puts `entries` (one of the same kernel and GPU is
// replaced, or kept, by `policy`) and writes it back as write_tuning_file does. Concurrent runs
// (`convgen tune` after each kernel, `convgen tune merge`) never lose each
// other's entries. `from` names the entries' origin in the notes. An entry
// on disk whose checksum fails is an error (InputError), unless
// `drop_unverified`: then it is dropped with a note (`convgen tune`, which
// tunes such a kernel again rather than sign what it did not measure).
TuningMerge merge_into_tuning_file(const std::string& path, const std::vector<TuningEntry>& entries,
                                   const std::string& from = "", double lock_timeout_s = kDefaultLockTimeoutS,
                                   bool drop_unverified = false, MergePolicy policy = MergePolicy::kReplace);

// 16 hex digits identifying what made a kernel from a schedule: the
// generator's version and the algorithm's template text, its comment lines
// left out. An entry whose fingerprint differs from the current one is
// stale: reported, never used.
std::string tuning_fingerprint(const std::string& template_text);
// Each algorithm's current fingerprint, by template file: what tune signs
// its entries with and what a build checks them against.
std::map<std::string, std::string> tuning_fingerprints(const Templates& templates);

// Empty when `entry` was tuned by this generator with the current template
// of its algorithm (`fingerprints`: by template file, Algorithm::template_file);
// else why it cannot be used, as a note ("ignored: ...").
std::string stale_entry_note(const TuningEntry& entry, const std::map<std::string, std::string>& fingerprints);

// The database as plan_library's schedule lookup: the database, the GPU
// whose entries to use (empty: the database's only GPU) and the current
// fingerprint of each template file. A kernel takes its entry for that GPU
// when the entry is current (else a note says why not). A GPU named that
// the database holds no entry for is a UsageError (listing the GPUs it
// holds), unless `allow_untuned`: then a note, and every kernel keeps the
// default rule's schedule. An unverified entry (read with
// --allow-unverified-tuning) applies as ScheduleOrigin::kUnverified, with a
// note. Entries that name no kernel of the specs are listed in one note.
struct TuningSelection : ScheduleLookup {
  const TuningDb* db = nullptr;
  std::string gpu;
  bool allow_untuned = false;
  std::map<std::string, std::string> fingerprints;

  void begin_planning(std::vector<Diagnostic>& notes) const override;
  std::optional<LookedUpSchedule> find(const Workload& wl, const std::string& kernel,
                                       std::vector<Diagnostic>& notes) const override;
  void report_unmatched(const std::set<std::string>& kernels, std::vector<Diagnostic>& notes) const override;

 private:
  // The GPU whose entries apply: the one named, else the database's only one.
  std::string applied_gpu() const;
  // Stale entries of one planning: the first few are noted one by one, the
  // rest counted into one note (report_unmatched), so that a database
  // tuned before the templates changed does not bury the build's output.
  static constexpr int kStaleListed = 5;
  mutable int stale_ = 0;
};

}  // namespace convgen::gen
