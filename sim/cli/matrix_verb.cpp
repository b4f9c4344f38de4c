// matrix_verb: the `admitsim matrix` verb (docs/matrix.md).
//
//   admitsim matrix FILE [--seeds N | --until-bound P] [--jobs N] [--out DIR] [--html PATH] [--junit PATH]
//                        [--markdown PATH] [--no-shrink] [--shrink-runs R] [--quiet]
//                        [--confirm [--confirm-runs N] [--time-scale X] [--redis-server PATH]
//                        [--confirm-wall-limit S]]
//
// Loads a matrix file (sim/explore/matrix.hpp: rows of designs, columns of
// faults over one base lease scenario), validates every cell's scenario, checks
// every output path, then explores each cell over the seed budget on --jobs
// threads, writes each broken cell's counterexample (a scenario file and its
// report) in DIR, and the summary DIR/<name>-matrix.json, with the HTML table,
// JUnit XML and Markdown table when asked. With --confirm, once every
// simulated run and shrink is done, each counterexample is run on a real
// redis-server, one at a time, and the cell says how it went
// (confirm_options.hpp). Exit codes: 0 every cell came out as the matrix file
// expects, 1 otherwise (an inconclusive or error cell, a counterexample that
// did not reproduce, a confirmation SIGINT cut), 2 bad input or usage.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include "reports/matrix_report.hpp"
#include "reports/report.hpp"
#include "reports/sha256.hpp"
#include "sim/cli/confirm_options.hpp"
#include "sim/cli/errors.hpp"
#include "sim/cli/explore.hpp"
#include "sim/cli/interrupt.hpp"
#include "sim/cli/numbers.hpp"
#include "sim/cli/read_file.hpp"
#include "sim/cli/verb.hpp"
#include "sim/cli/write_file.hpp"
#include "sim/explore/matrix.hpp"
#include "sim/explore/scenario_json.hpp"
#include "sim/scenario/json_parse.hpp"
#include "sim/scenario/loader.hpp"
#include "sim/world/world.hpp"

namespace admit::cli {

namespace {

namespace fs = std::filesystem;

void write_file(const std::string& path, const std::string& bytes) {
  if (const auto why = write_output(path, bytes)) throw input_error{path, *why};
}

// The path of `target` from the folder of `from_file` (for the HTML page's links).
std::string relative_link(const std::string& target, const std::string& from_file) {
  std::error_code ec;
  const fs::path t = fs::absolute(target, ec).lexically_normal();
  const fs::path from = fs::absolute(from_file, ec).lexically_normal().parent_path();
  const fs::path rel = t.lexically_relative(from);
  return rel.empty() ? target : rel.generic_string();
}

// Writes a counterexample's scenario file and the report `admitsim run` writes for it; whether
// that run breaks `invariant`. The scenario as the file reads back goes to `loaded_out` when given.
bool write_counterexample(const scenario::scenario& sc, const std::string& invariant, const std::string& scenario_path,
                          const std::string& report_path, scenario::scenario* loaded_out) {
  const std::string bytes = explore::render_scenario(sc);
  write_file(scenario_path, bytes);
  nlohmann::ordered_json doc;
  const scenario::json_dismantler teardown{doc};
  const scenario::scenario loaded = scenario::load_scenario_text(bytes, doc);
  if (loaded_out != nullptr) *loaded_out = loaded;
  const std::vector<world::run_record> runs = world::run_all(loaded, loaded.seed);
  reports::report_input in;
  in.sc = &loaded;
  in.source = &doc;
  in.file = scenario_path;
  in.sha256 = reports::sha256_hex(bytes);
  bool breaks = false;
  for (const auto& r : runs) {
    in.runs.push_back(&r);
    for (const auto& inv : r.invariants)
      if (inv.name == invariant && !inv.holds) breaks = true;
  }
  write_file(report_path, reports::render_report(reports::build_report(in)));
  return breaks;
}

class matrix_verb final : public verb {
 public:
  explicit matrix_verb(CLI::App& app)
      : verb(app.add_subcommand("matrix",
                                "Which design survives which fault: explore every cell of a matrix file (rows of "
                                "designs, columns of faults over one lease scenario) over a seed budget")) {
    sub_->add_option("FILE", file_, "Matrix file (format admitsim-matrix/1, docs/matrix.md; '-' for standard input)")
        ->required();
    seeds_given_ = sub_->add_option("--seeds", seeds_,
                                    "Seeds per cell: 1 to " + std::to_string(explore::matrix_seeds_max) +
                                        " (default: the matrix file's \"seeds\", else " +
                                        std::to_string(explore::matrix_seeds_default) + ")")
                       ->type_name("N");
    auto* until = sub_->add_option("--until-bound", until_bound_,
                                   "Seeds per cell: the least number whose bound, if no seed breaks, is below P (a "
                                   "defect striking more than P of seeds would have shown, 95% confidence): P from "
                                   "0.001% to 50%, e.g. 1% (299 seeds)")
                      ->type_name("P");
    until->excludes(seeds_given_);
    jobs_given_ = sub_->add_option("--jobs,-j", jobs_,
                                   "Threads, one run or shrink each, across cells and seeds: 1 to " +
                                       std::to_string(jobs_max) + " (default: the machine's hardware threads)")
                      ->type_name("N");
    sub_->add_option("--out", out_dir_,
                     "Directory for the summary <name>-matrix.json and the counterexamples (default out/matrix); "
                     "created if missing, locked while the matrix writes it");
    sub_->add_option("--html", html_, "Also write the HTML table to this file");
    sub_->add_option("--junit", junit_, "Also write JUnit XML to this file: one test case per cell");
    sub_->add_option("--markdown", markdown_, "Also write the table as Markdown (what docs/matrix.md holds) to this file");
    sub_->add_flag("--no-shrink", no_shrink_, "Write each broken cell's explored seed as its counterexample, unshrunk");
    sub_->add_option("--shrink-runs", shrink_runs_, "Runs one shrink may use: 1 to 100000000 (default 2000)")
        ->type_name("R");
    sub_->add_flag("--quiet,-q", quiet_, "No summary on stderr");
    confirm_.add_to(sub_, "each broken cell's counterexample (shrunk, or the explored seed's with --no-shrink)");
  }

