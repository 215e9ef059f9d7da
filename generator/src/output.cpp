#include "convgen/gen/output.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <stdexcept>
#include <thread>

#include "convgen/gen/digest.hpp"

namespace convgen::gen {

namespace fs = std::filesystem;

namespace {

std::runtime_error io_error(const std::string& what, int error) {
  return std::runtime_error(what + ": " + std::strerror(error));
}

// Closes a descriptor on every path out of a scope.
struct Fd {
  int fd = -1;
  explicit Fd(int f) : fd(f) {}
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
};

// A fresh random name with our prefix: the suffix makes two runs (or a
// planted file) never share one; O_EXCL catches the rest.
std::string temp_name() {
  static thread_local std::mt19937_64 rng{std::random_device{}()};
  static constexpr char kChars[] = "abcdefghijklmnopqrstuvwxyz0123456789";
  std::string name = kTempPrefix;
  for (int i = 0; i < 12; ++i) name += kChars[rng() % (sizeof kChars - 1)];
  return name;
}

void write_all(int fd, const std::string& bytes, const std::string& what) {
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw io_error("cannot write " + what, errno);
    }
    done += static_cast<size_t>(n);
  }
}

// A plain name of a file in the folder: no folder part, not ours.
bool plain_file_name(const std::string& name) {
  return !name.empty() && name != "." && name != ".." && name.find('/') == std::string::npos &&
         name.find('\n') == std::string::npos && name.rfind(kTempPrefix, 0) != 0 && name != kLockFileName;
}

}  // namespace

// ---------------------------------------------------------------------------
// The locked folder.

