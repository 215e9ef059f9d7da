// Stage 4: rendered files reach the disk, only when their text changed.
#include <gtest/gtest.h>

#include <sys/file.h>
#include <sys/resource.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstring>

#include "convgen/gen/digest.hpp"
#include "convgen/gen/output.hpp"
#include "test_util.h"

namespace convgen_test {
namespace {

std::vector<std::string> sorted(std::vector<std::string> v) {
  std::sort(v.begin(), v.end());
  return v;
}

// The folder's names, less the lock file (every writing run leaves it).
std::vector<std::string> listing(const fs::path& dir) {
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (entry.path().filename() != kLockFileName) names.push_back(entry.path().filename().string());
  }
  return sorted(names);
}

WriteOptions library(const std::string& name, bool prune = false) {
  WriteOptions o;
  o.manifest = manifest_name(name);
  o.prune = prune;
  return o;
}

// Lowers the file-size limit for a scope: a write past it fails with EFBIG
// (SIGXFSZ ignored, as main() does).
class FileSizeLimit {
 public:
  explicit FileSizeLimit(rlim_t bytes) {
    getrlimit(RLIMIT_FSIZE, &saved_);
    old_handler_ = std::signal(SIGXFSZ, SIG_IGN);
    rlimit lowered = saved_;
    lowered.rlim_cur = bytes;
    setrlimit(RLIMIT_FSIZE, &lowered);
  }
  ~FileSizeLimit() {
    setrlimit(RLIMIT_FSIZE, &saved_);
    std::signal(SIGXFSZ, old_handler_);
  }

 private:
  rlimit saved_{};
  void (*old_handler_)(int) = nullptr;
};

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
  const WriteReport report = write_outputs(dir.string(), files, {});
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
  write_outputs(dir.string(), files, {});
  for (const char* name : {"lib.h", "k1.cu", "k2.cu"}) fs::last_write_time(dir / name, kLongAgo);

  // Same texts: nothing is touched.
  WriteReport report = write_outputs(dir.string(), files, {});
  EXPECT_TRUE(report.written.empty());
  EXPECT_EQ(report.unchanged, (std::vector<std::string>{"lib.h", "k1.cu", "k2.cu"}));
  for (const char* name : {"lib.h", "k1.cu", "k2.cu"}) {
    EXPECT_EQ(fs::last_write_time(dir / name), kLongAgo) << name << " was rewritten";
  }

  // One text changes, one file is new: only those are written.
  files[1].text = "k1 changed\n";
  files.push_back({"k3.cu", "k3\n"});
  report = write_outputs(dir.string(), files, {});
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
  write_outputs(dir.string(), files, {});
  write_file(dir / "k1.cu", "line 1\n");
  EXPECT_EQ(write_outputs(dir.string(), files, {}).written, std::vector<std::string>{"k1.cu"});
  EXPECT_EQ(read_file(dir / "k1.cu"), "line 1\nline 2\n");
}

// An error before the renames changes no final file and leaves no
// temporary one: here the file-size limit stops the second of three writes.
TEST(WriteOutputs, AFailedWriteChangesNothing) {
  TempDir tmp;
  const fs::path dir = tmp / "out";
  const std::vector<OutputFile> old_files = {{"a.cu", "old a\n"}, {"b.cu", "old b\n"}, {"c.cu", "old c\n"}};
  write_outputs(dir.string(), old_files, library("lib"));
  const std::string old_manifest = read_file(dir / "lib.manifest");
  const std::vector<OutputFile> new_files = {
      {"a.cu", "new a\n"}, {"b.cu", std::string(4096, 'b')}, {"c.cu", "new c\n"}, {"d.cu", "new d\n"}};
  try {
    const FileSizeLimit limit(1024);
    write_outputs(dir.string(), new_files, library("lib", true));
    FAIL() << "a write past the file-size limit succeeded";
  } catch (const std::runtime_error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find((dir / "b.cu").string()), std::string::npos) << what;
    EXPECT_NE(what.find(std::strerror(EFBIG)), std::string::npos) << what;
  }
  EXPECT_EQ(listing(dir), sorted({"a.cu", "b.cu", "c.cu", "lib.manifest"}));
  for (const OutputFile& f : old_files) EXPECT_EQ(read_file(dir / f.path), f.text) << f.path;
  EXPECT_EQ(read_file(dir / "lib.manifest"), old_manifest);
}

