// admitsim replay REPORT.json [--trace PATH|-] [--quiet]: re-runs a report's
// scenario and seed and fails unless the new report is byte-identical
// (diagnostics included); with --trace, writes every trace entry of the
// re-run as JSON lines (trace_file.hpp), whatever the comparison says.
#include <cstdio>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sim/codec/json_codec.hpp"
#include "reports/report.hpp"
#include "reports/sha256.hpp"
#include "sim/cli/errors.hpp"
#include "sim/cli/scenario_run.hpp"
#include "sim/cli/trace_file.hpp"
#include "sim/cli/verb.hpp"
#include "sim/cli/read_file.hpp"
#include "sim/scenario/json_parse.hpp"

namespace admit::cli {

namespace {

namespace fs = std::filesystem;
using json = nlohmann::ordered_json;

int cmd_replay(const std::string& report_path, const std::optional<std::string>& trace_path, bool quiet) {
  const std::string bytes = read_input(report_path, "report");
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
  reports::report_header header;
  try {
    header = reports::report_header::from_json(report);
  } catch (const codec::codec_error& e) {
    throw input_error{report_path, e.path.empty() ? std::string(e.what()) : e.path + ": " + e.what()};
  }
  // A process gate's core is named by the scenario itself (docs/process-gate.md): the replay runs it again.
  if (header.gate_core && header.gate_core->rfind("process:", 0) != 0)
    throw input_error{report_path, "/gate_core: this report judged the gate core " +
                                       (header.gate_core->empty() ? std::string("(unnamed)") : *header.gate_core) +
                                       ", a core of its user's; admitsim's CLI runs its own core, so replay it with "
                                       "the program that ran it (docs/own-gate.md)"};
  const std::string& file = header.scenario_file;
  const std::string& recorded_sha = header.scenario_sha256;
  const std::uint64_t seed = header.seed;
  // Before the run: a trace must replace neither the report nor the scenario file it names.
  if (trace_path) {
    std::vector<other_path> others{{report_path, "the report replayed", true}};
    if (!file.empty()) others.push_back({file, "the scenario file", true});
    check_trace_path(*trace_path, others);
  }
  // Re-run from the embedded scenario; its original bytes are the file's if it is unchanged. Only a
  // regular file is read ("-", /dev/stdin or a FIFO named by the report would block the replay).
  std::string source_bytes;
  std::error_code ec;
  if (!file.empty() && fs::is_regular_file(file, ec)) {
    source_bytes = read_input(file, "scenario file", false);
    if (reports::sha256_hex(source_bytes) != recorded_sha) source_bytes.clear();
  }
  loaded l;
  if (!source_bytes.empty()) {
    l = load_text(file, source_bytes);
  } else {
    // The file moved or changed: the embedded document still defines the run.
    l = load_text(file, report["scenario"]["source"].dump(2));
  }
  trace_file trace;
  if (trace_path) open_trace(trace, *trace_path, trace_header{l.sc.name, l.file, seed, std::nullopt});
  run_output o = run_one(l, seed, false, trace_path ? &trace : nullptr);
  if (trace_path) commit_trace(trace, *trace_path);
  // The scenario file unchanged, the new report's bytes are compared as they are; the embedded
  // document re-rendered has another digest, which is put back to the recorded one first (a
  // parse and a render more: seconds for a report of 100 MB, so only where needed).
  bool same = !source_bytes.empty() && o.report_bytes == bytes;
  if (!same) {
    json again = scenario::parse_json_text(o.report_bytes, {report_depth_max});
    const scenario::json_dismantler again_teardown{again};
    if (source_bytes.empty()) again["scenario"]["sha256"] = recorded_sha;
    same = reports::render_report(again) == bytes;
  }
  if (!quiet)
    std::fprintf(stderr, "%s: replay of %s seed=%llu %s\n", report_path.c_str(), l.sc.name.c_str(),
                 static_cast<unsigned long long>(seed), same ? "identical" : "DIFFERS from the recorded report");
  return same ? exit_as_expected : exit_not_expected;
}

class replay_verb final : public verb {
 public:
  explicit replay_verb(CLI::App& app)
      : verb(app.add_subcommand("replay", "Re-run a report's scenario and seed; fail unless byte-identical")) {
    sub_->add_option("REPORT", report_path_, "A report written by admitsim run ('-' for standard input)")->required();
    trace_ = sub_->add_option("--trace", trace_text_,
                              "Also write every trace entry of the re-run as JSON lines to this file ('-' for "
                              "stdout; docs/trace.md)");
    sub_->add_flag("--quiet,-q", quiet_, "No summary line on stderr");
  }
  int run() const override {
    return cmd_replay(report_path_, trace_->count() != 0 ? std::optional<std::string>(trace_text_) : std::nullopt,
                      quiet_);
  }

 private:
  std::string report_path_, trace_text_;
  CLI::Option* trace_ = nullptr;
  bool quiet_ = false;
};

}  // namespace

std::unique_ptr<verb> make_replay_verb(CLI::App& app) { return std::make_unique<replay_verb>(app); }

}  // namespace admit::cli
