#include "report/matmul_report.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <string_view>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "harness/core_availability.hpp"
#include "matmul/sustained_roof.hpp"
#include "report/csv_report.hpp"
#include "report/json_read.hpp"
#include "report/json_report.hpp"

namespace peakprobe {

namespace {
// kernel_l1_gflops is the loop's rate as it ran, not scaled to the product's clock (score_matmul).
bool kernel_l1_as_ran(const MatmulResult& r) {
  return loop_rate_as_ran(r.ceiling_sustained_share, r.kernel_l1_ghz, r.clock.ghz);
}

using namespace json_read;

using nlohmann::json;

constexpr const char* kMissing = "-";

// ---- shared wording ----

bool integer_dtype(MatmulDtype d) { return d == MatmulDtype::i8; }
const char* rate_unit(MatmulDtype d) { return integer_dtype(d) ? "GOP/s" : "GFLOP/s"; }
const char* op_name(MatmulDtype d) { return integer_dtype(d) ? "OP" : "FLOP"; }

std::string counted(int64_t n, const char* noun) { return fmt::format("{} {}{}", n, noun, n == 1 ? "" : "s"); }

std::string shape_text(const MatmulResult& r) { return fmt::format("{}x{}x{}", r.m, r.n, r.k); }

bool cold(const MatmulResult& r) { return !r.cold_cache.empty() && r.cold_cache != "none"; }

// A zero mc means no tiling was chosen (the run failed before planning).
bool has_config(const MatmulConfig& c) { return c.mc > 0 || c.kc > 0 || c.nc > 0; }
bool timed(const MatmulResult& r) { return r.timing.repetitions > 0; }
bool finite(const std::optional<double>& v) { return v && std::isfinite(*v); }

// The product ran on a team of threads, whose scan is of its least available core (matmul_run): the
// configuration's threads, not the run's --threads (a plan may keep one thread on several cores).
bool team_product(const MatmulResult& r) { return r.config.threads > 1; }

std::string fixed(double v, int decimals, const char* missing = kMissing) {
  return std::isfinite(v) ? fmt::format("{:.{}f}", v, decimals) : std::string(missing);
}

std::string scientific(double v, int decimals, const char* missing = kMissing) {
  return std::isfinite(v) ? fmt::format("{:.{}e}", v, decimals) : std::string(missing);
}

// "1.04x"; a speedup of 0 means none was computed.
std::string speedup_text(double s) { return s > 0 && std::isfinite(s) ? fmt::format("{:.2f}x", s) : kMissing; }

// "mc=96 kc=384 nc=1024 grid 1x1 (cost model)"; on fewer threads than the run has "grid 2x2, 4 of 16
// threads"; with batch groups "grid 1x1, items on 2 groups";
// operands not packed ahead ", A and B in place".
std::string blocking_text(const MatmulResult& r) {
  const MatmulConfig& c = r.config;
  std::string s = fmt::format("mc={} kc={} nc={} grid {}x{}", c.mc, c.kc, c.nc, c.thread_rows, c.thread_cols);
  if (c.threads < r.threads) s += fmt::format(", {} of {} threads", c.threads, r.threads);
  if (c.batch_threads > 1) s += fmt::format(", items on {} groups", c.batch_threads);
  if (c.k_threads > 1) s += fmt::format(", K in {} parts", c.k_threads);
  if (!c.pack_a || !c.pack_b) s += !c.pack_a && !c.pack_b ? ", A and B in place" : !c.pack_a ? ", A in place" : ", B in place";
  if (!r.config_source.empty()) s += " (" + r.config_source + ")";
  return s;
}

// Baseline libraries in the order they first appear, so tables and CSV columns follow the run.
std::vector<std::string> libraries(const std::vector<MatmulResult>& results) {
  std::vector<std::string> names;
  for (const auto& r : results)
    for (const auto& b : r.baselines)
      if (std::find(names.begin(), names.end(), b.library) == names.end()) names.push_back(b.library);
  return names;
}

const BaselineResult* baseline(const MatmulResult& r, const std::string& library) {
  for (const auto& b : r.baselines)
    if (b.library == library) return &b;
  return nullptr;
}

// ---- JSON ----

json to_json(const TimingSummary& t, json row) {
  row["mean_ms"] = json_number(t.mean_ms);
  row["min_ms"] = json_number(t.min_ms);
  row["max_ms"] = json_number(t.max_ms);
  row["std_ms"] = json_number(t.std_ms);
  row["repetitions"] = t.repetitions;
  row["warmup"] = t.warmup;
  return row;
}

json to_json(const MatmulConfig& c) {
  return {{"mr", c.mr}, {"nv", c.nv}, {"nr", c.nr}, {"mc", c.mc}, {"kc", c.kc}, {"nc", c.nc},
          {"threads", c.threads}, {"thread_rows", c.thread_rows}, {"thread_cols", c.thread_cols},
          {"batch_threads", c.batch_threads}, {"k_threads", c.k_threads}, {"pack_a", c.pack_a}, {"pack_b", c.pack_b}};
}

json to_json(const BaselineResult& b) {
  json row = {{"library", b.library},
              {"path", b.path},
              {"version", b.version},
              {"gflops", json_number(b.gflops)},
              {"max_rel_error", json_number(b.max_rel_error)},
              {"speedup", json_number(b.speedup)},
              {"status", to_string(b.status)},
              {"reason", b.reason}};
  return to_json(b.timing, std::move(row));
}

TimingSummary timing_from(const json& j) {
  TimingSummary t;
  t.mean_ms = number_at(j, "mean_ms");
  t.min_ms = number_at(j, "min_ms");
  t.max_ms = number_at(j, "max_ms");
  t.std_ms = number_at(j, "std_ms");
  t.repetitions = integer_at(j, "repetitions", 0);
  t.warmup = integer_at(j, "warmup", 0);
  return t;
}

MatmulConfig config_from(const json& j) {
  MatmulConfig c;
  c.mr = integer_at(j, "mr", c.mr);
  c.nv = integer_at(j, "nv", c.nv);
  c.nr = integer_at(j, "nr", c.nr);
  c.mc = integer_at(j, "mc", c.mc);
  c.kc = integer_at(j, "kc", c.kc);
  c.nc = integer_at(j, "nc", c.nc);
  c.threads = integer_at(j, "threads", c.threads);
  c.thread_rows = integer_at(j, "thread_rows", c.thread_rows);
  c.thread_cols = integer_at(j, "thread_cols", c.thread_cols);
  c.batch_threads = integer_at(j, "batch_threads", 1);  // documents from before batch groups: 1
  c.k_threads = integer_at(j, "k_threads", 1);
  // Documents from before the in-place operands packed both.
  if (const json* v = member(j, "pack_a"); v && v->is_boolean()) c.pack_a = v->get<bool>();
  if (const json* v = member(j, "pack_b"); v && v->is_boolean()) c.pack_b = v->get<bool>();
  return c;
}

// `status` of a row or a baseline ("ok" when absent); an unknown one reads as error, with a reason.
void read_status(const json& j, Status& status, std::string& reason) {
  const std::string text = text_at(j, "status", "ok");
  if (auto s = status_from(text)) {
    status = *s;
    return;
  }
  status = Status::error;
  if (reason.empty()) reason = fmt::format("unknown status \"{}\"", text);
}

BaselineResult baseline_from(const json& j) {
  BaselineResult b;
  b.library = text_at(j, "library");
  b.path = text_at(j, "path");
  b.version = text_at(j, "version");
  b.timing = timing_from(j);
  b.gflops = number_at(j, "gflops");
  b.max_rel_error = number_at(j, "max_rel_error");
  b.speedup = number_at(j, "speedup");
  // Documents from before baselines ran isolated have no status: their rows were all measured.
  b.reason = text_at(j, "reason");
  read_status(j, b.status, b.reason);
  return b;
}

// Matched against to_string, so the spelling lives in one place (matmul_dtype.cpp).
MatmulDtype dtype_from(const std::string& text) {
  for (MatmulDtype d : {MatmulDtype::f32, MatmulDtype::bf16, MatmulDtype::i8})
    if (text == to_string(d)) return d;
  return MatmulDtype::f32;
}

// ---- Markdown ----

// Table cells and list items are single lines; GitHub ends a cell at any unescaped '|'.
std::string cell(std::string_view text) {
  std::string s;
  for (char c : text) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f) c = ' ';
    if (c == '|') s += '\\';
    s += c;
  }
  return s;
}