// A link where a file is to be written is an error naming it, whatever it
// points at; the file it points at is never written.
TEST(WriteOutputs, ALinkAtAFinalNameIsRefusedNotFollowed) {
  TempDir tmp;
  const fs::path dir = tmp / "out";
  write_file(tmp / "sentinel", "sentinel\n");
  for (const char* name : {"lib.h", "k1.cu", "lib.manifest"}) {
    fs::create_directories(dir);
    fs::create_symlink(tmp / "sentinel", dir / name);
    try {
      write_outputs(dir.string(), {{"lib.h", "header\n"}, {"k1.cu", "k1\n"}}, library("lib"));
      ADD_FAILURE() << "a link at " << name << " was accepted";
    } catch (const std::runtime_error& e) {
      EXPECT_NE(std::string(e.what()).find((dir / name).string() + " is a symbolic link"), std::string::npos)
          << e.what();
    }
    EXPECT_EQ(read_file(tmp / "sentinel"), "sentinel\n");
    EXPECT_TRUE(fs::is_symlink(dir / name));
    EXPECT_EQ(listing(dir), std::vector<std::string>{name}) << "a failed run wrote a file";
    fs::remove_all(dir);
  }
  // The lock file too: it is opened, never through a link.
  fs::create_directories(dir);
  fs::create_symlink(tmp / "sentinel", dir / kLockFileName);
  EXPECT_THROW(write_outputs(dir.string(), {{"k1.cu", "k1\n"}}, library("lib")), std::runtime_error);
  EXPECT_EQ(read_file(tmp / "sentinel"), "sentinel\n");
}

// The folder itself may be a link (a build tree's): names inside it count.
TEST(WriteOutputs, TheFolderMayBeALink) {
  TempDir tmp;
  fs::create_directories(tmp / "real");
  fs::create_directory_symlink(tmp / "real", tmp / "link");
  write_outputs((tmp / "link").string(), {{"k1.cu", "k1\n"}}, library("lib"));
  EXPECT_EQ(read_file(tmp / "real" / "k1.cu"), "k1\n");
}

// Temporary files a killed run left (links among them) go; the files they
// point at stay.
TEST(WriteOutputs, StaleTemporaryFilesAreRemoved) {
  TempDir tmp;
  const fs::path dir = tmp / "out";
  write_file(tmp / "sentinel", "sentinel\n");
  write_file(dir / (std::string(kTempPrefix) + "abc123"), "half a fi");
  fs::create_symlink(tmp / "sentinel", dir / (std::string(kTempPrefix) + "link"));
  write_file(dir / "draft.cu.tmp", "mine\n");  // not ours
  const WriteReport report = write_outputs(dir.string(), {{"k1.cu", "k1\n"}}, library("lib"));
  EXPECT_EQ(sorted(report.stale_temps), sorted({std::string(kTempPrefix) + "abc123", std::string(kTempPrefix) + "link"}));
  EXPECT_EQ(listing(dir), sorted({"draft.cu.tmp", "k1.cu", "lib.manifest"}));
  EXPECT_EQ(read_file(tmp / "sentinel"), "sentinel\n");
}

// A second run waits for the lock, and fails after its timeout naming the
// folder and the lock file, having written nothing.
TEST(WriteOutputs, ALockedFolderTimesOut) {
  TempDir tmp;
  const fs::path dir = tmp / "out";
  write_outputs(dir.string(), {{"k1.cu", "k1\n"}}, library("lib"));
  const int fd = ::open((dir / kLockFileName).c_str(), O_RDWR | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::flock(fd, LOCK_EX), 0);
  WriteOptions o = library("lib");
  o.lock_timeout_s = 0.2;
  const auto start = std::chrono::steady_clock::now();
  try {
    write_outputs(dir.string(), {{"k1.cu", "changed\n"}}, o);
    ADD_FAILURE() << "a locked folder was written";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("timed out after 0.2 s waiting for another convgen run writing " +
                                         dir.string() + " (it holds the lock file " +
                                         (dir / kLockFileName).string()),
              std::string::npos)
        << e.what();
  }
  EXPECT_GE(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(200));
  ::close(fd);
  EXPECT_EQ(read_file(dir / "k1.cu"), "k1\n");
  EXPECT_EQ(write_outputs(dir.string(), {{"k1.cu", "changed\n"}}, o).written,
            (std::vector<std::string>{"k1.cu", "lib.manifest"}));
}

// The manifest is what `sha256sum` prints, and lists every file.
TEST(Manifest, ListsEveryFileWithItsSha256) {
  TempDir tmp;
  const fs::path dir = tmp / "out";
  write_outputs(dir.string(), {{"lib.h", "header\n"}, {"k1.cu", "k1\n"}}, library("lib"));
  EXPECT_EQ(read_file(dir / "lib.manifest"),
            sha256_hex("header\n") + "  lib.h\n" + sha256_hex("k1\n") + "  k1.cu\n");
  std::vector<std::string> problems;
  const std::vector<ManifestEntry> back = parse_manifest(
      read_file(dir / "lib.manifest") + "not a line\n" + sha256_hex("x") + "  ../escape.cu\n" + sha256_hex("y") +
          "  " + kTempPrefix + "x\n",
      problems);
  ASSERT_EQ(back.size(), 2u);
  EXPECT_EQ(back[1].name, "k1.cu");
  EXPECT_EQ(back[1].sha256, sha256_hex("k1\n"));
  EXPECT_EQ(problems, (std::vector<std::string>{"line 3 is not '<sha256>  <file name>': ignored",
                                                "line 4 is not '<sha256>  <file name>': ignored",
                                                "line 5 is not '<sha256>  <file name>': ignored"}));
}

