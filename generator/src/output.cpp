#include "convgen/gen/output.hpp"

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <stdexcept>

namespace convgen::gen {

namespace fs = std::filesystem;

namespace {

bool same_text(const fs::path& path, const std::string& text) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str() == text;
}

void write_atomically(const fs::path& path, const std::string& text) {
  fs::path temp = path;
  temp += ".tmp";
  {
    std::ofstream out(temp, std::ios::binary | std::ios::trunc);
    out << text;
    out.close();
    if (!out) throw std::runtime_error("cannot write " + temp.string());
  }
  fs::rename(temp, path);
}

}  // namespace

WriteReport write_outputs(const std::string& dir, const std::vector<OutputFile>& files, bool prune) {
  WriteReport report;
  fs::create_directories(dir);
  std::set<std::string> keep;
  for (const OutputFile& file : files) {
    const fs::path path = fs::path(dir) / file.path;
    keep.insert(path.filename().string());
    if (same_text(path, file.text)) {
      report.unchanged.push_back(file.path);
    } else {
      write_atomically(path, file.text);
      report.written.push_back(file.path);
    }
  }
  if (prune) {
    for (const auto& entry : fs::directory_iterator(dir)) {
      const std::string ext = entry.path().extension().string();
      const std::string name = entry.path().filename().string();
      if (entry.is_regular_file() && (ext == ".cu" || ext == ".h") && keep.count(name) == 0) {
        fs::remove(entry.path());
        report.removed.push_back(name);
      }
    }
  }
  return report;
}

}  // namespace convgen::gen