// The std is left off where it is not finite rather than shown as "± -".
std::string mean_and_std(const TimingSummary& t) {
  std::string s = fixed(t.mean_ms, 3);
  if (std::isfinite(t.std_ms)) s += " ± " + fixed(t.std_ms, 3);
  return s;
}

std::string markdown_config(const MatmulResult& r) {
  if (!has_config(r.config)) return kMissing;
  return cell(fmt::format("{}x{}, {}", r.config.mr, r.config.nr, blocking_text(r)));
}

std::string markdown_baseline(const MatmulResult& r, const std::string& library) {
  const BaselineResult* b = baseline(r, library);
  if (b != nullptr && b->status != Status::ok) return to_string(b->status);
  if (b == nullptr || b->timing.repetitions <= 0) return kMissing;
  return fmt::format("{} ({})", fixed(b->gflops, 1), speedup_text(b->speedup));
}

// "86.0%", or "86.0% (90.6%)" with the efficiency over the time the core ran it.
std::string efficiency_cell(const MatmulResult& r) {
  std::string text = fixed(*r.efficiency * 100, 1) + "%";
  if (finite(r.efficiency_while_running)) text += " (" + fixed(*r.efficiency_while_running * 100, 1) + "%)";
  return text;
}

bool has_kernel_alone(const MatmulResult& r) { return finite(r.kernel_l1_gflops) && *r.kernel_l1_gflops > 0; }