LockedFolder::LockedFolder(const std::string& dir, double timeout_s, bool create) : dir_(dir) {
  if (create) {
    std::error_code ec;
    fs::create_directories(dir, ec);
    if (ec) throw std::runtime_error("cannot create the folder " + dir + ": " + ec.message());
  }
  // The folder itself may be a link (the user names it); names inside are not followed.
  dir_fd_ = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir_fd_ < 0) throw io_error("cannot open the folder " + dir, errno);
  lock_fd_ = ::openat(dir_fd_, kLockFileName, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK, 0666);
  if (lock_fd_ < 0 && (errno == EACCES || errno == EROFS)) {
    // A folder this process may not write: an existing lock still serializes
    // with writers; without one, no run can write here, so none needs a lock.
    lock_fd_ = ::openat(dir_fd_, kLockFileName, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
    if (lock_fd_ < 0 && errno == ENOENT) return;
  }
  const int open_error = errno;
  if (lock_fd_ < 0) {
    ::close(dir_fd_);
    if (open_error == ELOOP) {
      throw std::runtime_error("the lock file " + path_of(kLockFileName) +
                               " is a symbolic link; convgen never follows one: remove it");
    }
    throw io_error("cannot open the lock file " + path_of(kLockFileName), open_error);
  }
  struct stat st {};
  if (::fstat(lock_fd_, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(lock_fd_);
    ::close(dir_fd_);
    throw std::runtime_error("the lock file " + path_of(kLockFileName) + " is not a regular file: remove it");
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  bool told = false;
  while (::flock(lock_fd_, LOCK_EX | LOCK_NB) != 0) {
    const int error = errno;
    if (error == EINTR) continue;
    if (error != EWOULDBLOCK) {
      ::close(lock_fd_);
      ::close(dir_fd_);
      throw io_error("cannot lock " + path_of(kLockFileName), error);
    }
    if (std::chrono::steady_clock::now() >= deadline) {
      ::close(lock_fd_);
      ::close(dir_fd_);
      char seconds[32];
      std::snprintf(seconds, sizeof seconds, "%g", timeout_s);
      throw std::runtime_error("timed out after " + std::string(seconds) +
                               " s waiting for another convgen run writing " + dir + " (it holds the lock file " +
                               path_of(kLockFileName) + "); nothing was written. --lock-timeout sets the wait");
    }
    if (!told) {
      std::fprintf(stderr, "convgen: waiting for another convgen run writing %s (lock %s) ...\n", dir.c_str(),
                   path_of(kLockFileName).c_str());
      told = true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

LockedFolder::~LockedFolder() {
  if (lock_fd_ >= 0) ::close(lock_fd_);  // releases the lock
  if (dir_fd_ >= 0) ::close(dir_fd_);
}

std::string LockedFolder::path_of(const std::string& name) const { return (fs::path(dir_) / name).string(); }

ExistingFile LockedFolder::look(const std::string& name) const {
  ExistingFile file;
  // O_NONBLOCK: a FIFO planted at the name must not hang the run.
  const Fd fd(::openat(dir_fd_, name.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK));
  if (fd.fd < 0) {
    if (errno == ENOENT) return file;
    if (errno == ELOOP) {
      file.kind = ExistingFile::kLink;
      return file;
    }
    throw io_error("cannot read " + path_of(name), errno);
  }
  struct stat st {};
  if (::fstat(fd.fd, &st) != 0) throw io_error("cannot read " + path_of(name), errno);
  if (!S_ISREG(st.st_mode)) {
    file.kind = ExistingFile::kOther;
    return file;
  }
  file.kind = ExistingFile::kRegular;
  char buffer[1 << 16];
  for (;;) {
    const ssize_t n = ::read(fd.fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw io_error("cannot read " + path_of(name), errno);
    if (n == 0) break;
    file.bytes.append(buffer, static_cast<size_t>(n));
  }
  return file;
}

std::optional<std::string> LockedFolder::read_regular(const std::string& name) const {
  ExistingFile file = look(name);
  switch (file.kind) {
    case ExistingFile::kMissing: return std::nullopt;
    case ExistingFile::kRegular: return std::move(file.bytes);
    case ExistingFile::kLink:
      throw std::runtime_error(path_of(name) + " is a symbolic link where convgen writes a file; convgen never "
                               "follows or replaces one: remove it");
    case ExistingFile::kOther: break;
  }
  throw std::runtime_error(path_of(name) + " is not a regular file (a folder, FIFO or device) where convgen "
                           "writes a file: remove it");
}

std::vector<std::string> LockedFolder::names() const {
  const int fd = ::openat(dir_fd_, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) throw io_error("cannot list " + dir_, errno);
  DIR* listing = ::fdopendir(fd);
  if (listing == nullptr) {
    ::close(fd);
    throw io_error("cannot list " + dir_, errno);
  }
  std::vector<std::string> names;
  while (const dirent* entry = ::readdir(listing)) {
    if (std::strcmp(entry->d_name, ".") != 0 && std::strcmp(entry->d_name, "..") != 0) names.push_back(entry->d_name);
  }
  ::closedir(listing);
  return names;
}

std::vector<std::string> LockedFolder::remove_stale_temps() const {
  std::vector<std::string> removed;
  // The lock is held, so no live run owns one of these. unlinkat removes a
  // link itself and refuses a folder.
  for (const std::string& name : names()) {
    if (name.rfind(kTempPrefix, 0) == 0 && ::unlinkat(dir_fd_, name.c_str(), 0) == 0) removed.push_back(name);
  }
  return removed;
}

void LockedFolder::commit(const std::vector<OutputFile>& files, const std::vector<std::string>& removals) const {
  if (files.empty() && removals.empty()) return;  // nothing changes: no sync either
  std::vector<std::string> temps;  // this run's, in the order of `files`
  const auto remove_temps = [&](size_t from) {
    for (size_t i = from; i < temps.size(); ++i) ::unlinkat(dir_fd_, temps[i].c_str(), 0);
  };
  try {
    // Written in batches, then synced: one fsync then finds most of the
    // batch's data already on its way (a sync per write costs twice the run).
    constexpr size_t kBatch = 64;
    for (size_t begin = 0; begin < files.size(); begin += kBatch) {
      std::vector<std::unique_ptr<Fd>> open;
      const size_t end = std::min(files.size(), begin + kBatch);
      for (size_t i = begin; i < end; ++i) {
        int fd = -1;
        for (int attempt = 0; fd < 0; ++attempt) {
          const std::string temp = temp_name();
          // O_EXCL with O_CREAT never follows a link; O_NOFOLLOW says so twice.
          fd = ::openat(dir_fd_, temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
          if (fd >= 0) temps.push_back(temp);
          if (fd < 0 && (errno != EEXIST || attempt == 100)) {
            throw io_error("cannot create a temporary file for " + path_of(files[i].path), errno);
          }
        }
        open.push_back(std::make_unique<Fd>(fd));
        write_all(fd, files[i].text, path_of(files[i].path) + " (through " + temps[i] + ")");
      }
      for (size_t i = begin; i < end; ++i) {
        if (::fsync(open[i - begin]->fd) != 0) {
          throw io_error("cannot write " + path_of(files[i].path) + " (through " + temps[i] + ")", errno);
        }
      }
    }
  } catch (...) {
    remove_temps(0);
    throw;
  }
  // Removals first: a run killed after them leaves the old manifest listing
  // files that are gone, which the next run passes over.
  for (const std::string& name : removals) {
    if (::unlinkat(dir_fd_, name.c_str(), 0) != 0 && errno != ENOENT) {
      const int error = errno;
      remove_temps(0);
      throw io_error("cannot remove " + path_of(name), error);
    }
  }
  // Every file is whole on disk: now they replace their targets. rename()
  // replaces a link planted meanwhile, never writes through it.
  for (size_t i = 0; i < files.size(); ++i) {
    if (::renameat(dir_fd_, temps[i].c_str(), dir_fd_, files[i].path.c_str()) != 0) {
      const int error = errno;
      remove_temps(i);
      throw io_error("cannot rename " + path_of(temps[i]) + " to " + files[i].path + " (" + std::to_string(i) +
                         " of " + std::to_string(files.size()) + " files were replaced)",
                     error);
    }
  }
  // The renames and removals are durable only once the folder is.
  if (::fsync(dir_fd_) != 0 && errno != EINVAL && errno != EROFS) throw io_error("cannot sync " + dir_, errno);
}

// ---------------------------------------------------------------------------
// The manifest.

std::string manifest_name(const std::string& library) { return library + ".manifest"; }

std::string manifest_text(const std::vector<OutputFile>& files) {
  std::string text;
  for (const OutputFile& f : files) text += sha256_hex(f.text) + "  " + f.path + "\n";
  return text;
}

std::vector<ManifestEntry> parse_manifest(const std::string& text, std::vector<std::string>& problems) {
  std::vector<ManifestEntry> entries;
  size_t start = 0;
  for (int line = 1; start < text.size(); ++line) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    const std::string row = text.substr(start, end - start);
    start = end + 1;
    const bool hex = row.size() > 66 && row.find_first_not_of("0123456789abcdef") == 64 && row.compare(64, 2, "  ") == 0;
    const std::string name = hex ? row.substr(66) : "";
    if (!hex || !plain_file_name(name)) {
      problems.push_back("line " + std::to_string(line) + " is not '<sha256>  <file name>': ignored");
      continue;
    }
    entries.push_back({name, row.substr(0, 64)});
  }
  return entries;
}

// ---------------------------------------------------------------------------
// A library's files.

WriteReport write_outputs(const std::string& dir, const std::vector<OutputFile>& files, const WriteOptions& options) {
  WriteReport report;
  const LockedFolder folder(dir, options.lock_timeout_s, /*create=*/true);
  report.stale_temps = folder.remove_stale_temps();

  std::vector<OutputFile> changed;
  std::set<std::string> names;
  for (const OutputFile& file : files) {
    names.insert(file.path);
    const std::optional<std::string> existing = folder.read_regular(file.path);
    if (existing && *existing == file.text) {
      report.unchanged.push_back(file.path);
    } else {
      changed.push_back(file);
      report.written.push_back(file.path);
    }
  }
  if (options.manifest.empty()) {
    folder.commit(changed);
    return report;
  }

  // Stale files: the previous manifest's, no longer made.
  const std::optional<std::string> previous = folder.read_regular(options.manifest);
  std::vector<ManifestEntry> old_entries;
  if (previous) {
    std::vector<std::string> problems;
    old_entries = parse_manifest(*previous, problems);
    for (const std::string& p : problems) report.warnings.push_back(folder.path_of(options.manifest) + ": " + p);
  } else if (options.prune) {
    report.notes.push_back("no manifest " + folder.path_of(options.manifest) +
                           " from an earlier run, so --prune removes nothing this time");
  }
  // Files another library's manifest lists are that library's: never
  // removed on this one's behalf, and never overwritten with other bytes.
  // Two libraries that make one kernel name it alike, but each copy opens
  // its own library's namespace: writing ours over theirs would break their
  // build. Such libraries need a folder each (convgen_add_library gives
  // every library its own).
  std::map<std::string, std::string> others;  // file -> the manifest listing it
  for (const std::string& name : folder.names()) {
    if (name == options.manifest || name.size() <= 9 || name.compare(name.size() - 9, 9, ".manifest") != 0) continue;
    const ExistingFile other = folder.look(name);
    if (other.kind != ExistingFile::kRegular) continue;
    std::vector<std::string> ignored;
    for (const ManifestEntry& e : parse_manifest(other.bytes, ignored)) others.emplace(e.name, name);
  }
  for (const OutputFile& file : changed) {
    const auto other = others.find(file.path);
    if (other == others.end() || folder.look(file.path).kind == ExistingFile::kMissing) continue;
    throw std::runtime_error(folder.path_of(file.path) + " belongs to another library (" +
                             folder.path_of(other->second) + " lists it), and this run would change it: a kernel "
                             "both libraries make is written once per library, in its namespace. Generate each "
                             "library into a folder of its own; nothing was written");
  }
  std::vector<OutputFile> listed = files;  // with the hashes of stale files still to prune
  std::vector<std::string> removals;
  for (const ManifestEntry& old : old_entries) {
    if (names.count(old.name) != 0 || old.name == options.manifest) continue;
    names.insert(old.name);  // a name listed twice counts once
    const ExistingFile now = folder.look(old.name);
    if (now.kind == ExistingFile::kMissing) continue;
    if (const auto other = others.find(old.name); other != others.end()) {
      report.notes.push_back(folder.path_of(old.name) + " is no longer made, but " + folder.path_of(other->second) +
                             " lists it too: left to that library");
      continue;
    }
    if (now.kind != ExistingFile::kRegular || sha256_hex(now.bytes) != old.sha256) {
      report.kept.push_back(old.name);
      report.warnings.push_back(folder.path_of(old.name) + " is no longer made, but it changed since convgen wrote "
                                "it (its hash is not the manifest's): kept, and no longer listed");
    } else if (options.prune) {
      removals.push_back(old.name);
      report.removed.push_back(old.name);
    } else {
      listed.push_back({old.name, now.bytes});
    }
  }
  const OutputFile manifest{options.manifest, manifest_text(listed)};
  if (previous && *previous == manifest.text) {
    report.unchanged.push_back(manifest.path);
  } else {
    changed.push_back(manifest);  // renamed last: it never lists a file not yet in place
    report.written.push_back(manifest.path);
  }
  folder.commit(changed, removals);
  return report;
}

}  // namespace convgen::gen
