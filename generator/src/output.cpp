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

bool written_by_convgen(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  std::string head(1024, '\0');
  in.read(head.data(), static_cast<std::streamsize>(head.size()));
  head.resize(static_cast<size_t>(in.gcount()));
  return head.find(kGeneratedMarker) != std::string::npos;
}

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
      const fs::path stem = entry.path().stem();  // for x.cu.tmp: x.cu
      const bool output_kind = ext == ".cu" || ext == ".h";
      const bool leftover_temp = ext == ".tmp" && (stem.extension() == ".cu" || stem.extension() == ".h");
      if (entry.is_regular_file() && (output_kind || leftover_temp) && keep.count(name) == 0 &&
          written_by_convgen(entry.path().string())) {
        fs::remove(entry.path());
        report.removed.push_back(name);
      }
    }
  }
  return report;
}

}  // namespace convgen::gen