// The kernel-alone cell: the block's k loop timed alone in L1, and the share of it the product reached.
std::string kernel_alone_cell(const MatmulResult& r) {
  if (!timed(r) || !has_kernel_alone(r)) return std::string(kMissing);
  return fmt::format("{} ({}%)", fixed(*r.kernel_l1_gflops, 1), fixed(r.gflops / *r.kernel_l1_gflops * 100, 1));
}

bool has_kernel_mix(const MatmulResult& r) {
  return has_kernel_alone(r) && finite(r.kernel_mix_gflops) && *r.kernel_mix_gflops > 0 && r.config.threads == r.threads;
}

// The kernel's-instructions cell: their stream's rate, and the share of it the kernel alone reached.
std::string kernel_mix_cell(const MatmulResult& r) {
  if (!timed(r) || !has_kernel_mix(r)) return std::string(kMissing);
  return fmt::format("{} ({}%)", fixed(*r.kernel_mix_gflops, 1),
                     fixed(*r.kernel_l1_gflops / *r.kernel_mix_gflops * 100, 1));
}

void write_markdown_row(std::ostream& out, const MatmulResult& r, const std::vector<std::string>& libs, bool gaps,
                        bool kernel_alone, bool kernel_mix) {
  std::string problem = shape_text(r);
  if (cold(r)) problem += ", cold cache " + r.cold_cache;
  const bool t = timed(r);
  out << fmt::format("| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |", cell(problem), to_string(r.dtype),
                     r.batch, r.threads, t ? fixed(r.timing.min_ms, 3) : kMissing,
                     t ? mean_and_std(r.timing) : kMissing,
                     t ? fixed(r.gflops, 1) : kMissing,
                     t && finite(r.efficiency) ? efficiency_cell(r) : kMissing,
                     r.bound_by.empty() ? kMissing : cell(r.bound_by), markdown_config(r));
  for (const auto& lib : libs) out << ' ' << markdown_baseline(r, lib) << " |";
  if (gaps) out << ' ' << (r.model_gap && std::isfinite(*r.model_gap) ? fixed(*r.model_gap * 100, 1) + "%" : kMissing) << " |";
  if (kernel_alone) out << ' ' << kernel_alone_cell(r) << " |";
  if (kernel_mix) out << ' ' << kernel_mix_cell(r) << " |";
  out << ' ' << to_string(r.status) << " |\n";
}

// ---- CSV ----

using Cell = std::string (*)(const MatmulResult&);
struct Column {
  std::string_view name;
  Cell cell;
};

constexpr int kMs = 4, kRate = 2, kIntensity = 3, kFraction = 4, kGhz = 3, kError = 3, kSpeedup = 3, kShare = 3;

std::string csv_fixed(double v, int decimals) { return fixed(v, decimals, ""); }
std::string when_timed(const MatmulResult& r, double v, int decimals) { return timed(r) ? csv_fixed(v, decimals) : ""; }
std::string when_configured(const MatmulResult& r, int v) { return has_config(r.config) ? std::to_string(v) : ""; }

