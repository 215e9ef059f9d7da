// Stage 4: rendered files reach the disk, only when their text changed.
#include <gtest/gtest.h>

#include <algorithm>

#include "convgen/gen/digest.hpp"
#include "convgen/gen/output.hpp"
#include "test_util.h"

namespace convgen_test {
namespace {

std::vector<std::string> sorted(std::vector<std::string> v) {
  std::sort(v.begin(), v.end());
  return v;
}

std::vector<std::string> listing(const fs::path& dir) {
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(dir)) names.push_back(entry.path().filename().string());
  return sorted(names);
}

// An old timestamp, so that a rewrite shows even on a coarse clock.
// The digest behind manifests and tuning checksums: FIPS 180-2's test vectors.
TEST(Digest, Sha256OfKnownTexts) {
  EXPECT_EQ(sha256_hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(sha256_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

const fs::file_time_type kLongAgo = fs::file_time_type::clock::now() - std::chrono::hours(24 * 365);

TEST(WriteOutputs, FirstRunWritesEverythingIntoANewDirectory) {
  TempDir tmp;
  const fs::path dir = tmp / "a" / "b";
  const std::vector<OutputFile> files = {{"lib.h", "header\n"}, {"lib_registry.cu", "registry\n"}, {"k1.cu", "k1\n"}};
  const WriteReport report = write_outputs(dir.string(), files, false);
  EXPECT_EQ(report.written, (std::vector<std::string>{"lib.h", "lib_registry.cu", "k1.cu"}));
  EXPECT_TRUE(report.unchanged.empty());
  EXPECT_TRUE(report.removed.empty());
  EXPECT_EQ(listing(dir), sorted({"lib.h", "lib_registry.cu", "k1.cu"}));  // no temporary files left
  EXPECT_EQ(read_file(dir / "lib.h"), "header\n");
  EXPECT_EQ(read_file(dir / "k1.cu"), "k1\n");
}

TEST(WriteOutputs, OnlyChangedFilesAreWritten) {
  TempDir tmp;
  const fs::path dir = tmp / "out";
  std::vector<OutputFile> files = {{"lib.h", "header\n"}, {"k1.cu", "k1\n"}, {"k2.cu", "k2\n"}};
  write_outputs(dir.string(), files, false);
  for (const char* name : {"lib.h", "k1.cu", "k2.cu"}) fs::last_write_time(dir / name, kLongAgo);

  // Same texts: nothing is touched.
  WriteReport report = write_outputs(dir.string(), files, false);
  EXPECT_TRUE(report.written.empty());
  EXPECT_EQ(report.unchanged, (std::vector<std::string>{"lib.h", "k1.cu", "k2.cu"}));
  for (const char* name : {"lib.h", "k1.cu", "k2.cu"}) {
    EXPECT_EQ(fs::last_write_time(dir / name), kLongAgo) << name << " was rewritten";
  }

  // One text changes, one file is new: only those are written.
  files[1].text = "k1 changed\n";
  files.push_back({"k3.cu", "k3\n"});
  report = write_outputs(dir.string(), files, false);
  EXPECT_EQ(report.written, (std::vector<std::string>{"k1.cu", "k3.cu"}));
  EXPECT_EQ(report.unchanged, (std::vector<std::string>{"lib.h", "k2.cu"}));
  EXPECT_EQ(read_file(dir / "k1.cu"), "k1 changed\n");
  EXPECT_NE(fs::last_write_time(dir / "k1.cu"), kLongAgo);
  EXPECT_EQ(fs::last_write_time(dir / "lib.h"), kLongAgo);
  EXPECT_EQ(fs::last_write_time(dir / "k2.cu"), kLongAgo);
  EXPECT_EQ(listing(dir), sorted({"lib.h", "k1.cu", "k2.cu", "k3.cu"}));
}

TEST(WriteOutputs, ATruncatedOrEditedFileIsRewritten) {
  TempDir tmp;
  const fs::path dir = tmp / "out";
  const std::vector<OutputFile> files = {{"k1.cu", "line 1\nline 2\n"}};
  write_outputs(dir.string(), files, false);
  write_file(dir / "k1.cu", "line 1\n");
  EXPECT_EQ(write_outputs(dir.string(), files, false).written, std::vector<std::string>{"k1.cu"});
  EXPECT_EQ(read_file(dir / "k1.cu"), "line 1\nline 2\n");
}

TEST(WriteOutputs, PruneRemovesOnlyStaleFilesConvgenWrote) {
  TempDir tmp;
  const fs::path dir = tmp / "out";
  const std::string generated = std::string("// old_kernel\n//\n// ") + kGeneratedMarker + "old.yaml:3.\n";
  write_file(dir / "stale_kernel.cu", generated);
  write_file(dir / "stale.h", generated);
  write_file(dir / "mykernel.cu", "// my own kernel\n__global__ void mine() {}\n");  // the user's: stays
  write_file(dir / "my.h", "#pragma once\n");                                       // the user's: stays
  write_file(dir / "notes.txt", "mine\n");
  write_file(dir / "kernel.cuh", generated);  // not an extension convgen writes
  write_file(dir / "CMakeLists.txt", "mine\n");
  write_file(dir / "sub" / "deep.cu", generated);  // not in the directory itself
  fs::create_directories(dir / "folder.cu");     // a directory, not a file
  // What an interrupted run leaves: a temporary file of convgen's, and one of the user's.
  write_file(dir / "k9.cu.tmp", generated.substr(0, generated.size() - 3));
  write_file(dir / "draft.cu.tmp", "mine\n");
  const std::vector<OutputFile> files = {{"lib.h", "header\n"}, {"k1.cu", "k1\n"}};

  // Without --prune, nothing goes.
  WriteReport report = write_outputs(dir.string(), files, false);
  EXPECT_TRUE(report.removed.empty());
  EXPECT_TRUE(fs::exists(dir / "stale_kernel.cu"));

  report = write_outputs(dir.string(), files, true);
  EXPECT_EQ(sorted(report.removed), sorted({"stale_kernel.cu", "stale.h", "k9.cu.tmp"}));
  EXPECT_EQ(report.unchanged, (std::vector<std::string>{"lib.h", "k1.cu"}));
  EXPECT_EQ(listing(dir), sorted({"lib.h", "k1.cu", "mykernel.cu", "my.h", "notes.txt", "kernel.cuh", "CMakeLists.txt",
                                  "sub", "folder.cu", "draft.cu.tmp"}));
  EXPECT_EQ(read_file(dir / "mykernel.cu"), "// my own kernel\n__global__ void mine() {}\n");
  EXPECT_TRUE(fs::exists(dir / "sub" / "deep.cu"));

  // Pruning again finds nothing more.
  EXPECT_TRUE(write_outputs(dir.string(), files, true).removed.empty());
}

// What prune relies on: every file convgen renders says it wrote it.
TEST(WriteOutputs, EveryRenderedFileCarriesTheMarker) {
  const Templates t = Templates::load(CONVGEN_TEMPLATE_DIR);
  for (const char* spec : {"seeds.yaml", "mobilenet_v2.yaml"}) {
    const LibraryPlan lib =
        plan_library({parse_spec_file(std::string(CONVGEN_SOURCE_DIR) + "/specs/" + spec)}, "");
    for (const OutputFile& f : render_library(t, lib)) {
      EXPECT_NE(f.text.substr(0, 1024).find(kGeneratedMarker), std::string::npos) << f.path;
    }
  }
}

}  // namespace
}  // namespace convgen_test
