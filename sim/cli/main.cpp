// admitsim: the command-line face of the simulator.
//
//   admitsim run FILE... [--seed N] [--out PATH|-] [--out-dir DIR] [--html PATH] [--quiet]
//   admitsim replay REPORT.json
//   admitsim check FILE...
//   admitsim list [--dir DIR]
//   admitsim explore FILE [--seeds N | --time 60s] [--jobs N] [--shard I/N] [--out DIR]  (explore.hpp)
//
// Exit codes: 0 every run came out as its scenario expects; 1 at least one
// did not (or a replay differed); 2 bad input or usage. Every error is one
// line "admitsim: SUBJECT: MESSAGE" (errors.hpp), for bad input in a file
// "admitsim: FILE: /json/path: what was expected, got what", and no report
// is written for it. Every input is read by read_file.hpp (regular files or
// "-", up to a limit) and every scenario validated before any runs; every
// output path is checked before a run and written by write_file.hpp (a
// temporary file renamed over a regular file, devices and FIFOs written in
// place), so a report file on disk is always complete.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string_view>
#include <string>
#include <vector>

#include "gate/admit_assert.hpp"
#include "reports/html.hpp"
#include "reports/report.hpp"
#include "reports/sha256.hpp"
#include "sim/cli/errors.hpp"
#include "sim/cli/explore.hpp"
#include "sim/cli/numbers.hpp"
#include "sim/cli/read_file.hpp"
#include "sim/cli/write_file.hpp"
#include "sim/scenario/duration.hpp"
#include "sim/scenario/json_parse.hpp"
#include "sim/scenario/loader.hpp"
#include "sim/scenario/memory_reserve.hpp"
#include "sim/world/world.hpp"

#ifndef ADMITSIM_VERSION
#define ADMITSIM_VERSION "0.0.0"
#endif

namespace fs = std::filesystem;
using json = nlohmann::ordered_json;
using namespace admit;