constexpr Column kCells[] = {
    {"name", [](const MatmulResult& r) { return r.name; }},
    {"m", [](const MatmulResult& r) { return std::to_string(r.m); }},
    {"n", [](const MatmulResult& r) { return std::to_string(r.n); }},
    {"k", [](const MatmulResult& r) { return std::to_string(r.k); }},
    {"batch", [](const MatmulResult& r) { return std::to_string(r.batch); }},
    {"dtype", [](const MatmulResult& r) { return std::string(to_string(r.dtype)); }},
    {"threads", [](const MatmulResult& r) { return std::to_string(r.threads); }},
    {"cold_cache", [](const MatmulResult& r) { return r.cold_cache; }},
    {"kernel", [](const MatmulResult& r) { return r.kernel; }},
    {"mr", [](const MatmulResult& r) { return when_configured(r, r.config.mr); }},
    {"nv", [](const MatmulResult& r) { return when_configured(r, r.config.nv); }},
    {"nr", [](const MatmulResult& r) { return when_configured(r, r.config.nr); }},
    {"mc", [](const MatmulResult& r) { return when_configured(r, r.config.mc); }},
    {"kc", [](const MatmulResult& r) { return when_configured(r, r.config.kc); }},
    {"nc", [](const MatmulResult& r) { return when_configured(r, r.config.nc); }},
    {"thread_rows", [](const MatmulResult& r) { return when_configured(r, r.config.thread_rows); }},
    {"thread_cols", [](const MatmulResult& r) { return when_configured(r, r.config.thread_cols); }},
    {"batch_threads", [](const MatmulResult& r) { return when_configured(r, r.config.batch_threads); }},
    {"k_threads", [](const MatmulResult& r) { return when_configured(r, r.config.k_threads); }},
    {"config_source", [](const MatmulResult& r) { return r.config_source; }},
    {"max_rel_error",
     [](const MatmulResult& r) { return r.rows_checked > 0 ? scientific(r.max_rel_error, kError, "") : ""; }},
    {"rows_checked", [](const MatmulResult& r) { return r.rows_checked > 0 ? std::to_string(r.rows_checked) : ""; }},
    {"mean_ms", [](const MatmulResult& r) { return when_timed(r, r.timing.mean_ms, kMs); }},
    {"min_ms", [](const MatmulResult& r) { return when_timed(r, r.timing.min_ms, kMs); }},
    {"max_ms", [](const MatmulResult& r) { return when_timed(r, r.timing.max_ms, kMs); }},
    {"std_ms", [](const MatmulResult& r) { return when_timed(r, r.timing.std_ms, kMs); }},
    {"repetitions", [](const MatmulResult& r) { return timed(r) ? std::to_string(r.timing.repetitions) : ""; }},
    {"warmup", [](const MatmulResult& r) { return timed(r) ? std::to_string(r.timing.warmup) : ""; }},
    {"gflops", [](const MatmulResult& r) { return when_timed(r, r.gflops, kRate); }},
    {"arithmetic_intensity",
     [](const MatmulResult& r) {
       return r.arithmetic_intensity > 0 ? csv_fixed(r.arithmetic_intensity, kIntensity) : "";
     }},
    {"ceiling_gflops",
     [](const MatmulResult& r) { return r.ceiling_gflops ? csv_fixed(*r.ceiling_gflops, kRate) : ""; }},
    {"ceiling_source", [](const MatmulResult& r) { return r.ceiling_source; }},
    // Empty where the JSON has null: not measured, or the roof was not scaled to the product's clock.
    {"ceiling_sustained_share",
     [](const MatmulResult& r) {
       return r.ceiling_sustained_share > 0 ? csv_fixed(r.ceiling_sustained_share, kShare) : "";
     }},
    {"bound_by", [](const MatmulResult& r) { return r.bound_by; }},
    {"efficiency",
     [](const MatmulResult& r) { return timed(r) && r.efficiency ? csv_fixed(*r.efficiency, kFraction) : ""; }},
    {"efficiency_while_running",
     [](const MatmulResult& r) {
       return timed(r) && finite(r.efficiency_while_running) ? csv_fixed(*r.efficiency_while_running, kFraction) : "";
     }},
    {"kernel_l1_gflops",
     [](const MatmulResult& r) { return finite(r.kernel_l1_gflops) ? csv_fixed(*r.kernel_l1_gflops, kRate) : ""; }},
    {"kernel_mix_gflops",
     [](const MatmulResult& r) { return finite(r.kernel_mix_gflops) ? csv_fixed(*r.kernel_mix_gflops, kRate) : ""; }},
    {"clock_ghz", [](const MatmulResult& r) { return r.clock.ghz > 0 ? csv_fixed(r.clock.ghz, kGhz) : ""; }},
    {"core_share",
     [](const MatmulResult& r) { return r.availability.scanned_ms > 0 ? csv_fixed(r.availability.share, kFraction) : ""; }},
    {"status", [](const MatmulResult& r) { return std::string(to_string(r.status)); }},
    {"reason", [](const MatmulResult& r) { return r.reason; }},
};

// Where the per-library columns go: after the rates, before the status.
constexpr std::size_t kBaselineColumnsAt = std::size(kCells) - 2;

std::string csv_baseline(const MatmulResult& r, const std::string& library, int field) {
  const BaselineResult* b = baseline(r, library);
  if (b == nullptr || b->status != Status::ok || b->timing.repetitions <= 0) return "";
  switch (field) {
    case 0: return csv_fixed(b->timing.mean_ms, kMs);
    case 1: return csv_fixed(b->timing.min_ms, kMs);
    case 2: return csv_fixed(b->gflops, kRate);
    default: return b->speedup > 0 ? csv_fixed(b->speedup, kSpeedup) : "";
  }
}

constexpr const char* kBaselineFields[] = {"mean_ms", "min_ms", "gflops", "speedup"};

void write_csv_line(std::ostream& out, const std::vector<std::string>& fields) {
  for (std::size_t i = 0; i < fields.size(); ++i) out << (i > 0 ? "," : "") << csv_field(fields[i]);
  out << '\n';
}

}  // namespace

namespace {
// The k step behind kernel_mix_gflops: [{"instruction", "per_step"}], null when none was measured.
json kernel_step_json(const MatmulResult& r) {
  if (r.kernel_mix_step.empty()) return nullptr;
  json step = json::array();
  for (const auto& part : r.kernel_mix_step) step.push_back({{"instruction", part.instruction}, {"per_step", part.per_step}});
  return step;
}
}  // namespace

