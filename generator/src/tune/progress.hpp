// Progress on the terminal: one line per kernel, and on a terminal a status
// line redrawn as candidates finish.
#pragma once

#include <chrono>
#include <cstddef>
#include <mutex>
#include <string>

namespace convgen::tune {

double seconds_since(std::chrono::steady_clock::time_point start);

// "42s", "3m07s", "1h05m".
std::string duration_text(double s);

class Progress {
 public:
  Progress(size_t total, size_t workers);

  void line(const std::string& text);
  void status(const std::string& text);
  // A kernel is done (tuned, or failed); its wall time feeds the ETA
  // where `counted`.
  void kernel_done(double seconds, bool counted);
  // "3/37": the kernels done, of all.
  std::string counts();
  std::string start();
  std::string eta(double budget_s);

 private:
  void clear();
  std::mutex m_;
  size_t total_, workers_, done_ = 0, tuned_ = 0, started_ = 0;
  double tuned_seconds_ = 0;
  bool tty_, shown_ = false;
};

}  // namespace convgen::tune