  int run() const override {
    const std::string bytes = read_input(file_, "matrix file");
    const scenario::file_reader reader = [](const std::string& path) {
      try {
        return read_input(path, "file", false);
      } catch (const input_error& e) {
        throw std::runtime_error(e.text());
      }
    };
    explore::matrix_spec spec;
    try {
      spec = explore::load_matrix(bytes, file_ == "-" ? std::string() : file_, reader);
    } catch (const scenario::scenario_error& e) {
      throw input_error{file_, e.what()};
    }
    explore::matrix_options opt;
    if (seeds_given_->count() != 0) opt.seeds = parse_number("--seeds", seeds_, 1, explore::matrix_seeds_max);
    if (until_bound_) {
      const std::optional<std::uint64_t> ppm = reports::parse_share_ppm(*until_bound_);
      if (!ppm)
        throw input_error{"--until-bound", "expected a share from 0.001% to 50% such as \"1%\" or \"0.01\", got \"" +
                                               *until_bound_ + "\""};
      opt.seeds = reports::seeds_for_bound(*ppm);
    }
    opt.jobs = jobs_given_->count() != 0 ? static_cast<unsigned>(parse_number("--jobs", jobs_, 1, jobs_max))
                                         : std::clamp(std::thread::hardware_concurrency(), 1u, jobs_max);
    opt.shrink = !no_shrink_;
    opt.shrink_runs = parse_number("--shrink-runs", shrink_runs_, 1, 100'000'000);
    const std::optional<confirm_settings> confirm = confirm_.read();

    // Every output path before anything runs.
    const std::string summary = (fs::path(out_dir_) / (spec.table.name + "-matrix.json")).string();
    if (auto why = prepare_output_dir(out_dir_)) throw input_error{out_dir_, *why};
    dir_lock lock;
    if (auto why = lock.lock(out_dir_)) throw input_error{out_dir_, *why};
    std::vector<std::pair<std::string, std::string>> outputs{{"the summary", summary}};
    if (html_) outputs.emplace_back("--html", *html_);
    if (junit_) outputs.emplace_back("--junit", *junit_);
    if (markdown_) outputs.emplace_back("--markdown", *markdown_);
    for (std::size_t i = 0; i < outputs.size(); ++i) {
      if (auto why = check_output(outputs[i].second)) throw input_error{outputs[i].second, *why};
      for (std::size_t j = 0; j < i; ++j)
        if (same_output(outputs[i].second, outputs[j].second))
          throw input_error{outputs[j].first + " and " + outputs[i].first,
                            "expected two files, got the same one: " + outputs[i].second};
      if (same_output(outputs[i].second, file_))
        throw input_error{outputs[i].first + " and the matrix file",
                          "expected two files, got the same one: " + outputs[i].second};
    }

    const auto t0 = std::chrono::steady_clock::now();  // for the summary line on stderr only
    std::vector<explore::matrix_cell_outcome> outcomes;
    // SIGINT stops the matrix between seeds: the cells write what ran, marked incomplete.
    opt.stop = [] { return sigint_seen(); };
    catch_sigint();
    try {
      outcomes = explore::run_matrix(spec, opt);
    } catch (const std::system_error& e) {
      throw input_error{"--jobs", "cannot start " + std::to_string(opt.jobs) + " threads (" + e.code().message() +
                                      "); try a smaller number"};
    }

    reports::matrix_table& t = spec.table;
    t.file = file_;
    t.sha256 = reports::sha256_hex(bytes);
    t.seeds = opt.seeds.value_or(spec.seeds);
    std::vector<std::pair<std::size_t, scenario::scenario>> to_confirm;  // cell, its counterexample as written
    for (auto& o : outcomes) {
      if (o.cell.counterexample && o.counterexample) {
        auto& ce = *o.cell.counterexample;
        const std::string stem = o.cell.design + "." + o.cell.fault + "-seed" + std::to_string(ce.seed) +
                                 (ce.shrunk ? "-min" : "");
        ce.scenario = (fs::path(out_dir_) / (stem + ".json")).string();
        ce.report = (fs::path(out_dir_) / (stem + ".report.json")).string();
        scenario::scenario* written = nullptr;
        if (confirm) written = &to_confirm.emplace_back(t.cells.size(), scenario::scenario{}).second;
        const bool breaks = write_counterexample(*o.counterexample, ce.invariant, ce.scenario, ce.report, written);
        ce.reproduced = breaks && (ce.reproduced || !ce.shrunk);
        ce.replay = "admitsim run " + reports::shell_quote(ce.scenario);
        if (html_) ce.href = relative_link(ce.scenario, *html_);
      }
      t.cells.push_back(std::move(o.cell));
    }
    const std::size_t confirm_cut = confirm ? confirm_cells(*confirm, to_confirm, t) : 0;
    std::uint64_t not_run = 0;
    for (const auto& c : t.cells) not_run += c.seeds_not_run;
    t.complete = not_run == 0 && confirm_cut == 0;
    explore::judge_matrix(t);
    if (not_run != 0) {
      t.why.insert(t.why.begin(), "interrupted by SIGINT: " + std::to_string(not_run) + " of " +
                                      std::to_string(t.seeds * t.cells.size()) + " (cell, seed) runs not run");
      t.exit_code = 1;
      print_error("matrix", "interrupted (SIGINT): " + t.why.front() + "; the outputs cover what ran, marked incomplete");
    } else if (confirm_cut != 0) {
      t.why.insert(t.why.begin(), "interrupted by SIGINT or SIGTERM while confirming on a real redis-server: " +
                                      std::to_string(confirm_cut) + " of " + std::to_string(to_confirm.size()) +
                                      " counterexamples not confirmed in full");
      t.exit_code = 1;
      print_error("matrix", "interrupted (SIGINT or SIGTERM): " + t.why.front() +
                                "; the outputs cover what ran, marked incomplete");
    }
    write_file(summary, reports::render_matrix_json(t));
    if (html_) write_file(*html_, reports::render_matrix_html(t));
    if (junit_) write_file(*junit_, reports::render_matrix_junit(t));
    if (markdown_) write_file(*markdown_, reports::render_matrix_markdown(t));
    if (!quiet_) print_summary(t, opt, summary, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    return t.exit_code == 0 ? exit_as_expected : exit_not_expected;
  }

 private:
  // --confirm: each counterexample run on a real redis-server, one after another, after every
  // simulated run; its confirmation goes onto its cell. Returns how many SIGINT or SIGTERM cut.
  std::size_t confirm_cells(confirm_settings settings, std::vector<std::pair<std::size_t, scenario::scenario>>& cells,
                            reports::matrix_table& t) const {
    if (cells.empty()) return 0;
    settings.start();
    const bool tty = isatty(STDERR_FILENO) == 1 && !quiet_;
    std::size_t cut = 0;
    for (std::size_t i = 0; i < cells.size(); ++i) {
      auto& [index, sc] = cells[i];
      reports::matrix_cell& c = t.cells[index];
      reports::matrix_counterexample& ce = *c.counterexample;
      if (tty)
        std::fprintf(stderr, "matrix: confirming %zu of %zu on a real redis-server: %s x %s, %s\n", i + 1, cells.size(),
                     c.design.c_str(), c.fault.c_str(), ce.scenario.c_str());
      // A cell runs one variant or protocol: its name is the run's.
      std::string run;
      if (sc.gates.size() == 1 && sc.gates[0].kind == scenario::gate_kind::lease) {
        const std::vector<std::string> names = scenario::run_names(sc.gates[0].lease);
        if (!names.empty()) run = names.front();
      }
      ce.confirmation = confirm_on_redis(sc, run, ce.invariant, settings);
      if (ce.confirmation->interrupted) ++cut;
      sc = scenario::scenario{};  // done with it
    }
    return cut;
  }

  static void print_summary(const reports::matrix_table& t, const explore::matrix_options& opt,
                            const std::string& summary, double wall_s) {
    std::size_t n[4] = {0, 0, 0, 0};
    for (const auto& c : t.cells) ++n[static_cast<int>(c.status)];
    std::fprintf(stderr,
                 "matrix %s: %zu designs x %zu faults, %llu seeds per cell, on %u threads in %.2fs: %zu held, %zu "
                 "broke, %zu inconclusive, %zu errors -> %s\n",
                 t.name.c_str(), t.designs.size(), t.faults.size(), static_cast<unsigned long long>(t.seeds), opt.jobs,
                 wall_s, n[0], n[1], n[2], n[3], summary.c_str());
    // What "held" rests on: the cell that held on the fewest judged seeds speaks for them all.
    std::optional<reports::evidence> weakest;
    for (const auto& c : t.cells)
      if (c.status == reports::cell_status::holds && (!weakest || c.ev.seeds < weakest->seeds)) weakest = c.ev;
    if (weakest) std::fprintf(stderr, "  every cell that held: %s\n", weakest->statement().c_str());
    for (const auto& c : t.cells) {
      if (c.as_expected && c.status == reports::cell_status::holds) continue;
      const std::string confirmed = reports::confirmation_words(c);
      std::fprintf(stderr, "  %s%s x %s: %s %llu/%llu seeds%s%s%s\n", c.as_expected ? "" : "NOT AS EXPECTED ",
                   c.design.c_str(), c.fault.c_str(),
                   c.status == reports::cell_status::holds ? "held" : reports::to_string(c.status),
                   static_cast<unsigned long long>(c.seeds_violating), static_cast<unsigned long long>(c.seeds_run),
                   c.first_violation ? (", first " + c.first_violation->invariant).c_str() : "",
                   confirmed.empty() ? "" : (", " + confirmed + ": " + c.counterexample->confirmation->why()).c_str(),
                   c.counterexample ? ("; replay: " + c.counterexample->replay).c_str() : "");
    }
    for (const auto& w : t.why) std::fprintf(stderr, "  not as expected: %s\n", w.c_str());
  }

  std::string file_;
  std::string seeds_;
  CLI::Option* seeds_given_ = nullptr;
  std::optional<std::string> until_bound_;
  std::string jobs_;
  CLI::Option* jobs_given_ = nullptr;
  std::string out_dir_ = "out/matrix";
  std::optional<std::string> html_, junit_, markdown_;
  bool no_shrink_ = false;
  std::string shrink_runs_ = "2000";
  bool quiet_ = false;
  confirm_options confirm_;  // --confirm and its options
};

}  // namespace

std::unique_ptr<verb> make_matrix_verb(CLI::App& app) { return std::make_unique<matrix_verb>(app); }

}  // namespace admit::cli