json to_json(const MatmulResult& r) {
  json row = {{"name", r.name},
              {"shape", {{"m", r.m}, {"n", r.n}, {"k", r.k}}},
              {"batch", r.batch},
              {"dtype", to_string(r.dtype)},
              {"threads", r.threads},
              {"cold_cache", r.cold_cache},
              {"kernel", r.kernel},
              {"isa_level", r.isa_level.empty() ? json(nullptr) : json(r.isa_level)},
              {"model_gap", r.model_gap ? json_number(*r.model_gap) : json(nullptr)},
              {"config", to_json(r.config)},
              {"config_source", r.config_source},
              {"max_rel_error", json_number(r.max_rel_error)},
              {"rows_checked", r.rows_checked},
              {"rounds", r.rounds},
              {"gflops", json_number(r.gflops)},
              {"arithmetic_intensity", json_number(r.arithmetic_intensity)},
              {"ceiling_gflops", json_number(r.ceiling_gflops)},
              {"ceiling_measured_gflops", json_number(r.ceiling_measured_gflops)},
              {"ceiling_clock_ghz", r.ceiling_clock_ghz > 0 ? json_number(r.ceiling_clock_ghz) : json(nullptr)},
              {"ceiling_sustained_share",
               r.ceiling_sustained_share > 0 ? json_number(r.ceiling_sustained_share) : json(nullptr)},
              {"ceiling_source", r.ceiling_source},
              {"ceiling_missing", r.ceiling_missing.empty() ? json(nullptr) : json(r.ceiling_missing)},
              {"ceiling_alternative_source",
               r.ceiling_alternative_source.empty() ? json(nullptr) : json(r.ceiling_alternative_source)},
              {"ceiling_alternative_gflops", json_number(r.ceiling_alternative_gflops)},
              {"bound_by", r.bound_by},
              {"efficiency", json_number(r.efficiency)},
              {"efficiency_while_running", json_number(r.efficiency_while_running)},
              {"kernel_l1_gflops", json_number(r.kernel_l1_gflops)},
              {"kernel_l1_ghz", r.kernel_l1_ghz > 0 ? json_number(r.kernel_l1_ghz) : json(nullptr)},
              {"kernel_mix_gflops", json_number(r.kernel_mix_gflops)},
              {"kernel_mix_share", r.kernel_mix_share > 0 ? json_number(r.kernel_mix_share) : json(nullptr)},
              {"kernel_mix_step", kernel_step_json(r)},
              {"clock", to_json(r.clock)},
              {"core_availability", to_json(r.availability)},
              {"status", to_string(r.status)}};
  row = to_json(r.timing, std::move(row));
  json baselines = json::array();
  for (const auto& b : r.baselines) baselines.push_back(to_json(b));
  row["baselines"] = std::move(baselines);
  if (!r.reason.empty()) row["reason"] = r.reason;
  return row;
}

MatmulResult matmul_from_json(const json& j) {
  MatmulResult r;
  r.name = text_at(j, "name");
  if (const json* shape = member(j, "shape")) {
    r.m = integer_at<int64_t>(*shape, "m", 0);
    r.n = integer_at<int64_t>(*shape, "n", 0);
    r.k = integer_at<int64_t>(*shape, "k", 0);
  }
  r.batch = integer_at<int64_t>(j, "batch", r.batch);
  r.dtype = dtype_from(text_at(j, "dtype"));
  r.threads = integer_at(j, "threads", r.threads);
  r.cold_cache = text_at(j, "cold_cache", r.cold_cache);
  r.kernel = text_at(j, "kernel");
  r.isa_level = text_at(j, "isa_level");
  if (const json* gap = member(j, "model_gap"); gap != nullptr && gap->is_number()) r.model_gap = gap->get<double>();
  if (const json* config = member(j, "config")) r.config = config_from(*config);
  r.config_source = text_at(j, "config_source");
  r.max_rel_error = number_at(j, "max_rel_error");
  r.rows_checked = integer_at<int64_t>(j, "rows_checked", 0);
  r.timing = timing_from(j);
  r.rounds = std::max(1, integer_at(j, "rounds", 1));  // documents before 2026-12-04 ran one round
  r.gflops = number_at(j, "gflops");
  r.arithmetic_intensity = number_at(j, "arithmetic_intensity");
  r.ceiling_gflops = optional_at(j, "ceiling_gflops");
  r.ceiling_measured_gflops = optional_at(j, "ceiling_measured_gflops");
  if (auto ghz = optional_at(j, "ceiling_clock_ghz")) r.ceiling_clock_ghz = *ghz;
  if (auto share = optional_at(j, "ceiling_sustained_share")) r.ceiling_sustained_share = *share;
  r.ceiling_source = text_at(j, "ceiling_source");
  r.ceiling_missing = text_at(j, "ceiling_missing");
  r.ceiling_alternative_source = text_at(j, "ceiling_alternative_source");
  r.ceiling_alternative_gflops = optional_at(j, "ceiling_alternative_gflops");
  r.bound_by = text_at(j, "bound_by");
  r.efficiency = optional_at(j, "efficiency");
  r.efficiency_while_running = optional_at(j, "efficiency_while_running");
  r.kernel_l1_gflops = optional_at(j, "kernel_l1_gflops");
  if (auto ghz = optional_at(j, "kernel_l1_ghz")) r.kernel_l1_ghz = *ghz;
  r.kernel_mix_gflops = optional_at(j, "kernel_mix_gflops");
  if (auto share = optional_at(j, "kernel_mix_share")) r.kernel_mix_share = *share;
  if (const json* step = member(j, "kernel_mix_step"); step != nullptr && step->is_array())
    for (const auto& part : *step)
      if (part.is_object())
        r.kernel_mix_step.push_back({text_at(part, "instruction"), integer_at(part, "per_step", 0)});
  if (const json* clock = member(j, "clock")) r.clock = clock_from(*clock);
  if (const json* a = member(j, "core_availability"); a != nullptr && a->is_object()) r.availability = availability_from(*a);
  if (const json* baselines = member(j, "baselines"); baselines != nullptr && baselines->is_array())
    for (const auto& b : *baselines)
      if (b.is_object()) r.baselines.push_back(baseline_from(b));
  r.reason = text_at(j, "reason");
  read_status(j, r.status, r.reason);
  return r;
}