namespace {

using cli::exit_as_expected;
using cli::exit_bad_input;
using cli::exit_not_expected;

using cli::input_error;
using cli::run_error;

struct loaded {
  std::string file;
  std::string bytes;
  json doc;
  scenario::scenario sc;
  loaded() = default;
  loaded(loaded&&) = default;
  loaded& operator=(loaded&&) = default;
  // nlohmann's destructor allocates; this one only frees (also while a bad_alloc unwinds).
  ~loaded() { scenario::dismantle_json(doc); }
};

loaded load_text(const std::string& file, std::string bytes) {
  loaded l;
  l.file = file;
  l.bytes = std::move(bytes);
  l.sc = cli::parse_scenario(file, l.bytes, l.doc);  // one linear-time parse
  return l;
}

loaded load_file(const std::string& file) { return load_text(file, cli::read_input(file, "scenario file")); }

struct run_output {
  std::string report_bytes;
  std::string html_bytes;  // only when asked for
  bool met = false;
  std::vector<world::run_record> runs;
  std::vector<double> wall_s;  // per run
};

// The scenario once per lease variant (each a one-variant copy), or as it is:
// run_all runs the variants in this order, so timing the parts one by one
// gives each run its own wall time and the same records.
std::vector<scenario::scenario> parts_by_variant(const scenario::scenario& sc) {
  for (std::size_t i = 0; i < sc.gates.size(); ++i) {
    const auto& g = sc.gates[i];
    if (g.kind != scenario::gate_kind::lease || g.lease.variants.size() < 2) continue;
    std::vector<scenario::scenario> parts;
    for (scenario::lease_variant v : g.lease.variants) {
      parts.push_back(sc);
      parts.back().gates[i].lease.variants = {v};
    }
    return parts;
  }
  return {sc};
}

run_output run_one(const loaded& l, std::uint64_t seed, bool html = false) {
  run_output out;
  try {
    for (const scenario::scenario& part : parts_by_variant(l.sc)) {
      const auto t0 = std::chrono::steady_clock::now();  // wall time for the summary line only
      std::vector<world::run_record> runs = world::run_all(part, seed);
      const double wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      for (auto& r : runs) {
        out.runs.push_back(std::move(r));
        out.wall_s.push_back(wall_s / static_cast<double>(runs.size()));
      }
    }
  } catch (const admit::assertion_failure& e) {
    throw run_error{l.file, "internal assertion failed with seed " + std::to_string(seed) + ": " + e.what() +
                                " (replay: admitsim run " + l.file + " --seed " + std::to_string(seed) + ")"};
  } catch (const std::invalid_argument& e) {
    throw input_error{l.file, e.what()};
  }
  reports::report_input in;
  in.sc = &l.sc;
  in.source = &l.doc;
  in.file = l.file;
  in.sha256 = reports::sha256_hex(l.bytes);
  for (const auto& r : out.runs) in.runs.push_back(&r);
  out.report_bytes = reports::render_report(reports::build_report(in));
  if (html) out.html_bytes = reports::render_html(in);
  out.met = true;
  for (const auto& r : out.runs) out.met = out.met && reports::as_expected(l.sc, r);
  return out;
}

void write_report(const std::string& path, const std::string& bytes, const std::string& what) {
  if (const auto why = cli::write_output(path, bytes, what)) throw input_error{path, *why};
}

void check_writable(const std::string& path) {
  if (const auto why = cli::check_output(path)) throw input_error{path, *why};
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
    for (const auto& inv : rec.invariants)
      if (inv.first)
        std::fprintf(stderr, "  %s broken at %s: %s\n", inv.name.c_str(), human_ns(inv.first->at_ns).c_str(),
                     inv.first->detail.c_str());
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
  std::optional<std::string> out, out_dir, html;
  bool quiet = false;
};

int cmd_run(const run_request& req) {
  if (req.out && req.out_dir)
    throw input_error{"--out and --out-dir",
                      "expected one of them, got both (--out names one report, --out-dir a folder)"};
  if (req.out && req.files.size() > 1)
    throw input_error{"--out", "expected a single scenario (it names one report), got " +
                                   std::to_string(req.files.size()) + "; use --out-dir for several"};
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
  for (std::size_t i = 0; i < outputs.size(); ++i)
    for (std::size_t j = 0; j < i; ++j)
      if (cli::same_output(outputs[i].first, outputs[j].first)) {
        if (req.html && req.out)
          throw input_error{"--html and --out", "expected two files, got the same one: " + outputs[i].first};
        throw input_error{outputs[i].first, "expected one file per path, got " + outputs[j].second + " and " +
                                                outputs[i].second + " (the same scenario name and seed)"};
      }
  if (!req.out)
    if (const auto why = cli::prepare_output_dir(dir)) throw input_error{dir, *why};
  if (req.html && all.size() > 1)
    if (const auto why = cli::prepare_output_dir(*req.html)) throw input_error{*req.html, *why};
  for (const auto& [path, what] : outputs) check_writable(path);

  int rc = exit_as_expected;
  for (std::size_t i = 0; i < all.size(); ++i) {
    const loaded& l = all[i];
    const std::uint64_t s = req.seed.value_or(l.sc.seed);
    run_output o = run_one(l, s, req.html.has_value());
    write_report(where[i], o.report_bytes, "report");
    if (req.html) write_report(html_where[i], o.html_bytes, "HTML report");
    if (!req.quiet) print_summary(l, o, where[i] == "-" ? "stdout" : where[i]);
    if (!o.met) rc = exit_not_expected;
  }
  return rc;
}

int cmd_check(const std::vector<std::string>& files, bool quiet) {
  for (const auto& f : files) {
    loaded l = load_file(f);
    if (!quiet) std::fprintf(stderr, "%s: ok (%s)\n", f.c_str(), l.sc.name.c_str());
  }
  return exit_as_expected;
}

// The string at /scenario/KEY of a report, or bad input naming the JSON path.
std::string report_string(const std::string& report_path, const json& scenario, const std::string& key,
                          const std::string& what) {
  const auto it = scenario.find(key);
  const std::string expected = "/scenario/" + key + ": expected a string (" + what + "), got ";
  if (it == scenario.end()) throw input_error{report_path, expected + "nothing"};
  if (!it->is_string()) {
    const std::string type = it->type_name();
    throw input_error{report_path, expected + (type == "array" || type == "object" ? "an " : "a ") + type};
  }
  return it->get<std::string>();
}

int cmd_replay(const std::string& report_path, bool quiet) {
  const std::string bytes = cli::read_input(report_path, "report");
  json report;
  const scenario::json_dismantler report_teardown{report};
  // A report is shallow (the scenario it embeds is at most 64 levels deep).
  // Bounding the depth while parsing keeps the copies and dumps below off a
  // recursion that a deeply nested file would run past the end of the stack.
  constexpr int report_depth_max = 128;
  try {
    report = scenario::parse_json_text(bytes, {report_depth_max});  // linear; the callback parser was quadratic
  } catch (const scenario::scenario_error& e) {
    if (std::string_view(e.what()).find("nested at most") != std::string_view::npos)
      throw input_error{report_path, "expected an admitsim report, got JSON nested deeper than " +
                                         std::to_string(report_depth_max) + " levels"};
    throw input_error{report_path, "expected an admitsim report (JSON), got unparsable text"};
  }
  if (!report.is_object() || report.value("format", "") != reports::report_format)
    throw input_error{report_path, "/format: expected \"" + std::string(reports::report_format) + "\""};
  if (!report.contains("scenario") || !report["scenario"].is_object() || !report["scenario"].contains("source") ||
      !report.contains("seed") || !report["seed"].is_number_unsigned())
    throw input_error{report_path, "expected /scenario/source and /seed in the report"};
  const std::string file = report_string(report_path, report["scenario"], "file", "the scenario's file name");
  const std::string recorded_sha = report_string(report_path, report["scenario"], "sha256", "the scenario's digest");
  const std::uint64_t seed = report["seed"].get<std::uint64_t>();
  // Re-run from the embedded scenario; its original bytes are the file's if it is unchanged. Only a
  // regular file is read ("-", /dev/stdin or a FIFO named by the report would block the replay).
  std::string source_bytes;
  std::error_code ec;
  if (!file.empty() && fs::is_regular_file(file, ec)) {
    source_bytes = cli::read_input(file, "scenario file", false);
    if (reports::sha256_hex(source_bytes) != recorded_sha) source_bytes.clear();
  }
  loaded l;
  if (!source_bytes.empty()) {
    l = load_text(file, source_bytes);
  } else {
    // The file moved or changed: the embedded document still defines the run.
    l = load_text(file, report["scenario"]["source"].dump(2));
  }
  run_output o = run_one(l, seed);
  json again = scenario::parse_json_text(o.report_bytes, {report_depth_max});
  const scenario::json_dismantler again_teardown{again};
  if (source_bytes.empty()) again["scenario"]["sha256"] = recorded_sha;
  const std::string rerun = reports::render_report(again);
  const bool same = rerun == bytes;
  if (!quiet)
    std::fprintf(stderr, "%s: replay of %s seed=%llu %s\n", report_path.c_str(), l.sc.name.c_str(),
                 static_cast<unsigned long long>(seed), same ? "identical" : "DIFFERS from the recorded report");
  return same ? exit_as_expected : exit_not_expected;
}

int cmd_list(const std::string& dir) {
  std::vector<fs::path> files;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec))
    if (e.path().extension() == ".json" && e.path().filename() != "schema.json") files.push_back(e.path());
  if (ec) throw input_error{dir, "cannot list the directory (" + ec.message() + ")"};
  std::sort(files.begin(), files.end());
  for (const auto& f : files) {
    try {
      loaded l = load_file(f.string());
      // Control characters of a description would reach the terminal: escaped as the loader's messages are.
      std::string desc = scenario::printable(l.sc.description);
      if (desc.size() > 90) desc = desc.substr(0, 87) + "...";
      std::printf("%-28s %-9s %s\n", scenario::printable(l.sc.name).c_str(), l.sc.expect.verdict.c_str(), desc.c_str());
    } catch (const input_error& e) {
      std::printf("%-28s %-9s %s\n", scenario::printable(f.filename().string()).c_str(), "INVALID",
                  scenario::printable(e.text()).c_str());
    }
  }
  return exit_as_expected;
}

