// admitsim run FILE... [--seed N] [--out PATH|-] [--out-dir DIR] [--html PATH] [--junit PATH|-]
//                     [--trace PATH|-] [--quiet]
//
// Runs each scenario file with one seed and writes one JSON report each (and
// an HTML page with --html; with --junit, one JUnit XML file of every run,
// reports/run_junit.hpp; with --trace, every trace entry of every run of a
// single scenario as JSON lines, trace_file.hpp). Every file is validated and
// every output path checked before anything runs, so bad input never leaves a
// partial set of reports.
#include <cstdio>
#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "reports/report.hpp"
#include "reports/run_junit.hpp"
#include "sim/cli/errors.hpp"
#include "sim/cli/scenario_run.hpp"
#include "sim/cli/verb.hpp"
#include "sim/cli/numbers.hpp"
#include "sim/cli/trace_file.hpp"
#include "sim/cli/write_file.hpp"

namespace admit::cli {

namespace {

namespace fs = std::filesystem;

void write_report(const std::string& path, const std::string& bytes, const std::string& what) {
  if (const auto why = write_output(path, bytes, what)) throw input_error{path, *why};
}

void check_writable(const std::string& path) {
  if (const auto why = check_output(path)) throw input_error{path, *why};
}

std::string human_ns(std::int64_t ns) {
  char buf[64];
  if (ns >= 60'000'000'000) std::snprintf(buf, sizeof buf, "%.1fmin", ns / 6e10);
  else if (ns >= 1'000'000'000) std::snprintf(buf, sizeof buf, "%.2fs", ns / 1e9);
  else std::snprintf(buf, sizeof buf, "%.1fms", ns / 1e6);
  return buf;
}

void print_summary(const loaded& l, const run_output& o, const std::string& where) {
  for (std::size_t i = 0; i < o.runs.size(); ++i) {
    const auto& rec = o.runs[i];
    const auto& m = rec.metrics;
    std::int64_t cap = 0;
    for (const auto& g : l.sc.gates) cap += g.cap();
    const std::int64_t portal_cap = l.sc.service.portal_cap.value_or(cap);
    const double wall = o.wall_s[i];
    const double ratio = wall > 0 ? (m.simulated_ns / 1e9) / wall : 0;
    const double eps = wall > 0 ? rec.diagnostics.events / wall : 0;
    const bool met = reports::as_expected(l.sc, rec);
    const std::string name = rec.variant.empty() ? l.sc.name : l.sc.name + "[" + rec.variant + "]";
    std::fprintf(stderr,
                 "%s seed=%llu: %s (%s) requests=%llu completed=%llu gate_max=%lld/%lld portal_max=%lld/%lld "
                 "simulated=%s wall=%.3fs sim/wall=%.0fx events/s=%.3g -> %s\n",
                 name.c_str(), static_cast<unsigned long long>(rec.seed), rec.verdict(),
                 met ? "as expected" : "NOT as expected", static_cast<unsigned long long>(m.requests),
                 static_cast<unsigned long long>(m.completed), static_cast<long long>(m.gate_inflight_max),
                 static_cast<long long>(cap), static_cast<long long>(m.portal_inflight_max),
                 static_cast<long long>(portal_cap), human_ns(m.simulated_ns).c_str(), wall, ratio, eps,
                 where.c_str());
    if (rec.inconclusive)
      std::fprintf(stderr, "  inconclusive (%s): %s\n", rec.inconclusive->kind.c_str(),
                   rec.inconclusive->detail.c_str());
    for (const auto& inv : rec.invariants) {
      if (!inv.first) continue;
      std::fprintf(stderr, "  %s broken at %s: %s\n", inv.name.c_str(), human_ns(inv.first->at_ns).c_str(),
                   inv.first->detail.c_str());
      // How bad it got: the worst moment and the windows (a level), or how many steps failed (an event).
      if (inv.worst)
        std::fprintf(stderr, "    worst %lld against %lld at %s; %llu window%s, %s in violation\n",
                     static_cast<long long>(inv.worst->value), static_cast<long long>(inv.worst->bound),
                     human_ns(inv.worst->at_ns).c_str(), static_cast<unsigned long long>(inv.windows),
                     inv.windows == 1 ? "" : "s", human_ns(inv.time_in_violation_ns).c_str());
      else if (inv.windows > 1)
        std::fprintf(stderr, "    %llu violations\n", static_cast<unsigned long long>(inv.windows));
      for (const auto& c : inv.causes)
        std::fprintf(stderr, "    cause %s (%llu): %s\n", c.kind.c_str(), static_cast<unsigned long long>(c.count),
                     c.example.c_str());
    }
  }
}

std::string default_out(const loaded& l, std::uint64_t seed, const std::string& dir) {
  return (fs::path(dir) / (l.sc.name + "-seed" + std::to_string(seed) + ".json")).string();
}

// --html PATH: the page of a single scenario; with several scenarios (or when PATH is a directory)
// PATH/<scenario>-seed<N>.html, the name its JSON report has under --out-dir.
std::string html_out(const loaded& l, std::uint64_t seed, const std::string& html, bool several) {
  std::error_code ec;
  if (!several && !html.ends_with('/') && !fs::is_directory(html, ec)) return html;
  return (fs::path(html) / (l.sc.name + "-seed" + std::to_string(seed) + ".html")).string();
}

// What `run` was asked for on its command line.
struct run_request {
  std::vector<std::string> files;
  std::optional<std::uint64_t> seed;
  std::optional<std::string> out, out_dir, html, junit, trace;
  bool quiet = false;
};

int cmd_run(const run_request& req) {
  if (req.out && req.out_dir)
    throw input_error{"--out and --out-dir",
                      "expected one of them, got both (--out names one report, --out-dir a folder)"};
  if (req.out && req.files.size() > 1)
    throw input_error{"--out", "expected a single scenario (it names one report), got " +
                                   std::to_string(req.files.size()) + "; use --out-dir for several"};
  if (req.trace && req.files.size() > 1)
    throw input_error{"--trace", "expected a single scenario (it names one trace file), got " +
                                     std::to_string(req.files.size())};
  // Validate every file before running any, so bad input never leaves a partial set of reports.
  std::vector<loaded> all;
  for (const auto& f : req.files) all.push_back(load_file(f));
  // Every output path, checked before anything runs: no two outputs of this command on one path,
  // and each one writable.
  const std::string dir = req.out_dir.value_or("out");
  std::vector<std::string> where(all.size()), html_where(all.size());
  std::vector<std::pair<std::string, std::string>> outputs;  // (path, what it holds)
  for (std::size_t i = 0; i < all.size(); ++i) {
    const std::uint64_t s = req.seed.value_or(all[i].sc.seed);
    where[i] = req.out ? *req.out : default_out(all[i], s, dir);
    outputs.emplace_back(where[i], "the report of " + all[i].file);
    if (req.html) {
      html_where[i] = html_out(all[i], s, *req.html, all.size() > 1);
      outputs.emplace_back(html_where[i], "the HTML report of " + all[i].file);
    }
  }
  if (req.junit) outputs.emplace_back(*req.junit, "--junit");  // last: a clash below is the JUnit file's
  for (std::size_t i = 0; i < outputs.size(); ++i)
    for (std::size_t j = 0; j < i; ++j)
      if (same_output(outputs[i].first, outputs[j].first)) {
        if (req.junit && i + 1 == outputs.size())
          throw input_error{"--junit", "expected a file of its own, got the path of " + outputs[j].second + ": " +
                                           outputs[i].first};
        if (req.html && req.out)
          throw input_error{"--html and --out", "expected two files, got the same one: " + outputs[i].first};
        throw input_error{outputs[i].first, "expected one file per path, got " + outputs[j].second + " and " +
                                                outputs[i].second + " (the same scenario name and seed)"};
      }
  if (!req.out)
    if (const auto why = prepare_output_dir(dir)) throw input_error{dir, *why};
  if (req.html && all.size() > 1)
    if (const auto why = prepare_output_dir(*req.html)) throw input_error{*req.html, *why};
  for (const auto& [path, what] : outputs) check_writable(path);
  trace_file trace;
  if (req.trace) {
    std::vector<other_path> others{{where.front(), req.out ? "--out" : "the report"},
                                   {req.files.front(), "the scenario file", true}};
    if (req.html) others.push_back({html_where.front(), "--html"});
    if (req.junit) others.push_back({*req.junit, "--junit"});
    check_trace_path(*req.trace, others);
    open_trace(trace, *req.trace, trace_header{all.front().sc.name, all.front().file,
                                               req.seed.value_or(all.front().sc.seed), std::nullopt});
  }

  int rc = exit_as_expected;
  std::vector<reports::junit_suite> suites;  // one per scenario file, with --junit
  for (std::size_t i = 0; i < all.size(); ++i) {
    const loaded& l = all[i];
    const std::uint64_t s = req.seed.value_or(l.sc.seed);
    run_output o = run_one(l, s, req.html.has_value(), req.trace ? &trace : nullptr);
    // The report's own replay command.
    if (req.junit) suites.push_back(reports::run_junit_suite(l.sc, o.runs, reports::replay_command(l.file, s)));
    if (req.trace) flush_trace(trace, *req.trace);
    write_report(where[i], o.report_bytes, "report");
    if (req.html) write_report(html_where[i], o.html_bytes, "HTML report");
    if (req.trace) commit_trace(trace, *req.trace);
    if (!req.quiet) print_summary(l, o, where[i] == "-" ? "stdout" : where[i]);
    if (!o.met) rc = exit_not_expected;
  }
  // Written once every scenario ran: a run that failed inside (run_error) leaves no JUnit file to pass off as whole.
  if (req.junit) write_report(*req.junit, reports::render_run_junit(suites), "JUnit file");
  return rc;
}

class run_verb final : public verb {
 public:
  explicit run_verb(CLI::App& app) : verb(app.add_subcommand("run", "Run scenario files and write one JSON report each")) {
    // Numbers and paths are read as text: a given option counts even when empty (numbers.hpp).
    sub_->add_option("FILE", files_, "Scenario files ('-' for standard input)")->required();
    seed_ = sub_->add_option("--seed", seed_text_, "Seed for every run: 0 to 2^64-1 (default: the scenario's own seed)")
                ->type_name("N");
    out_ = sub_->add_option("--out", out_text_,
                            "Report path for a single scenario ('-' for stdout; a device or FIFO is written in "
                            "place); its folder must exist");
    out_dir_ = sub_->add_option("--out-dir", out_dir_text_, "Directory for the reports, created if missing (default: out/)");
    html_ = sub_->add_option("--html", html_text_,
                             "Also write an HTML report: this file for a single scenario; with several, a directory "
                             "that gets <scenario>-seed<N>.html each (docs/html-report.md)");
    junit_ = sub_->add_option("--junit", junit_text_,
                              "Also write JUnit XML for CI: one testsuite per scenario file, one testcase per run "
                              "(a FIFO scenario's, each lease variant's); '-' for stdout (docs/ci.md)");
    trace_ = sub_->add_option("--trace", trace_text_,
                              "Also write every trace entry of every run of a single scenario, passing runs too, as "
                              "JSON lines to this file ('-' for stdout; docs/trace.md)");
    sub_->add_flag("--quiet,-q", quiet_, "No summary line on stderr");
  }

  int run() const override {
    run_request req;
    req.files = files_;
    if (seed_->count() != 0) req.seed = parse_number("--seed", seed_text_);
    if (out_->count() != 0) req.out = out_text_;
    if (out_dir_->count() != 0) req.out_dir = out_dir_text_;
    if (html_->count() != 0) req.html = html_text_;
    if (junit_->count() != 0) req.junit = junit_text_;
    if (trace_->count() != 0) req.trace = trace_text_;
    req.quiet = quiet_;
    return cmd_run(req);
  }

 private:
  std::vector<std::string> files_;
  std::string seed_text_, out_text_, out_dir_text_, html_text_, junit_text_, trace_text_;
  CLI::Option* seed_ = nullptr;
  CLI::Option* out_ = nullptr;
  CLI::Option* out_dir_ = nullptr;
  CLI::Option* html_ = nullptr;
  CLI::Option* junit_ = nullptr;
  CLI::Option* trace_ = nullptr;
  bool quiet_ = false;
};

}  // namespace

std::unique_ptr<verb> make_run_verb(CLI::App& app) { return std::make_unique<run_verb>(app); }

}  // namespace admit::cli