void write_matmul_console(std::ostream& out, const MatmulResult& r) {
  const char* unit = rate_unit(r.dtype);
  std::string head = fmt::format("matmul {} {} (batch {}) on {}", to_string(r.dtype), shape_text(r), r.batch,
                                 counted(r.threads, "thread"));
  if (cold(r)) head += ", cold cache " + r.cold_cache;
  if (!r.kernel.empty()) head += ", kernel " + r.kernel;
  if (has_config(r.config)) head += ", " + blocking_text(r);
  out << head << '\n';
  if (r.rows_checked > 0)
    out << fmt::format("  max_rel_error {} ({} rows checked)\n",
                       r.max_rel_error == 0 ? std::string("0") : scientific(r.max_rel_error, 1), r.rows_checked);
  if (timed(r)) {
    const TimingSummary& t = r.timing;
    out << fmt::format("  time ms: mean {} min {} max {} std {} ({} reps, {} warm-up{})\n", fixed(t.mean_ms, 3),
                       fixed(t.min_ms, 3), fixed(t.max_ms, 3), fixed(t.std_ms, 3), t.repetitions, t.warmup,
                       r.rounds > 1 && !r.baselines.empty()
                           ? fmt::format("; the best of {} rounds in turns with the baselines", r.rounds)
                                    : std::string());
    std::string rate = fmt::format("  {} {}, AI {} {}/byte", fixed(r.gflops, 1), unit, fixed(r.arithmetic_intensity, 1),
                                   op_name(r.dtype));
    if (!r.bound_by.empty()) rate += ", bound by " + r.bound_by;
    if (finite(r.ceiling_gflops)) {
      rate += fmt::format("{} ceiling {} {}", r.bound_by.empty() ? "," : ":", fixed(*r.ceiling_gflops, 1), unit);
      std::string source = r.ceiling_source;
      // A compute roof scaled to the product's clock (one thread: score_matmul) says from what.
      const bool compute = r.bound_by.rfind("compute", 0) == 0;
      if (r.threads == 1 && compute && finite(r.ceiling_measured_gflops) && r.ceiling_clock_ghz > 0 && r.clock.ghz > 0)
        source += fmt::format("{}{} measured at {} GHz, scaled to the product's {} GHz", source.empty() ? "" : ": ",
                              fixed(*r.ceiling_measured_gflops, 1), fixed(r.ceiling_clock_ghz, 2),
                              fixed(r.clock.ghz, 2));
      if (compute && sustained_share_applies(r.ceiling_sustained_share))
        source += fmt::format("{}x {} kept sustained", source.empty() ? "" : ", ",
                              fixed(r.ceiling_sustained_share, 3));
      if (!source.empty()) rate += " (" + source + ")";
      if (finite(r.efficiency)) rate += fmt::format(", efficiency {}%", fixed(*r.efficiency * 100, 1));
      if (finite(r.efficiency_while_running)) {
        const int stops = unavoidable_interruptions(r.availability, r.timing.min_ms).count;
        rate += fmt::format(" ({}% without the {} interruption{} of its {}core a call of {} ms spans)",
                            fixed(*r.efficiency_while_running * 100, 1), stops, stops == 1 ? "" : "s",
                            team_product(r) ? "least available " : "", fixed(r.timing.min_ms, 2));
      }
    } else {
      rate += ", no ceiling measured";
      if (!r.ceiling_missing.empty()) rate += " (" + r.ceiling_missing + ")";
    }
    out << rate << '\n';
    if (!r.ceiling_alternative_source.empty()) {
      // The kernels chose between the dtype's dot product and widening (kernel "<width> bf16 as f32 ...").
      const bool widened = r.kernel.find(" as ") != std::string::npos;
      out << fmt::format("  the roof not taken ({}; --widen chooses): {}, {}\n",
                         widened ? fmt::format("{}'s dot product", to_string(r.dtype))
                                 : fmt::format("{} widened to the multiply-add", to_string(r.dtype)),
                         r.ceiling_alternative_source,
                         finite(r.ceiling_alternative_gflops) ? fixed(*r.ceiling_alternative_gflops, 1) + " " + unit + " as measured"
                                                              : std::string("not measured"));
    }
    if (finite(r.kernel_l1_gflops) && *r.kernel_l1_gflops > 0) {
      // The product's own kernel (MatmulResult::kernel_l1_gflops): say which where A is read in place.
      std::string line = fmt::format("  the {}x{} kernel's k loop alone{}, in L1: {} {}", r.config.mr, r.config.nr,
                                     r.config.pack_a ? "" : " (A read in place)", fixed(*r.kernel_l1_gflops, 1), unit);
      if (r.config.threads > 1) line += " (one core's, times the threads)";
      if (kernel_l1_as_ran(r))
        line += fmt::format(" as it ran at {} GHz (the ceiling carries the core's sustained share)", fixed(r.kernel_l1_ghz, 2));
      else if (loop_rate_at_roof_clock(r.config.threads, r.threads, r.ceiling_clock_ghz, r.kernel_l1_ghz, r.clock.ghz))
        line += fmt::format(" at the roof's {} GHz (timed at {} GHz)", fixed(r.ceiling_clock_ghz, 2), fixed(r.kernel_l1_ghz, 2));
      else if (r.kernel_l1_ghz > 0 && r.clock.ghz > 0)
        line += fmt::format(" at the product's {} GHz (timed at {} GHz)", fixed(r.clock.ghz, 2), fixed(r.kernel_l1_ghz, 2));
      // Against the ceiling only where both count the same threads (a plan may use fewer than --threads).
      if (finite(r.ceiling_gflops) && *r.ceiling_gflops > 0 && r.bound_by.rfind("compute", 0) == 0 &&
          r.config.threads == r.threads)
        line += fmt::format(", {}% of the ceiling", fixed(*r.kernel_l1_gflops / *r.ceiling_gflops * 100, 1));
      line += fmt::format("; the product reached {}% of it", fixed(r.gflops / *r.kernel_l1_gflops * 100, 1));
      out << line << '\n';
      if (has_kernel_mix(r) && !r.kernel_mix_step.empty()) {
        std::vector<std::string> parts;
        for (const auto& part : r.kernel_mix_step) parts.push_back(fmt::format("{} x {}", part.per_step, part.instruction));
        std::string mix = fmt::format("  its k step's instructions as an independent stream ({} a step): {} {}",
                                      fmt::join(parts, " + "), fixed(*r.kernel_mix_gflops, 1), unit);
        if (r.kernel_mix_share > 0) mix += fmt::format(", {}% of the ceiling", fixed(r.kernel_mix_share * 100, 1));
        mix += fmt::format("; the k loop alone reached {}% of it", fixed(*r.kernel_l1_gflops / *r.kernel_mix_gflops * 100, 1));
        out << mix << '\n';
      }
    }
  }
  if (r.availability.scanned_ms > 0 && r.availability.interruptions > 0)
    out << fmt::format("  {}: {} interruption{} in {} ms scanned beside the timed calls, median {} us, longest {} us\n",
                       !team_product(r)           ? std::string("the caller's core")
                       : r.availability.cpu >= 0 ? fmt::format("the team's least available core (CPU {})", r.availability.cpu)
                                                 : std::string("the team's least available core"),
                       r.availability.interruptions, r.availability.interruptions == 1 ? "" : "s",
                       fixed(r.availability.scanned_ms, 0),
                       fixed(r.availability.median_interruption_us, 1), fixed(r.availability.longest_interruption_us, 1));
  if (r.model_gap && std::isfinite(*r.model_gap))
    out << fmt::format("  cost model's first choice: {}% slower than the fastest tiling measured\n",
                       fixed(*r.model_gap * 100, 1));
  for (const auto& b : r.baselines) {
    std::string line = "  " + b.library;
    // What it says of itself names the kernels it picked; the file is in the JSON.
    if (!b.version.empty()) line += " (" + b.version + ")";
    else if (!b.path.empty()) line += " (" + b.path + ")";
    if (b.status == Status::mistrusted && b.timing.repetitions > 0) {
      // Timed, but not a figure to compare with (a wrong result): the time stays visible beside why.
      line += fmt::format(": {}: {} ({} {}, min {} ms)", to_string(b.status),
                          b.reason.empty() ? "no reason given" : b.reason, fixed(b.gflops, 1), unit,
                          fixed(b.timing.min_ms, 2));
    } else if (b.status != Status::ok) {
      line += fmt::format(": {}: {}", to_string(b.status), b.reason.empty() ? "no reason given" : b.reason);
    } else if (b.timing.repetitions > 0) {
      line += fmt::format(": {} {}, min {} ms", fixed(b.gflops, 1), unit, fixed(b.timing.min_ms, 2));
      if (b.speedup > 0 && std::isfinite(b.speedup)) line += " -> peakprobe " + speedup_text(b.speedup);
    } else {
      line += ": not timed";
    }
    out << line << '\n';
  }
  if (r.status != Status::ok)
    out << fmt::format("  {}: {}\n", to_string(r.status), r.reason.empty() ? "no reason given" : r.reason);
}

