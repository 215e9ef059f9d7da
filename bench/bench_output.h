// The benchmark driver's output: every column a result row (JSON, CSV) or
// the printed table may have, computed from a measured row; each operator
// lists the ones it shows, in order (bench_depthwise.cu, bench_dense.cu).
#pragma once

#include "bench_row.h"

#include <iostream>

namespace bench_driver {

// ---------------------------------------------------------------------------
// Output columns: every key a result row or table may have, and how to
// compute it; each operator lists the ones it shows, in order.

// The JSON value of `key` for a row: a measured or derived value, else the
// CSV's integer column of that name.
template <class Op>
Json json_value(const RowResult<Op>& r, const std::string& key) {
  const auto& p = r.problem;
  using R = RowResult<Op>;
  static const std::map<std::string, std::function<Json(const R&)>> columns = {
      {"suite", [](const R& r) { return Json(r.bench.suite); }},
      {"name", [](const R& r) { return Json(r.choice.kernel); }},
      {"specialized", [](const R& r) { return Json(r.choice.specialized); }},
      {"stride", [](const R& r) { return Json(r.bench.number("stride")); }},
      {"pad", [](const R& r) { return Json(r.bench.pad); }},
      {"epilogue", [](const R& r) { return Json(r.bench.epilogue); }},
      {"dtype", [](const R& r) { return Json(convgen::to_string(r.problem.dtype)); }},
      {"layout", [](const R& r) { return Json(convgen::to_string(r.problem.layout)); }},
      {"math", [](const R& r) { return Json(convgen::to_string(r.bench.math)); }},
      {"flops", [](const R& r) { return Json(r.flops); }},
      {"floor_us", [](const R& r) { return number(r.floor_us, 3); }},
      {"roofline_us", [](const R& r) { return number(r.roofline_us, 3); }},
      {"convgen_hot_us", [](const R& r) { return number(r.convgen_hot_us, 3); }},
      {"convgen_cold_us", [](const R& r) { return number(r.convgen_cold_us, 3); }},
      {"convgen_noepilogue_hot_us", [](const R& r) { return number(r.convgen_noepilogue_hot_us, 3); }},
      {"convgen_noepilogue_cold_us", [](const R& r) { return number(r.convgen_noepilogue_cold_us, 3); }},
      {"noepilogue_name", [](const R& r) { return Json(r.plain_choice.kernel); }},
      {"noepilogue_specialized", [](const R& r) { return Json(r.plain_choice.specialized); }},
      {"convgen_residual_hot_us", [](const R& r) { return number(r.convgen_residual_hot_us, 3); }},
      {"residual_name", [](const R& r) { return Json(r.residual_choice.kernel); }},
      {"residual_specialized", [](const R& r) { return Json(r.residual_choice.specialized); }},
      {"cudnn_hot_us", [](const R& r) { return number(r.cudnn_hot_us, 3); }},
      {"cudnn_cold_us", [](const R& r) { return number(r.cudnn_cold_us, 3); }},
      {"cudnn_algo", [](const R& r) { return r.cudnn_ran() ? Json(r.cudnn_algo) : Json(nullptr); }},
      {"tflops", [](const R& r) { return number(r.tflops(), 3); }},
      {"cudnn_tflops", [](const R& r) { return number(r.cudnn_tflops(), 3); }},
      {"convgen_frac_ceiling", [](const R& r) { return number(r.convgen_frac_ceiling(), 4); }},
      {"cudnn_frac_ceiling", [](const R& r) { return number(r.cudnn_frac_ceiling(), 4); }},
      {"convgen_frac_roofline", [](const R& r) { return number(r.convgen_frac_roofline(), 4); }},
      {"cudnn_frac_roofline", [](const R& r) { return number(r.cudnn_frac_roofline(), 4); }},
      {"copy_cold_us", [](const R& r) { return number(r.copy_cold_us, 3); }},
      {"copy_frac_ceiling", [](const R& r) { return number(r.copy_frac_ceiling(), 4); }},
      {"speedup_vs_cudnn", [](const R& r) { return number(r.speedup_vs_cudnn(), 3); }},
      {"fused_plain_ratio", [](const R& r) { return number(r.fused_plain_ratio(), 3); }},
      {"fused_plain_ratio_cold", [](const R& r) { return number(r.fused_plain_ratio_cold(), 3); }},
      {"residual_plain_ratio", [](const R& r) { return number(r.residual_plain_ratio(), 3); }},
      {"max_rel_err", [](const R& r) { return error_value(r.max_rel_err); }},
      {"fused_max_rel_err", [](const R& r) { return error_value(r.fused_max_rel_err); }},
      {"residual_max_rel_err", [](const R& r) { return error_value(r.residual_max_rel_err); }},
      {"check_limit", [](const R& r) { return error_value(r.check_limit); }},
      {"check_ok", [](const R& r) { return r.cudnn_ran() ? Json(r.check_ok) : Json(nullptr); }},
      {"dispatch_reason", [](const R& r) { return Json(r.choice.reason); }},
      {"default_schedule", [](const R& r) { return Json(r.schedule); }},
      {"tuned_name", [](const R& r) { return Json(r.tuned_choice.kernel); }},
      {"tuned_specialized", [](const R& r) { return Json(r.tuned_choice.specialized); }},
      {"tuned_schedule", [](const R& r) { return Json(r.tuned_schedule); }},
      // false: the database had no entry for the kernel
      {"tuned_changed", [](const R& r) { return Json(r.tuned_changed()); }},
      {"tuned_hot_us", [](const R& r) { return number(r.tuned_hot_us, 3); }},
      {"tuned_cold_us", [](const R& r) { return number(r.tuned_cold_us, 3); }},
      {"tuned_tflops", [](const R& r) { return number(r.tuned_tflops(), 3); }},
      {"tuned_frac_ceiling", [](const R& r) { return number(r.tuned_frac_ceiling(), 4); }},
      {"tuned_frac_roofline", [](const R& r) { return number(r.tuned_frac_roofline(), 4); }},
      {"tuned_speedup_hot", [](const R& r) { return number(r.tuned_speedup_hot(), 3); }},
      {"tuned_speedup_cold", [](const R& r) { return number(r.tuned_speedup_cold(), 3); }},
      {"tuned_max_rel_err", [](const R& r) { return error_value(r.tuned_max_rel_err); }},
      {"tuned_vs_default_max_rel_err", [](const R& r) { return error_value(r.tuned_vs_default_max_rel_err); }},
      {"tuned_check_ok", [](const R& r) { return Json(r.tuned_check_ok); }},
  };
  if (key == "n") return p.n;
  if (key == "c") return p.c;
  if (key == "h") return p.h;
  if (key == "w") return p.w;
  if (key == "kh") return p.kh;
  if (key == "kw") return p.kw;
  if (key == "out_h") return p.out_h();
  if (key == "out_w") return p.out_w();
  const auto found = columns.find(key);
  if (found != columns.end()) return found->second(r);
  return r.bench.number(key);  // an operator's own CSV column: c_out, mult
}

// Which kind of kernel served the row; GENERIC stands out on purpose.
template <class Op>
std::string served_by(const RowResult<Op>& r) {
  std::string text = r.choice.specialized ? "specialized" : "GENERIC";
  if (r.choice.specialized && !r.plain_choice.specialized) text += " (plain: GENERIC)";
  if (Op::kHasResidual && r.choice.specialized && !r.residual_choice.specialized) text += " (residual: GENERIC)";
  return text;
}

// A table column: its header, and the result key (or CSV column) it shows.
struct TableColumn {
  const char* header;
  const char* key;
};

// The tuned library's columns every operator shows: its times beside the
// default's, then the operator's own (Op::kTunedTableExtras,
// Op::kTunedJsonExtras), then the check.
inline const std::vector<TableColumn> kTunedTableColumns = {
    {"cg hot", "convgen_hot_us"}, {"tuned hot", "tuned_hot_us"},   {"speedup hot", "tuned_speedup_hot"},
    {"cg cold", "convgen_cold_us"}, {"tuned cold", "tuned_cold_us"}, {"speedup cold", "tuned_speedup_cold"}};
inline const std::vector<TableColumn> kTunedTableChecks = {{"tuned check", "tuned_check"},
                                                           {"tuned schedule", "tuned_schedule"}};
inline const std::vector<const char*> kTunedJsonColumns = {
    "default_schedule", "tuned_name", "tuned_specialized", "tuned_schedule", "tuned_changed", "tuned_hot_us",
    "tuned_cold_us"};
inline const std::vector<const char*> kTunedJsonChecks = {"tuned_speedup_hot", "tuned_speedup_cold",
                                                          "tuned_max_rel_err", "tuned_vs_default_max_rel_err",
                                                          "tuned_check_ok"};

template <class T, class... More>
std::vector<T> concat(std::vector<T> first, const More&... more) {
  (first.insert(first.end(), more.begin(), more.end()), ...);
  return first;
}

// The table cell of `key` for a row, and whether it aligns left (text).
template <class Op>
std::pair<std::string, bool> table_cell(const RowResult<Op>& r, const std::string& key) {
  const auto& p = r.problem;
  using R = RowResult<Op>;
  using Cell = std::pair<std::string, bool>;
  const auto text = [](std::string s) { return Cell{std::move(s), true}; };
  const auto value = [](std::string s) { return Cell{std::move(s), false}; };
  static const std::map<std::string, std::function<Cell(const R&)>> cells = {
      {"suite", [](const R& r) { return Cell{r.bench.suite, true}; }},
      {"epilogue", [](const R& r) { return Cell{r.bench.epilogue, true}; }},
      {"dtype", [](const R& r) { return Cell{convgen::to_string(r.problem.dtype), true}; }},
      {"layout", [](const R& r) { return Cell{convgen::to_string(r.problem.layout), true}; }},
      {"math", [](const R& r) { return Cell{convgen::to_string(r.bench.math), true}; }},
      {"name", [](const R& r) { return Cell{r.choice.kernel, true}; }},
      {"served_by", [](const R& r) { return Cell{served_by(r), true}; }},
      {"cudnn_algo", [](const R& r) { return Cell{r.cudnn_ran() ? r.cudnn_algo : "-", true}; }},
      {"check", [](const R& r) { return Cell{r.cudnn_ran() ? (r.check_ok ? "ok" : "MISMATCH") : "-", true}; }},
      {"tuned_check", [](const R& r) { return Cell{r.tuned_check_ok ? "ok" : "TUNED MISMATCH", true}; }},
      {"tuned_schedule",
       [](const R& r) { return Cell{r.tuned_changed() ? r.tuned_schedule : "(default) " + r.tuned_schedule, true}; }},
      {"floor_us", [](const R& r) { return Cell{fixed(r.floor_us, 2), false}; }},
      {"roofline_us", [](const R& r) { return Cell{fixed(r.roofline_us, 2), false}; }},
      {"convgen_hot_us", [](const R& r) { return Cell{fixed(r.convgen_hot_us, 2), false}; }},
      {"convgen_cold_us", [](const R& r) { return Cell{fixed(r.convgen_cold_us, 2), false}; }},
      {"convgen_noepilogue_hot_us", [](const R& r) { return Cell{fixed(r.convgen_noepilogue_hot_us, 2), false}; }},
      {"convgen_residual_hot_us", [](const R& r) { return Cell{fixed(r.convgen_residual_hot_us, 2), false}; }},
      {"cudnn_hot_us", [](const R& r) { return Cell{fixed(r.cudnn_hot_us, 2), false}; }},
      {"cudnn_cold_us", [](const R& r) { return Cell{fixed(r.cudnn_cold_us, 2), false}; }},
      {"tflops", [](const R& r) { return Cell{fixed(r.tflops(), 2), false}; }},
      {"cudnn_tflops", [](const R& r) { return Cell{fixed(r.cudnn_tflops(), 2), false}; }},
      {"convgen_frac_ceiling", [](const R& r) { return Cell{fixed(100.0 * r.convgen_frac_ceiling(), 1), false}; }},
      {"cudnn_frac_ceiling", [](const R& r) { return Cell{fixed(100.0 * r.cudnn_frac_ceiling(), 1), false}; }},
      {"copy_frac_ceiling", [](const R& r) { return Cell{fixed(100.0 * r.copy_frac_ceiling(), 1), false}; }},
      {"convgen_frac_roofline",
       [](const R& r) { return Cell{fixed(100.0 * r.convgen_frac_roofline(), 1), false}; }},
      {"cudnn_frac_roofline", [](const R& r) { return Cell{fixed(100.0 * r.cudnn_frac_roofline(), 1), false}; }},
      {"fused_plain_ratio", [](const R& r) { return Cell{fixed(r.fused_plain_ratio(), 3), false}; }},
      {"speedup_vs_cudnn", [](const R& r) { return Cell{fixed(r.speedup_vs_cudnn(), 2, "x"), false}; }},
      {"tuned_hot_us", [](const R& r) { return Cell{fixed(r.tuned_hot_us, 2), false}; }},
      {"tuned_cold_us", [](const R& r) { return Cell{fixed(r.tuned_cold_us, 2), false}; }},
      {"tuned_speedup_hot", [](const R& r) { return Cell{fixed(r.tuned_speedup_hot(), 3, "x"), false}; }},
      {"tuned_speedup_cold", [](const R& r) { return Cell{fixed(r.tuned_speedup_cold(), 3, "x"), false}; }},
      {"tuned_tflops", [](const R& r) { return Cell{fixed(r.tuned_tflops(), 2), false}; }},
  };
  if (key == "shape") return text(shape_text(p));
  if (key == "filter") return text(std::to_string(p.kh) + "x" + std::to_string(p.kw));
  const auto found = cells.find(key);
  if (found != cells.end()) return found->second(r);
  return value(std::to_string(r.bench.number(key)));  // an operator's own CSV column: c_out, mult, stride
}

template <class Op>
void print_rows(const std::vector<RowResult<Op>>& rows, const std::vector<TableColumn>& columns) {
  std::vector<std::vector<std::string>> cells(1);
  std::vector<bool> left;
  for (const TableColumn& column : columns) cells[0].push_back(column.header);
  for (const RowResult<Op>& r : rows) {
    cells.emplace_back();
    left.clear();
    for (const TableColumn& column : columns) {
      auto [cell, is_text] = table_cell(r, column.key);
      cells.back().push_back(cell);
      left.push_back(is_text);
    }
  }
  if (rows.empty()) left.assign(columns.size(), true);
  print_table(cells, left);
}

template <class Op>
void print_results(const std::vector<RowResult<Op>>& rows, const Machine& machine) {
  std::cout << "GPU: " << machine.gpu << "; copy ceiling " << fixed(machine.ceiling_tbps, 2) << " TB/s";
  if (std::isfinite(machine.peak.tflops)) {
    std::cout << "; fp32 peak " << fixed(machine.peak.tflops, 2) << " TFLOP/s (" << machine.peak.method << ")";
  }
  if (std::isfinite(machine.tensor_peak.tflops)) {
    std::cout << "; tensor-core peak " << fixed(machine.tensor_peak.tflops, 2) << " TFLOP/s ("
              << machine.tensor_peak.method << ")";
  }
  if (std::isfinite(machine.tf32_peak.tflops)) {
    std::cout << "; TF32 peak " << fixed(machine.tf32_peak.tflops, 2) << " TFLOP/s (" << machine.tf32_peak.method
              << ")";
  }
  std::cout << "\n" << Op::kTableLegend << "\n\n";
  print_rows(rows, concat(Op::kRowColumns, Op::kTableColumns));

  const auto generic =
      std::count_if(rows.begin(), rows.end(), [](const RowResult<Op>& r) { return !r.choice.specialized; });
  const auto mismatched =
      std::count_if(rows.begin(), rows.end(), [](const RowResult<Op>& r) { return !r.check_ok; });
  if (generic) std::cout << "\n" << generic << " row(s) served by the GENERIC kernel (no specialized kernel).\n";
  if (mismatched) std::cout << "\n" << mismatched << " row(s) where convgen and cuDNN disagree (MISMATCH).\n";
}

// The tuned library beside the default one: times, speedups, the schedule
// where the database changed it, and the check of the tuned output.
template <class Op>
void print_tuned_results(const std::vector<RowResult<Op>>& rows) {
  double log_sum = 0;
  int measured = 0, slower = 0;
  for (const RowResult<Op>& r : rows) {
    const double speedup = r.tuned_speedup_hot();
    if (std::isfinite(speedup) && speedup > 0) {
      log_sum += std::log(speedup);
      ++measured;
      if (speedup < 1 / 1.02) ++slower;
    }
  }
  std::cout << "\nTuned library (tuning database " << Op::kTuned.tuning_db
            << "): the same spec with the database applied.\n"
            << "speedup = convgen (default) time / tuned time; (default): the database left the schedule as it "
               "was.\n\n";
  print_rows(rows, concat(Op::kRowColumns, kTunedTableColumns, Op::kTunedTableExtras, kTunedTableChecks));
  if (measured) {
    std::cout << "\nGeometric-mean hot speedup of the tuned library: " << fixed(std::exp(log_sum / measured), 3, "x")
              << " over " << measured << " row(s); " << slower
              << " row(s) where the tuned kernel is more than 2% slower (hot).\n";
  }
  const auto mismatched =
      std::count_if(rows.begin(), rows.end(), [](const RowResult<Op>& r) { return !r.tuned_check_ok; });
  if (mismatched) {
    std::cout << "\n" << mismatched << " row(s) where the TUNED kernel computes a different result (TUNED MISMATCH).\n";
  }
}

template <class Op>
Json row_json(const RowResult<Op>& r) {
  Json row;
  for (const char* key : Op::kJsonColumns) row[key] = json_value(r, key);
  if (Op::kTuned.linked()) {
    for (const char* key : concat(kTunedJsonColumns, Op::kTunedJsonExtras, kTunedJsonChecks)) {
      row[key] = json_value(r, key);
    }
  }
  return row;
}

// The whole run: where and how it was measured, then the rows.
template <class Op>
Json results_document(const Machine& machine, const typename Op::Options& options, const Json& rows) {
  Json document = start_document(machine.gpu, machine.ceiling_tbps, options);
  if (std::isfinite(machine.peak.tflops)) {
    document["fp32_peak_tflops"] = number(machine.peak.tflops, 3);
    document["fp32_peak_method"] = machine.peak.method;
    document["cublas_version"] = machine.peak.cublas_version;
  }
  if (std::isfinite(machine.tensor_peak.tflops)) {
    document["tensor_peak_tflops"] = number(machine.tensor_peak.tflops, 3);
    document["tensor_peak_method"] = machine.tensor_peak.method;
  }
  if (std::isfinite(machine.tf32_peak.tflops)) {
    document["tf32_peak_tflops"] = number(machine.tf32_peak.tflops, 3);
    document["tf32_peak_method"] = machine.tf32_peak.method;
  }
  if (Op::kTuned.linked()) document["tuning_db"] = Op::kTuned.tuning_db;
  finish_document(document, options, rows);
  return document;
}

}  // namespace bench_driver