// The subject of an error line that names no file or option: the verb on the command line, or
// no_verb before one is known.
constexpr std::string_view no_verb = "usage";
std::string_view verb_of(const CLI::App& app) {
  const auto& verbs = app.get_subcommands();
  return verbs.empty() ? no_verb : std::string_view(verbs.front()->get_name());
}

}  // namespace

int main(int argc, char** argv) {
  admit::scenario::install_memory_reserve();  // room to tear down after a bad_alloc (memory_reserve.hpp)
  CLI::App app{"admitsim: deterministic simulation and test harness for admission-control gates"};
  app.set_version_flag("--version", std::string("admitsim ") + ADMITSIM_VERSION);
  app.require_subcommand(1);
  app.footer("Inputs are regular files or '-' (standard input) of at most 256 MiB; output paths are checked before "
             "a run and a device or FIFO is written in place. Every limit and refusal: docs/limits.md.");

  run_request run_req;
  // Numbers and paths are read as text: a given option counts even when empty (numbers.hpp).
  std::string seed_text, out, out_dir, html;
  bool quiet = false;
  auto* run = app.add_subcommand("run", "Run scenario files and write one JSON report each");
  run->add_option("FILE", run_req.files, "Scenario files ('-' for standard input)")->required();
  auto* seed_opt = run->add_option("--seed", seed_text, "Seed for every run: 0 to 2^64-1 (default: the scenario's own seed)")
                       ->type_name("N");
  auto* out_opt = run->add_option("--out", out,
                                  "Report path for a single scenario ('-' for stdout; a device or FIFO is written in "
                                  "place); its folder must exist");
  auto* out_dir_opt = run->add_option("--out-dir", out_dir, "Directory for the reports, created if missing (default: out/)");
  auto* html_opt = run->add_option("--html", html,
                                   "Also write an HTML report: this file for a single scenario; with several, a directory "
                                   "that gets <scenario>-seed<N>.html each (docs/html-report.md)");
  run->add_flag("--quiet,-q", quiet, "No summary line on stderr");

  std::string report_path;
  auto* replay = app.add_subcommand("replay", "Re-run a report's scenario and seed; fail unless byte-identical");
  replay->add_option("REPORT", report_path, "A report written by admitsim run ('-' for standard input)")->required();
  replay->add_flag("--quiet,-q", quiet, "No summary line on stderr");

  std::vector<std::string> check_files;
  auto* check = app.add_subcommand("check", "Validate scenario files without running them");
  check->add_option("FILE", check_files, "Scenario files ('-' for standard input)")->required();
  check->add_flag("--quiet,-q", quiet, "No output for valid files");

  std::string list_dir = "scenarios";
  auto* list = app.add_subcommand("list", "List the scenario catalogue, one line each");
  list->add_option("--dir", list_dir, "Catalogue directory (default: scenarios)");

  const admit::cli::explore_verb explore(app);  // docs/explore.md

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    // One line, as every other refusal: CLI11's words about the verb's command line, then where its usage is.
    std::string what = e.what();
    std::replace(what.begin(), what.end(), '\n', ' ');
    const std::string_view verb = verb_of(app);
    const std::string command = verb == no_verb ? "admitsim" : "admitsim " + std::string(verb);
    cli::print_error(verb, what + " (" + command + " --help shows the usage)");
    return exit_bad_input;
  }

  const std::string_view verb = verb_of(app);  // found before a bad_alloc may need it
  try {
    if (run->parsed()) {
      if (seed_opt->count() != 0) run_req.seed = cli::parse_number("--seed", seed_text);
      if (out_opt->count() != 0) run_req.out = out;
      if (out_dir_opt->count() != 0) run_req.out_dir = out_dir;
      if (html_opt->count() != 0) run_req.html = html;
      run_req.quiet = quiet;
      return cmd_run(run_req);
    }
    if (replay->parsed()) return cmd_replay(report_path, quiet);
    if (check->parsed()) return cmd_check(check_files, quiet);
    if (list->parsed()) return cmd_list(list_dir);
    if (explore.parsed()) return explore.run();
  } catch (...) {
    return cli::report_current_exception(verb);
  }
  return exit_bad_input;
}
