#include "tune/progress.hpp"

#include <unistd.h>

#include <cstdio>

namespace convgen::tune {

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

std::string duration_text(double s) {
  char text[32];
  if (s < 60) {
    std::snprintf(text, sizeof text, "%.0fs", s);
  } else if (s < 3600) {
    std::snprintf(text, sizeof text, "%dm%02ds", static_cast<int>(s) / 60, static_cast<int>(s) % 60);
  } else {
    std::snprintf(text, sizeof text, "%dh%02dm", static_cast<int>(s) / 3600, static_cast<int>(s) % 3600 / 60);
  }
  return text;
}

Progress::Progress(size_t total, size_t workers)
    : total_(total), workers_(workers), tty_(isatty(STDERR_FILENO) != 0) {}

void Progress::line(const std::string& text) {
  std::lock_guard<std::mutex> lock(m_);
  clear();
  std::fprintf(stderr, "%s\n", text.c_str());
}

void Progress::status(const std::string& text) {
  if (!tty_) return;
  std::lock_guard<std::mutex> lock(m_);
  clear();
  std::fprintf(stderr, "%s", text.substr(0, 150).c_str());
  shown_ = true;
}

void Progress::kernel_done(double seconds, bool counted) {
  std::lock_guard<std::mutex> lock(m_);
  ++done_;
  if (counted) {
    tuned_seconds_ += seconds;
    ++tuned_;
  }
}

std::string Progress::counts() {
  std::lock_guard<std::mutex> lock(m_);
  return std::to_string(done_) + "/" + std::to_string(total_);
}

std::string Progress::start() {
  std::lock_guard<std::mutex> lock(m_);
  ++started_;
  return std::to_string(started_) + "/" + std::to_string(total_);
}

std::string Progress::eta(double budget_s) {
  std::lock_guard<std::mutex> lock(m_);
  const double per_kernel = tuned_ > 0 ? tuned_seconds_ / tuned_ : budget_s;
  return duration_text(per_kernel * static_cast<double>(total_ - done_) / static_cast<double>(workers_));
}

void Progress::clear() {
  if (shown_) std::fprintf(stderr, "\r\033[K");
  shown_ = false;
}

}  // namespace convgen::tune
