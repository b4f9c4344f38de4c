// admitsim confirm FILE [--variant NAME] [--seed N] [--runs N] [--time-scale X] [--redis-server PATH]
//                       [--wall-limit S] [--out PATH|-] [--quiet]
//
// Checks a simulated result on a real redis-server (docs/confirm.md): FILE is
// a scenario or a report of `admitsim run` (its scenario and seed); the
// simulator runs it first, then each of its runs (or the one --variant
// names) is run for real, up to --runs times, and judged by sim/confirm. The
// report (JSON) goes to --out (default: standard output); one line a run on
// stderr. Exit 0 when every run came out as the simulation says (confirmed
// where it broke, not confirmed where it held), 1 otherwise (a run that could
// not be made real, or judged, is inconclusive), 2 for bad input.
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "gate/admit_assert.hpp"
#include "reports/report.hpp"
#include "sim/cli/errors.hpp"
#include "sim/cli/interrupt.hpp"
#include "sim/cli/numbers.hpp"
#include "sim/cli/read_file.hpp"
#include "sim/cli/scenario_run.hpp"
#include "sim/cli/verb.hpp"
#include "sim/cli/write_file.hpp"
#include "sim/confirm/confirm.hpp"
#include "sim/scenario/json_parse.hpp"
#include "sim/world/fault_draw.hpp"
#include "sim/world/lease_world.hpp"

namespace admit::cli {

namespace {

using json = nlohmann::ordered_json;

// The scenario of FILE: a scenario file, or the one a report embeds (with the report's seed).
loaded load_subject(const std::string& file, std::optional<std::uint64_t>& report_seed) {
  const std::string bytes = read_input(file, "scenario or report");
  json doc;
  try {
    doc = scenario::parse_json_text(bytes, scenario::json_parse_options{128});
  } catch (const std::exception&) {
    return load_text(file, bytes);  // the scenario loader names what is wrong
  }
  const scenario::json_dismantler teardown{doc};
  if (doc.is_object() && doc.contains("format") && doc["format"].is_string() &&
      doc["format"].get<std::string>().rfind("admitsim-report", 0) == 0) {
    if (!doc.contains("scenario") || !doc["scenario"].is_object() || !doc["scenario"].contains("source"))
      throw input_error{file, "/scenario/source: expected the scenario the report embeds"};
    if (!doc.contains("seed") || !doc["seed"].is_number_unsigned())
      throw input_error{file, "/seed: expected the report's seed, an integer from 0 to 2^64-1"};
    report_seed = doc["seed"].get<std::uint64_t>();
    return load_text(file, doc["scenario"]["source"].dump(2));
  }
  return load_text(file, bytes);
}

class confirm_verb final : public verb {
 public:
  explicit confirm_verb(CLI::App& app)
      : verb(app.add_subcommand("confirm", "Check a simulated result on a real redis-server (docs/confirm.md)")) {
    sub_->add_option("FILE", file_, "A lease scenario, or a report of admitsim run (its scenario and seed)")->required();
    variant_ = sub_->add_option("--variant", variant_name_, "Only this run of the gate (a variant's or protocol's name)");
    seed_ = sub_->add_option("--seed", seed_text_, "Seed: 0 to 2^64-1 (default: the report's, else the scenario's)");
    sub_->add_option("--runs", runs_text_, "Real runs at most per run of the gate, 1 to 1000 (default 1; a confirmed "
                                           "break stops them)");
    sub_->add_option("--time-scale", scale_text_, "Real time = scenario time * X, 0.01 to 100 (default 1)");
    sub_->add_option("--redis-server", program_, "The redis-server program (default: redis-server on PATH)");
    sub_->add_option("--wall-limit", wall_text_, "Seconds a real run may take before it is inconclusive, 1 to 86400 "
                                                 "(default 600)");
    sub_->add_option("--out", out_, "Write the JSON report here ('-', the default: standard output)");
    sub_->add_flag("--quiet,-q", quiet_, "No summary lines on stderr");
  }