void write_matmul_markdown(std::ostream& out, const std::vector<MatmulResult>& results) {
  out << "## matmul\n\n";
  if (results.empty()) {
    out << "No matmul results.\n";
    return;
  }
  const std::vector<std::string> libs = libraries(results);
  out << "Times are of one whole call (all batch items); GFLOP/s is from the fastest run (GOP/s for int8) and "
         "efficiency is that rate over the measured ceiling.";
  if (!libs.empty())
    out << " A baseline cell is the library's GFLOP/s and the speedup, its min time over peakprobe's: above "
           "1.00x peakprobe is faster.";
  int rounds = 1;
  for (const auto& r : results) rounds = std::max(rounds, r.rounds);
  if (!libs.empty() && rounds > 1)
    out << fmt::format(" Ours and the libraries ran in turns, up to {} rounds, each side's time its best round.", rounds);
  const bool gaps = std::any_of(results.begin(), results.end(), [](const MatmulResult& r) { return r.model_gap.has_value(); });
  if (gaps) out << " The model gap is how much slower the cost model's first choice ran than the fastest tiling measured.";
  if (std::any_of(results.begin(), results.end(), [](const MatmulResult& r) { return finite(r.efficiency_while_running); }))
    out << " An efficiency in brackets leaves out the interruptions of its core (several threads: of their least "
           "available core) that the fastest call spans, their rate and length scanned beside the timed calls.";
  const bool kernel_alone = std::any_of(results.begin(), results.end(), has_kernel_alone);
  if (kernel_alone)
    out << " The kernel alone is the rate of the configuration's register block timed alone with its panels in L1 "
           "(its k loop, on as many threads as the product started), and in brackets the share of it the product "
           "reached.";
  const bool kernel_mix = std::any_of(results.begin(), results.end(), has_kernel_mix);
  if (kernel_mix)
    out << " Its instructions is the rate the block's k step allows when its own loads and multiply-adds run as an "
           "independent stream (their share of the roof instruction's rate on one core, times the ceiling), and in "
           "brackets the share of it the kernel alone reached: what lies between it and the ceiling is the core's, "
           "not the kernel's.";
  out << "\n\n| shape | dtype | batch | threads | min ms | mean ms ± std | GFLOP/s | efficiency | bound by | config |";
  for (const auto& lib : libs) out << ' ' << cell(lib) << " |";
  if (gaps) out << " model gap |";
  if (kernel_alone) out << " kernel alone |";
  if (kernel_mix) out << " its instructions |";
  out << " status |\n|---|---|--:|--:|--:|--:|--:|--:|---|---|";
  for (std::size_t i = 0; i < libs.size(); ++i) out << "--:|";
  if (gaps) out << "--:|";
  if (kernel_alone) out << "--:|";
  if (kernel_mix) out << "--:|";
  out << "---|\n";
  for (const auto& r : results) write_markdown_row(out, r, libs, gaps, kernel_alone, kernel_mix);
  const bool any =
      std::any_of(results.begin(), results.end(), [](const MatmulResult& r) { return r.status != Status::ok; });
  if (!any) return;
  out << "\nNot ok:\n\n";
  for (const auto& r : results) {
    if (r.status == Status::ok) continue;
    out << fmt::format("- {} {} ({}): {}\n", cell(shape_text(r)), to_string(r.dtype), to_string(r.status),
                       r.reason.empty() ? "no reason given" : cell(r.reason));
  }
}

void write_matmul_csv(std::ostream& out, const std::vector<MatmulResult>& results) {
  const std::vector<std::string> libs = libraries(results);
  std::vector<std::string> header;
  for (std::size_t i = 0; i < std::size(kCells); ++i) {
    if (i == kBaselineColumnsAt)
      for (const auto& lib : libs)
        for (const char* f : kBaselineFields) header.push_back(lib + "_" + f);
    header.emplace_back(kCells[i].name);
  }
  write_csv_line(out, header);
  for (const auto& r : results) {
    std::vector<std::string> fields;
    for (std::size_t i = 0; i < std::size(kCells); ++i) {
      if (i == kBaselineColumnsAt)
        for (const auto& lib : libs)
          for (int f = 0; f < int(std::size(kBaselineFields)); ++f) fields.push_back(csv_baseline(r, lib, f));
      fields.push_back(kCells[i].cell(r));
    }
    write_csv_line(out, fields);
  }
}

}  // namespace peakprobe