// --prune removes what this library's previous manifest lists and the new
// run does not make, where the bytes are still convgen's; nothing else.
TEST(Manifest, PruneRemovesOnlyThisLibrarysUneditedStaleFiles) {
  TempDir tmp;
  const fs::path dir = tmp / "out";
  const std::string marker = std::string("// ") + kGeneratedMarker + "mine.yaml, or so it says\n";
  write_file(dir / "user.cu", marker);  // the user's, whatever it says
  write_file(dir / "notes.txt", "mine\n");
  write_outputs(dir.string(), {{"a.h", "a\n"}, {"a_k1.cu", "a1\n"}, {"a_k2.cu", "a2\n"}}, library("a"));
  write_outputs(dir.string(), {{"b.h", "b\n"}, {"b_k1.cu", "b1\n"}, {"b_k2.cu", "b2\n"}, {"b_k3.cu", "b3\n"}},
                library("b"));
  write_file(dir / "b_k3.cu", "b3, edited by hand\n");

  // Library b drops k2 and k3 and prunes: k2 goes, the edited k3 stays (a
  // warning); a's files, the user's and the lock stay.
  const WriteReport report = write_outputs(dir.string(), {{"b.h", "b\n"}, {"b_k1.cu", "b1\n"}}, library("b", true));
  EXPECT_EQ(report.removed, std::vector<std::string>{"b_k2.cu"});
  EXPECT_EQ(report.kept, std::vector<std::string>{"b_k3.cu"});
  ASSERT_EQ(report.warnings.size(), 1u);
  EXPECT_NE(report.warnings[0].find("b_k3.cu is no longer made, but it changed since convgen wrote it"),
            std::string::npos);
  EXPECT_EQ(listing(dir), sorted({"a.h", "a_k1.cu", "a_k2.cu", "a.manifest", "b.h", "b_k1.cu", "b_k3.cu",
                                  "b.manifest", "user.cu", "notes.txt"}));
  EXPECT_EQ(read_file(dir / "user.cu"), marker);
  EXPECT_EQ(read_file(dir / "b.manifest"), sha256_hex("b\n") + "  b.h\n" + sha256_hex("b1\n") + "  b_k1.cu\n");

  // Library a pruned with all its files still made: nothing goes.
  EXPECT_TRUE(write_outputs(dir.string(), {{"a.h", "a\n"}, {"a_k1.cu", "a1\n"}, {"a_k2.cu", "a2\n"}},
                            library("a", true))
                  .removed.empty());
}

// Without --prune a stale file stays listed, so that a later --prune
// removes it; without a previous manifest, --prune removes nothing.
// Two libraries that make one kernel name its file alike, with different
// bytes (each its own namespace): the second into the folder is refused,
// naming the first's manifest, and writes nothing; the same bytes pass.
TEST(Manifest, AnotherLibrarysFileIsNeverOverwritten) {
  TempDir tmp;
  const fs::path dir = tmp / "out";
  write_outputs(dir.string(), {{"a.h", "a\n"}, {"k.cu", "k of a\n"}}, library("a"));
  try {
    write_outputs(dir.string(), {{"b.h", "b\n"}, {"k.cu", "k of b\n"}}, library("b"));
    FAIL() << "library b overwrote library a's k.cu";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("k.cu belongs to another library"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("a.manifest lists it"), std::string::npos) << e.what();
  }
  EXPECT_EQ(listing(dir), sorted({"a.h", "a.manifest", "k.cu"}));
  EXPECT_EQ(read_file(dir / "k.cu"), "k of a\n");
  // A file whose bytes this run would not change is not overwritten.
  write_outputs(dir.string(), {{"c.h", "c\n"}, {"k.cu", "k of a\n"}}, library("c"));
  EXPECT_EQ(read_file(dir / "k.cu"), "k of a\n");
}

TEST(Manifest, StaleFilesStayListedUntilPruned) {
  TempDir tmp;
  const fs::path dir = tmp / "out";
  write_outputs(dir.string(), {{"k1.cu", "1\n"}, {"k2.cu", "2\n"}}, library("lib"));
  WriteReport report = write_outputs(dir.string(), {{"k1.cu", "1\n"}}, library("lib"));
  EXPECT_TRUE(report.removed.empty());
  EXPECT_NE(read_file(dir / "lib.manifest").find("  k2.cu\n"), std::string::npos);
  report = write_outputs(dir.string(), {{"k1.cu", "1\n"}}, library("lib", true));
  EXPECT_EQ(report.removed, std::vector<std::string>{"k2.cu"});
  EXPECT_EQ(listing(dir), sorted({"k1.cu", "lib.manifest"}));

  fs::remove(dir / "lib.manifest");
  write_file(dir / "old.cu", "old\n");
  report = write_outputs(dir.string(), {{"k1.cu", "1\n"}}, library("lib", true));
  EXPECT_TRUE(report.removed.empty());
  ASSERT_EQ(report.notes.size(), 1u);
  EXPECT_NE(report.notes[0].find("so --prune removes nothing this time"), std::string::npos);
  EXPECT_TRUE(fs::exists(dir / "old.cu"));
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