  int run() const override {
    const int runs = static_cast<int>(parse_number("--runs", runs_text_, 1, confirm::runs_max));
    confirm::run_options opts;
    opts.time_scale = parse_time_scale("--time-scale", scale_text_);
    opts.redis_program = program_;
    opts.wall_limit = std::chrono::seconds(parse_number("--wall-limit", wall_text_, 1, 86'400));
    if (out_ != "-")
      if (const auto why = check_output(out_)) throw input_error{out_, *why};
    std::optional<std::uint64_t> report_seed;
    const loaded l = load_subject(file_, report_seed);
    const scenario::scenario& sc = l.sc;
    if (sc.gates.size() != 1 || sc.gates[0].kind != scenario::gate_kind::lease)
      throw input_error{file_, "/gate: expected one lease gate (a FIFO gate has nothing to confirm on Redis)"};
    const std::uint64_t seed =
        seed_->count() != 0 ? parse_number("--seed", seed_text_) : report_seed.value_or(sc.seed);
    opts.seed = seed;
    const scenario::scenario with_faults = world::with_drawn_faults(sc, seed);
    // Which runs, and that each can be made real, before anything runs.
    const std::vector<std::string> names = scenario::run_names(sc.gates[0].lease);
    std::vector<std::string> chosen;
    for (const std::string& n : names)
      if (variant_->count() == 0 || n == variant_name_) chosen.push_back(n);
    if (chosen.empty()) {
      std::string all;
      for (const std::string& n : names) all += (all.empty() ? "" : ", ") + n;
      throw input_error{"--variant", "expected one of the gate's runs (" + all + "), got \"" + variant_name_ + "\""};
    }
    std::vector<gate::lease_client_config> configs;
    for (const std::string& n : chosen) {
      std::optional<gate::lease_client_config> cfg = world::lease_client_config_of(with_faults, n);
      if (!cfg) throw run_error{"confirm", "the gate's run " + n + " has no client configuration"};
      configs.push_back(std::move(*cfg));
    }
    // The simulation first: what each run breaks.
    const run_output sim = run_one(l, seed);
    catch_sigint();
    catch_sigterm();
    opts.interrupted = interrupt_flag();
    json out = json::object();
    out["format"] = "admitsim-confirm/1";
    json s = json::object();
    s["name"] = sc.name;
    s["file"] = l.file;
    out["scenario"] = std::move(s);
    out["seed"] = seed;
    out["time_scale"] = opts.time_scale;
    json results = json::object();
    bool all_expected = true;
    for (std::size_t i = 0; i < chosen.size(); ++i) {
      const std::string& n = chosen[i];
      const gate::lease_client_config& cfg = configs[i];
      confirm::simulated simulated;
      for (const world::run_record& rec : sim.runs) {
        if (rec.variant != n) continue;  // (a lease gate's every run is named: a variant or its protocol)
        simulated.verdict = rec.verdict();
        for (const auto& inv : rec.invariants)
          if (inv.first) simulated.broken.push_back(inv.name);
      }
      ADMIT_ASSERT(!simulated.verdict.empty(), "the simulation ran every run of the gate");
      confirm::confirmation c;
      if (const auto no = confirm::unsupported(with_faults, cfg)) {
        // What a real run cannot make yet: this run is not judged (the others are).
        c.run = n;
        c.sim = simulated;
        c.verdict = "inconclusive";
        c.why = "not made real yet: " + no->first + ": " + no->second;
      } else {
        c = confirm::confirm_run(with_faults, n, simulated, cfg, opts, runs);
      }
      all_expected = all_expected && c.as_expected;
      if (!quiet_)
        std::fprintf(stderr, "%s[%s] seed=%llu: simulated %s, %s (%s) - %s\n", sc.name.c_str(), n.c_str(),
                     static_cast<unsigned long long>(seed), simulated.verdict.c_str(), c.verdict.c_str(),
                     c.as_expected ? "as expected" : "NOT as expected", c.why.c_str());
      results[n] = confirm::to_json(c);
    }
    out["runs"] = std::move(results);
    out["as_expected"] = all_expected;
    const bool interrupted = interrupt_flag()->load();
    if (interrupted) out["interrupted"] = true;
    const std::string bytes = out.dump(2) + "\n";
    if (out_ == "-") {
      std::fwrite(bytes.data(), 1, bytes.size(), stdout);
    } else if (const auto why = write_output(out_, bytes, "confirm report")) {
      throw input_error{out_, *why};
    }
    if (interrupted) {
      print_error("confirm", "interrupted (SIGINT or SIGTERM): the report covers what ran, marked \"interrupted\"");
      return exit_not_expected;
    }
    return all_expected ? exit_as_expected : exit_not_expected;
  }

 private:
  std::string file_, variant_name_, seed_text_, runs_text_ = "1", scale_text_ = "1", program_ = "redis-server",
                                                wall_text_ = "600", out_ = "-";
  CLI::Option* variant_ = nullptr;
  CLI::Option* seed_ = nullptr;
  bool quiet_ = false;
};

}  // namespace

std::unique_ptr<verb> make_confirm_verb(CLI::App& app) { return std::make_unique<confirm_verb>(app); }

}  // namespace admit::cli
