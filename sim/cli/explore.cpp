#include "sim/cli/explore.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <system_error>
#include <thread>
#include <tuple>
#include <utility>
#include <vector>

#include "reports/evidence.hpp"
#include "reports/report.hpp"
#include "reports/run_junit.hpp"
#include "reports/sha256.hpp"
#include "sim/cli/common.hpp"
#include "sim/cli/explore_orders.hpp"
#include "sim/cli/interrupt.hpp"
#include "sim/cli/numbers.hpp"
#include "sim/cli/read_file.hpp"
#include "sim/cli/write_file.hpp"
#include "sim/explore/explorer.hpp"
#include "sim/explore/scenario_json.hpp"
#include "sim/explore/search_summary.hpp"
#include "sim/explore/shrink.hpp"
#include "sim/explore/swarm.hpp"
#include "sim/scenario/duration.hpp"
#include "sim/scenario/loader.hpp"
#include "sim/world/fault_draw.hpp"
#include "sim/world/world.hpp"

namespace admit::cli {

using explore::finding_kind;
using explore::finding_kind_map;
using explore::kind_cause;

namespace {

namespace fs = std::filesystem;
using json = nlohmann::ordered_json;

constexpr std::uint64_t default_seeds = 100;
// The summary lists at most this many seeds with a violation or an error in full (the totals count
// them all), and stderr names at most this many seeds that ended in an error (docs/limits.md).
constexpr std::size_t findings_listed_max = explore::findings_listed_max;

void write_file(const std::string& path, const std::string& bytes) {
  if (const auto why = write_output(path, bytes)) throw input_error{path, *why};
}

// The folder a search writes: created, writable, and locked against another search for as long as
// `lock` lives; the summary path in it must be writable too.
void prepare_folder(const std::string& dir, dir_lock& lock, const std::string& summary_path) {
  if (auto why = prepare_output_dir(dir)) throw input_error{dir, *why};
  if (auto why = lock.lock(dir)) throw input_error{dir, *why};
  if (auto why = check_output(summary_path)) throw input_error{summary_path, *why};
}

// "I/N" with 0 <= I < N.
std::pair<std::uint64_t, std::uint64_t> parse_shard(const std::string& s) {
  if (const auto shard = explore::parse_shard(s)) return *shard;
  throw input_error{"--shard", "expected I/N with 0 <= I < N, such as 0/4, got \"" + s + "\""};
}

// The name of a file this search writes: <name>-seed<N><suffix>, kept within
// the 64 characters a scenario name may have.
std::string seed_name(const std::string& name, std::uint64_t seed, const std::string& suffix) {
  const std::string tail = "-seed" + std::to_string(seed) + suffix;
  return name.substr(0, tail.size() >= 64 ? 0 : 64 - tail.size()) + tail;
}

// Writes a scenario file and the report `admitsim run` would write for it; returns the run records,
// and the scenario as the file reads back in `loaded_out` when given.
std::vector<world::run_record> write_scenario_and_report(const scenario::scenario& sc, const std::string& scenario_path,
                                                        const std::string& report_path,
                                                        scenario::scenario* loaded_out = nullptr) {
  const std::string bytes = explore::render_scenario(sc);
  write_file(scenario_path, bytes);
  json doc;
  const scenario::scenario loaded = scenario::load_scenario_text(bytes, doc);
  if (loaded_out != nullptr) *loaded_out = loaded;
  std::vector<world::run_record> runs = world::run_all(loaded, loaded.seed);
  reports::report_input in;
  in.sc = &loaded;
  in.source = &doc;
  in.file = scenario_path;
  in.sha256 = reports::sha256_hex(bytes);
  for (const auto& r : runs) in.runs.push_back(&r);
  write_file(report_path, reports::render_report(reports::build_report(in)));
  return runs;
}

// `budget_s`: the --time budget, when the search has one instead of a seed count.
void print_progress(const explore::explore_progress& p, std::optional<double> budget_s) {
  const double rate = p.elapsed_s > 0 ? static_cast<double>(p.done) / p.elapsed_s : 0;
  std::string eta = "?";
  char buf[32];
  if (p.total && rate > 0) {
    std::snprintf(buf, sizeof buf, "%.0fs", static_cast<double>(*p.total - std::min(*p.total, p.done)) / rate);
    eta = buf;
  } else if (budget_s) {
    std::snprintf(buf, sizeof buf, "%.0fs", std::max(0.0, *budget_s - p.elapsed_s));
    eta = buf;
  }
  std::fprintf(stderr, "\r\033[Kexplore: %llu%s seeds, %.0f seeds/s, %llu with violations (%llu counterexamples), ETA %s",
               static_cast<unsigned long long>(p.done),
               p.total ? ("/" + std::to_string(*p.total)).c_str() : "", rate,
               static_cast<unsigned long long>(p.with_violation), static_cast<unsigned long long>(p.counterexamples),
               eta.c_str());
  std::fflush(stderr);
}

// Threads that could not be started: bad usage (the machine or its limits hold fewer), never an abort.
input_error threads_refused(unsigned jobs, const std::system_error& e) {
  return {"--jobs",
          "cannot start " + std::to_string(jobs) + " threads (" + e.code().message() + "); try a smaller number"};
}

}  // namespace

// What a seed search was asked for, every option read and checked, and where it writes.
struct seed_search {
  std::string file;  // as given on the command line
  explore::explore_options opt;
  std::string shard;  // as given, for the messages
  std::uint64_t shard_index = 0;
  std::uint64_t shard_count = 1;
  bool shrink = true;  // no --no-shrink
  std::size_t shrink_max = 0;
  std::size_t shrink_runs = 0;
  bool perturb_ties = false;
  bool ties_only = false;
  explore::search_strategy strategy = explore::search_strategy::swarm;
  bool quiet = false;
  std::string dir;
  std::string summary_path;
  std::optional<std::string> junit;  // --junit PATH
  std::optional<confirm_settings> confirm;  // --confirm
  const scenario::scenario* base = nullptr;
  // --until-bound P: the share (ppm), and the clean seeds each variant needs for its bound to fall below it.
  std::optional<std::uint64_t> until_ppm;
  std::uint64_t until_seeds = 0;

  // The command that runs one seed of this search again. A guided seed's plan comes from what the
  // seeds before it taught: its command runs the search again up to it (the seed's own scenario is
  // also written, as explored_scenario, when its finding is shrunk).
  std::string replay_of(std::uint64_t seed) const {
    const std::string mode_flag = ties_only ? " --ties-only" : perturb_ties ? " --perturb-ties" : "";
    const std::string search_flag =
        strategy == explore::search_strategy::swarm ? "" : std::string(" --search ") + explore::to_string(strategy);
    if (strategy == explore::search_strategy::guided)
      return "admitsim explore " + reports::shell_quote(file) + mode_flag + search_flag + " --first-seed " +
             std::to_string(opt.seeds.first) + " --seeds " + std::to_string(seed - opt.seeds.first + 1) +
             (shard_count > 1 ? " --shard " + shard : std::string());
    return "admitsim explore " + reports::shell_quote(file) + mode_flag + search_flag + " --first-seed " +
           std::to_string(seed) + " --seeds 1";
  }
};

namespace {

// What the seeds found, gathered as each seed's outcome arrives (in seed order) and then
// dropped, so that memory does not grow with the number of seeds: kinds, expected
// violations shown, and the first findings_listed_max findings in full.
struct seed_tally {
  finding_kind_map kinds;
  std::map<std::pair<std::string, std::string>, std::string> kind_swarm;  // the first seed's draw, for stderr
  std::map<std::pair<std::string, std::string>, std::shared_ptr<const explore::seed_plan>> kind_plan;  // what it ran
  std::map<std::string, std::optional<std::uint64_t>> shown;  // variant expected to break -> first seed it did
  std::vector<explore::finding> findings;
  std::size_t listed = 0;
  std::size_t omitted = 0;
  std::vector<std::string> error_lines;
  std::uint64_t errors_unlisted = 0;
  std::optional<std::pair<std::uint64_t, std::string>> first_inconclusive;  // seed, reason: for stderr
  std::map<std::string, reports::explore_junit_variant> junit;  // by variant, with --junit

  void add(const explore::seed_outcome& o, const seed_search& s) {
    if (s.junit)
      for (const auto& r : o.runs) add_junit(o.seed, r, s);
    for (const auto& r : o.runs)
      if (r.inconclusive && !r.met && !first_inconclusive) first_inconclusive.emplace(o.seed, *r.inconclusive);
    for (const auto& r : o.runs) {
      if (r.expected_verdict == "violation") {
        auto& first = shown[r.variant];
        if (r.met && !first) first = o.seed;
      }
      if (r.broken.empty()) continue;
      finding_kind k{r.variant, r.broken.front().name, r.counterexample, o.seed, 0, {}};
      auto [it, inserted] = kinds.emplace(k.key(), k);
      if (inserted) {
        kind_swarm[k.key()] = explore::swarm_summary(o.swarm) + ", " + std::to_string(o.faults_drawn) + " faults drawn" +
                              (o.plan && !o.plan->origin.empty() ? "; " + o.plan->origin : std::string());
        kind_plan[k.key()] = o.plan;
      }
      ++it->second.seeds;
      it->second.counterexample = it->second.counterexample || r.counterexample;
      for (const check::cause_count& c : r.broken.front().causes) it->second.add_cause(c.kind, kind_cause{1, o.seed, c.example});
    }
    if (o.error) {
      if (error_lines.size() < findings_listed_max)
        error_lines.push_back("  ERROR seed " + std::to_string(o.seed) + ": " + *o.error + " (replay: " +
                              s.replay_of(o.seed) + ")");
      else
        ++errors_unlisted;
    }
    if (!o.any_violation() && !o.error) return;
    if (listed == findings_listed_max) {
      ++omitted;
      return;
    }
    ++listed;
    findings.push_back(explore::finding::of(o));
  }

  // What --junit says of a variant: its first counterexample, its first expected violation, its
  // runs cut short (the same tests as the totals and `shown` above).
  void add_junit(std::uint64_t seed, const explore::run_outcome& r, const seed_search& s) {
    reports::explore_junit_variant& v = junit[r.variant];
    auto break_of = [&](const explore::invariant_break& b) {
      reports::explore_junit_break j;
      j.seed = seed;
      j.invariant = b.name;
      j.at_ns = b.at_ns;
      j.detail = b.detail;
      j.replay = s.replay_of(seed);
      if (!b.causes.empty()) j.cause = b.causes.front().kind + ": " + b.causes.front().example;
      return j;
    };
    if (r.counterexample) {
      ++v.counterexample_seeds;
      if (!v.counterexample) {
        // The first break the expectation does not allow (check::is_counterexample's test).
        const auto [verdict, violated] = explore::expectation_for(*s.base, r.variant);
        const explore::invariant_break* first = &r.broken.front();
        for (const auto& b : r.broken)
          if (verdict == "pass" || (!violated.empty() && std::find(violated.begin(), violated.end(), b.name) == violated.end())) {
            first = &b;
            break;
          }
        v.counterexample = break_of(*first);
      }
    }
    if (r.expected_verdict == "violation" && r.met && !v.expected_shown && !r.broken.empty())
      v.expected_shown = break_of(r.broken.front());
    if (r.inconclusive && !r.met) {
      ++v.inconclusive_seeds;
      if (!v.first_inconclusive)
        v.first_inconclusive = "seed " + std::to_string(seed) + ", " + *r.inconclusive + " (replay: " + s.replay_of(seed) + ")";
    }
  }

  // The kinds of finding, counterexamples first, then by the seed that first showed them.
  std::vector<finding_kind> kinds_in_order() const { return kinds_in_summary_order(kinds); }

  // The swarm of the seed that first showed kind `k`.
  std::string swarm_of(const finding_kind& k) const {
    const auto it = kind_swarm.find(k.key());
    return it == kind_swarm.end() ? std::string() : it->second;
  }

  // What the seed that first showed kind `k` ran.
  std::shared_ptr<const explore::seed_plan> plan_of(const finding_kind& k) const {
    const auto it = kind_plan.find(k.key());
    return it == kind_plan.end() ? nullptr : it->second;
  }
};

// Runs the seeds, handing each outcome to `tally`, with a progress line while stderr is a
// terminal. SIGINT stops it taking new seeds; the totals then cover the seeds finished.
explore::explore_totals search_seeds(const scenario::scenario& base, const seed_search& s, seed_tally& tally) {
  explore::explore_options opt = s.opt;
  const bool tty = isatty(STDERR_FILENO) == 1 && !s.quiet;
  if (tty) {
    std::optional<double> budget_s;
    if (opt.time_budget) budget_s = std::chrono::duration<double>(*opt.time_budget).count();
    opt.on_progress = [budget_s](const explore::explore_progress& p) { print_progress(p, budget_s); };
  }
  catch_sigint();
  explore::explore_totals sum;
  try {
    sum = explore::run_explore(base, opt, [&](explore::seed_outcome&& o) { tally.add(o, s); });
  } catch (const std::system_error& e) {
    if (tty) std::fprintf(stderr, "\r\033[K");
    throw threads_refused(opt.jobs, e);
  }
  // An interrupted search leaves its progress line and ends it; otherwise the line goes.
  if (tty) std::fprintf(stderr, sum.stopped ? "\n" : "\r\033[K");
  if (sum.stopped)
    print_error("explore", "interrupted (SIGINT): the summary covers the " + std::to_string(sum.ran) + " seeds finished");
  return sum;
}

// A shrunk finding's counterexample, kept for --confirm: the file the confirmation runs (the
// minimal scenario when it reproduced, else the seed's explored one), as it reads back.
struct counterexample_file {
  std::size_t entry = 0;  // its shrunk entry
  std::string path;
  scenario::scenario sc;
};

// What shrinking the findings gave: an entry of the summary and a line of stderr each.
struct shrink_report {
  std::vector<explore::shrunk_entry> shrunk;
  std::vector<std::string> lines;
  bool failed = false;       // a minimal scenario did not reproduce its violation
  bool interrupted = false;  // SIGINT stopped the shrinking
  std::vector<counterexample_file> to_confirm;  // with --confirm
  bool confirm_interrupted = false;  // SIGINT or SIGTERM cut a confirmation (--confirm)
};

// The scenario a finding's seed ran, written out as a file `admitsim run` runs, and its seed.
struct explored_run {
  explore::explored_scenario e;
  std::uint64_t seed = 0;
};

explored_run explored_of(const scenario::scenario& base, const finding_kind& k, const seed_search& s,
                         const explore::seed_plan* plan) {
  explored_run x;
  x.seed = k.first_seed;
  if (plan != nullptr && s.strategy != explore::search_strategy::swarm && !s.ties_only) {
    // What the seed ran, as its plan holds it (a guided seed's cannot be drawn again from the seed alone).
    x.e = plan->e;
    x.seed = plan->run_seed;
    x.e.sc.description = "Explored by admitsim explore --search " + std::string(explore::to_string(s.strategy)) +
                         " from " + s.file + ", seed " + std::to_string(k.first_seed) +
                         (plan->origin.empty() ? std::string() : " (" + plan->origin + ")") + ", run with seed " +
                         std::to_string(plan->run_seed) + " (" + explore::swarm_summary(x.e.swarm) + "; " +
                         std::to_string(x.e.faults_drawn) + " faults drawn). " + base.description;
  } else if (s.ties_only) {
    // The scenario's own run, its rates drawn with its own seed.
    x.e.sc = world::with_drawn_faults(base, base.seed);
    x.seed = base.seed;
    x.e.sc.description = "The run of " + s.file + " with its own seed, whose rates drew " +
                         std::to_string(x.e.sc.faults.schedule.size() - base.faults.schedule.size()) + " faults. " +
                         base.description;
  } else {
    x.e = explore::explore_seed(base, k.first_seed);
    x.e.sc.description = "Explored by admitsim explore from " + s.file + " with seed " + std::to_string(k.first_seed) +
                         " (" + explore::swarm_summary(x.e.swarm) + "; " + std::to_string(x.e.faults_drawn) +
                         " faults drawn). " + base.description;
  }
  return x;
}

// The four files a shrink writes in the search's folder.
struct shrink_files {
  std::string explored_scenario, explored_report, minimal_scenario, minimal_report;
};

// A shrink's entry in the summary's "shrunk".
explore::shrunk_entry shrink_entry(const finding_kind& k, const shrink_files& f, const explore::shrink_result& r,
                                   bool needs_order, const seed_search& s) {
  explore::shrunk_entry e;
  e.seed = k.first_seed;
  e.variant = k.variant;
  e.invariant = k.invariant;
  e.counterexample = k.counterexample;
  e.explored_scenario = f.explored_scenario;
  e.explored_report = f.explored_report;
  if (r.started) {
    e.minimal_scenario = f.minimal_scenario;
    e.minimal_report = f.minimal_report;
  }
  e.reproduced = r.reproduced;
  e.needs_perturbed_order = needs_order;
  e.replay = s.replay_of(k.first_seed);
  e.faults = {static_cast<std::int64_t>(r.faults_before), static_cast<std::int64_t>(r.faults_after)};
  e.requests = {static_cast<std::int64_t>(r.requests_before), static_cast<std::int64_t>(r.requests_after)};
  e.workers = {r.workers_before, r.workers_after};
  e.shrink_runs = r.runs;
  e.budget_exhausted = r.budget_exhausted;
  e.rebased_by_ns = r.rebased_by_ns;
  e.violation_at_ns = r.violation_at_ns;
  e.detail = r.detail;
  return e;
}

// A shrink's line on stderr.
std::string shrink_line(const finding_kind& k, const shrink_files& f, const explore::shrink_result& r,
                        bool needs_order, const seed_search& s) {
  const std::string finding = std::to_string(k.first_seed) + variant_label(k.variant) + " " + k.invariant;
  if (needs_order)
    return "  seed " + finding + ": breaks only in the perturbed same-instant order, not shrunk; replay: " +
           s.replay_of(k.first_seed);
  return "  shrunk seed " + finding + ": faults " + std::to_string(r.faults_before) + " -> " +
         std::to_string(r.faults_after) + ", requests " + std::to_string(r.requests_before) + " -> " +
         std::to_string(r.requests_after) + ", workers " + std::to_string(r.workers_before) + " -> " +
         std::to_string(r.workers_after) + " in " + std::to_string(r.runs) + " runs" +
         (r.rebased_by_ns > 0 ? ", times " + scenario::format_duration(r.rebased_by_ns) + " earlier" : "") + ": " +
         f.minimal_scenario +
         (r.reproduced ? " (admitsim run reproduces it)" : " (DID NOT REPRODUCE)");
}

// Shrinks one kind of finding: writes the explored scenario of its first seed and that
// scenario's report, then the minimal scenario and its report; adds their entry and line.
void shrink_one(const scenario::scenario& base, const finding_kind& k, const seed_search& s,
                const explore::seed_plan* plan, shrink_report& out) {
  const explored_run x = explored_of(base, k, s, plan);
  shrink_files f;
  const std::string seed_file = seed_name(base.name, k.first_seed, "");
  f.explored_scenario = (fs::path(s.dir) / (seed_file + ".scenario.json")).string();
  f.explored_report = (fs::path(s.dir) / (seed_file + ".report.json")).string();
  counterexample_file confirm_file;
  write_scenario_and_report(x.e.sc, f.explored_scenario, f.explored_report, s.confirm ? &confirm_file.sc : nullptr);
  confirm_file.path = f.explored_scenario;

  explore::shrink_limits limits;
  limits.max_runs = s.shrink_runs;
  // Shrinking runs events in their default order: a finding that needs the perturbed order does not start.
  explore::shrink_result r = explore::shrink(x.e.sc, x.seed, explore::shrink_target{k.variant, k.invariant}, limits);
  // One finding per (seed, variant): a lease scenario's variants get a file each.
  r.minimal.name = seed_name(base.name, k.first_seed, (k.variant.empty() ? "" : "-" + k.variant) + "-min");
  f.minimal_scenario = (fs::path(s.dir) / (r.minimal.name + ".json")).string();
  f.minimal_report = (fs::path(s.dir) / (r.minimal.name + ".report.json")).string();
  if (r.started) {
    const bool confirm_minimal = s.confirm && r.reproduced;
    write_scenario_and_report(r.minimal, f.minimal_scenario, f.minimal_report, confirm_minimal ? &confirm_file.sc : nullptr);
    if (confirm_minimal) confirm_file.path = f.minimal_scenario;
  }
  const bool needs_order = !r.started && (s.perturb_ties || s.ties_only);
  if (s.confirm) {
    confirm_file.entry = out.shrunk.size();
    out.to_confirm.push_back(std::move(confirm_file));
  }
  out.shrunk.push_back(shrink_entry(k, f, r, needs_order, s));
  if (out.shrunk.back().failed()) out.failed = true;
  out.lines.push_back(shrink_line(k, f, r, needs_order, s));
}

// Shrinks the first --shrink-max kinds of finding (none with --no-shrink), in `kinds` order.
shrink_report shrink_findings(const scenario::scenario& base, const std::vector<finding_kind>& kinds,
                              const seed_search& s, const seed_tally& tally) {
  shrink_report out;
  for (std::size_t i = 0; i < kinds.size() && s.shrink && i < s.shrink_max; ++i) {
    if (sigint_seen()) {
      out.interrupted = true;
      break;
    }
    shrink_one(base, kinds[i], s, tally.plan_of(kinds[i]).get(), out);
  }
  return out;
}

// --confirm: each shrunk finding's counterexample run on a real redis-server, one after another, once
// every shrink is done; its confirmation goes into its summary entry and a line of stderr.
void confirm_findings(const seed_search& s, shrink_report& out) {
  if (!s.confirm || out.to_confirm.empty()) return;
  confirm_settings settings = *s.confirm;
  settings.start();
  const bool stopped_before = sigint_seen();  // the search or the shrinks said so already
  const bool tty = isatty(STDERR_FILENO) == 1 && !s.quiet;
  for (std::size_t i = 0; i < out.to_confirm.size(); ++i) {
    counterexample_file& f = out.to_confirm[i];
    explore::shrunk_entry& e = out.shrunk[f.entry];
    if (tty)
      std::fprintf(stderr, "explore: confirming %zu of %zu on a real redis-server: %s%s\n", i + 1, out.to_confirm.size(),
                   f.path.c_str(), variant_label(e.variant).c_str());
    e.confirmation = confirm_on_redis(f.sc, e.variant, e.invariant, settings);
    e.confirmed_scenario = f.path;
    if (e.confirmation->interrupted) out.confirm_interrupted = true;
    out.lines.push_back("  seed " + std::to_string(e.seed) + variant_label(e.variant) + " broke " + e.invariant + " (" +
                        e.confirmation->words() + "): " + f.path + ", time scale " +
                        e.confirmation->scale_text() + ": " + e.confirmation->why());
    f.sc = scenario::scenario{};  // done with it
  }
  if (out.confirm_interrupted && !stopped_before)
    print_error("explore", "interrupted (SIGINT or SIGTERM) while confirming on a real redis-server: the summary marks "
                           "the confirmations cut (\"interrupted\": true) and says \"complete\": false");
}

// Why no seed ran: the shard held none of the range, or the time ran out first.
std::string no_seed_reason(const seed_search& s) {
  return s.opt.seeds.count ? "--shard " + s.shard + " holds none of the " + std::to_string(*s.opt.seeds.count) +
                                 " seeds from " + std::to_string(s.opt.seeds.first)
                           : "the time ran out before the first seed";
}

// The verdict of the search: why it is not as expected (exit 1), or nothing (exit 0).
std::vector<std::string> reasons_not_as_expected(const explore::explore_totals& sum, const seed_tally& tally,
                                                 const shrink_report& shrunk, const seed_search& s) {
  std::vector<std::string> why;
  if (sum.stopped || shrunk.interrupted)
    why.push_back("interrupted by SIGINT " + std::string(sum.stopped ? "after " + std::to_string(sum.ran) + " seeds"
                                                                     : "while shrinking"));
  else if (shrunk.confirm_interrupted)
    why.push_back("interrupted by SIGINT or SIGTERM while confirming on a real redis-server");
  if (sum.ran == 0) why.push_back("no seed ran (" + no_seed_reason(s) + ")");
  if (sum.counterexamples != 0)
    why.push_back(std::to_string(sum.counterexamples) + " seeds broke an invariant their expectation does not allow");
  if (sum.errors != 0) why.push_back(std::to_string(sum.errors) + " seeds ended in an internal error");
  if (sum.inconclusive != 0) {
    const auto& first = tally.first_inconclusive;
    why.push_back(std::to_string(sum.inconclusive) +
                  " seeds could not finish (inconclusive: a limit cut the run, so it judged nothing it did not reach; "
                  "the first is seed " + std::to_string(first ? first->first : 0) + ", " +
                  (first ? first->second : std::string("?")) + ", replay: " + s.replay_of(first ? first->first : 0) +
                  ")");
  }
  for (const auto& [variant, first] : tally.shown)
    if (!first) why.push_back("no seed showed the violation expected" + (variant.empty() ? "" : " of " + variant));
  if (shrunk.failed) why.push_back("a minimal scenario did not reproduce its violation");
  if (s.until_ppm && !sum.enough && !sum.stopped) {
    std::string short_of;
    for (const auto& [variant, e] : sum.by_variant)
      if (e.violating == 0 && e.seeds < s.until_seeds)
        short_of += (short_of.empty() ? "" : ", ") + (variant.empty() ? std::string("the runs") : variant) + " " +
                    std::to_string(e.seeds);
    why.push_back("the bound did not fall below " + reports::bound_percent(*s.until_ppm) + " before the " +
                  (s.opt.time_budget ? std::string("time limit") : "cap of " + std::to_string(*s.opt.seeds.count) + " seeds") +
                  ": " + std::to_string(s.until_seeds) + " clean seeds needed, " +
                  (short_of.empty() ? std::string("none ran") : short_of + " judged clean"));
  }
  return why;
}

// The --junit PATH checks before anything runs: writable, and none of the files the search writes
// in its folder (the summary, the seeds' *.json files, the lock).
void check_junit_path(const seed_search& s) {
  const std::string& path = *s.junit;
  if (auto why = check_output(path)) throw input_error{path, *why};
  if (same_output(path, s.summary_path))
    throw input_error{"--junit", "expected a file of its own, got the path of the summary: " + path};
  if (path == "-") return;
  std::error_code ec;
  const fs::path p(path);
  const bool in_folder = fs::equivalent(p.has_parent_path() ? p.parent_path() : fs::path("."), s.dir, ec);
  const std::string leaf = p.filename().string();
  if (in_folder && (leaf.ends_with(".json") || leaf == ".admitsim-explore.lock"))
    throw input_error{"--junit", "expected a path that is none of the search's files, got " + path + " in --out " +
                                     s.dir + ", where the search writes its *.json files"};
}

// What --junit says of the search: a case per variant, in the scenario's run order.
reports::explore_junit_input junit_of(const scenario::scenario& base, const seed_search& s,
                                      const explore::explore_totals& sum, seed_tally& tally,
                                      const shrink_report& shrunk) {
  reports::explore_junit_input in;
  in.name = base.name;
  in.file = s.file;
  in.seeds_ran = sum.ran;
  in.seeds = sum.first_seed ? std::to_string(*sum.first_seed) + ".." + std::to_string(*sum.last_seed) : "none";
  // The reasons of reasons_not_as_expected that are the whole search's, not one variant's.
  if (sum.stopped || shrunk.interrupted)
    in.search_errors.push_back("interrupted by SIGINT " + std::string(sum.stopped ? "after " + std::to_string(sum.ran) +
                                                                                        " seeds"
                                                                                  : "while shrinking"));
  else if (shrunk.confirm_interrupted)
    in.search_errors.push_back("interrupted by SIGINT or SIGTERM while confirming on a real redis-server");
  if (sum.ran == 0) in.search_errors.push_back("no seed ran (" + no_seed_reason(s) + ")");
  if (sum.errors != 0)
    in.search_errors.push_back(std::to_string(sum.errors) + " seeds ended in an internal error" +
                               (tally.error_lines.empty() ? "" : "; the first:" + tally.error_lines.front().substr(1)));
  std::vector<std::string> variants{""};
  for (const auto& g : base.gates)
    if (g.kind == scenario::gate_kind::lease) {
      variants = scenario::run_names(g.lease);
      break;
    }
  for (const std::string& name : variants) {
    reports::explore_junit_variant v = tally.junit[name];
    v.variant = name;
    if (const auto it = sum.by_variant.find(name); it != sum.by_variant.end()) v.ev = it->second;
    const auto [verdict, violated] = explore::expectation_for(base, name);
    v.expects_violation = verdict == "violation";
    v.expected = verdict;
    for (std::size_t i = 0; i < violated.size(); ++i) v.expected += (i == 0 ? " of " : ", ") + violated[i];
    for (const explore::shrunk_entry& e : shrunk.shrunk) {
      if (e.variant != name) continue;
      if (e.failed())
        v.shrink_failures.push_back("the shrunk finding of seed " + std::to_string(e.seed) + " (" + e.invariant +
                                    ") did not reproduce its violation");
      // The files a shrink wrote for the seed of the first counterexample (or of the expected violation).
      for (auto* b : {&v.counterexample, &v.expected_shown}) {
        if (!*b || (*b)->seed != e.seed) continue;
        (*b)->explored_scenario = e.explored_scenario;
        if (e.minimal_scenario) (*b)->minimal_scenario = *e.minimal_scenario;
        if (e.confirmation && (*b)->invariant == e.invariant)
          (*b)->confirmation = "broke " + e.invariant + " (" + e.confirmation->words() + "): " + e.confirmed_scenario +
                               ", time scale " + e.confirmation->scale_text() + ": " +
                               e.confirmation->why();
      }
    }
    in.variants.push_back(std::move(v));
  }
  return in;
}

// The summary's "seeds": the range asked for, how many ran, and whether the search finished.
explore::seeds_record seeds_of(const seed_search& s, const explore::explore_totals& sum, bool complete) {
  explore::seeds_record r;
  r.first = s.opt.seeds.first;
  r.count = s.opt.seeds.count;
  r.shard_index = s.shard_index;
  r.shard_count = s.shard_count;
  r.ran = sum.ran;
  r.last = sum.last_seed;
  r.complete = complete;
  if (s.until_ppm) r.until_bound = explore::seeds_record::until_bound_record{*s.until_ppm, s.until_seeds, sum.enough};
  return r;
}

// The summary's "bounds": the scenario's fault rates the seeds draw within, or none.
std::optional<explore::swarm_record> bounds_of(const scenario::scenario& base) {
  if (!base.faults.rates) return std::nullopt;
  return explore::swarm_record::of(explore::swarm_config{base.faults.rates->any(), *base.faults.rates},
                                   base.faults.schedule.size());
}

// The summary's "totals", with every kind of finding.
explore::totals_record totals_of(const seed_search& s, const explore::explore_totals& sum,
                                 const std::vector<finding_kind>& kinds) {
  explore::totals_record t;
  t.runs = sum.runs;
  t.seeds_with_violation = sum.with_violation;
  t.seeds_with_counterexample = sum.counterexamples;
  t.errors = sum.errors;
  t.seeds_inconclusive = sum.inconclusive;
  if (s.perturb_ties || s.ties_only) {
    t.distinct_orderings.emplace();
    for (const auto& [variant, n] : sum.distinct_orderings)
      t.distinct_orderings->emplace_back(variant.empty() ? "fifo" : variant, n);
    t.distinct_orderings_capped = sum.distinct_orderings_capped;
  }
  t.by_kind = kinds;
  return t;
}

// The summary's "expected_violations": each variant expected to break, and the first seed that broke it.
std::vector<explore::expected_violation> expectations_of(const scenario::scenario& base, const seed_tally& tally) {
  std::vector<explore::expected_violation> out;
  for (const auto& [variant, first] : tally.shown) {
    const auto [verdict, violated] = explore::expectation_for(base, variant);
    out.push_back(explore::expected_violation{variant, verdict, violated, first});
  }
  return out;
}

// The outcome of the search, as the summary file holds it
// (docs/explore.md); takes the findings and the shrinks' entries.
explore::search_summary summary_of(const std::string& bytes, const scenario::scenario& base, const seed_search& s,
                                    const explore::explore_totals& sum, const std::vector<finding_kind>& kinds,
                                    seed_tally& tally, shrink_report& shrunk, const std::vector<std::string>& why,
                                    int rc) {
  explore::search_summary out;
  out.scenario = explore::scenario_ref{base.name, s.file, reports::sha256_hex(bytes)};
  out.seeds = seeds_of(s, sum, !(sum.stopped || shrunk.interrupted || shrunk.confirm_interrupted));
  // "swarm" is the default search's (and was every search's); plain and guided name their search.
  out.mode = s.ties_only ? "ties_only" : s.perturb_ties ? "perturb_ties" : explore::to_string(s.strategy);
  out.bounds = bounds_of(base);
  out.totals = totals_of(s, sum, kinds);
  out.evidence = explore::evidence_of(sum);
  for (const auto& [variant, ev] : sum.by_variant)
    out.evidence_by_variant.push_back(explore::variant_evidence{variant.empty() ? "fifo" : variant, ev});
  out.expected_violations = expectations_of(base, tally);
  out.findings = std::move(tally.findings);
  out.findings_omitted = tally.omitted;
  out.shrunk = std::move(shrunk.shrunk);
  out.exit = explore::exit_record{rc, why};
  // What `admitsim merge` needs beyond the rest to write the summary of the search as one machine
  // (docs/explore.md, "Searches across machines"); only a shard's summary has it, so the summary of
  // a search on one machine keeps its bytes.
  if (s.shard_count > 1)
    out.merge = explore::merge_record{s.shrink, s.shrink_max, s.shrink_runs, tally.first_inconclusive};
  return out;
}

// The search on stderr: a summary line, the same-instant orders counted, each kind of finding,
// the seeds that ended in an error, each shrink, and why the search is not as expected.
void print_search(const seed_search& s, const explore::explore_totals& sum, const std::vector<finding_kind>& kinds,
                  const seed_tally& tally, const shrink_report& shrunk, const std::vector<std::string>& why) {
  const double rate = sum.wall_s > 0 ? static_cast<double>(sum.ran) / sum.wall_s : 0;
  const std::string range = !sum.first_seed ? std::string("none")
                                            : std::to_string(*sum.first_seed) + ".." + std::to_string(*sum.last_seed) +
                                                  (s.shard_count > 1 ? " shard " + s.shard : std::string());
  std::fprintf(stderr,
               "explore %s: %llu seeds (%s), %llu runs on %u threads in %.2fs (%.0f seeds/s): %llu with violations, "
               "%llu with counterexamples, %llu errors -> %s\n",
               s.file.c_str(), static_cast<unsigned long long>(sum.ran), range.c_str(),
               static_cast<unsigned long long>(sum.runs), s.opt.jobs, sum.wall_s, rate,
               static_cast<unsigned long long>(sum.with_violation),
               static_cast<unsigned long long>(sum.counterexamples), static_cast<unsigned long long>(sum.errors),
               s.summary_path.c_str());
  for (const auto& [variant, n] : sum.distinct_orderings)
    std::fprintf(stderr, "  %s%s: %s%llu distinct same-instant orders in %llu seeds\n",
                 variant.empty() ? "runs" : "runs of ", variant.c_str(), sum.distinct_orderings_capped ? "at least " : "",
                 static_cast<unsigned long long>(n), static_cast<unsigned long long>(sum.ran));
  const reports::evidence ev = explore::evidence_of(sum);
  std::fprintf(stderr, "  evidence: %s; faults injected: %s; coverage: %llu of %zu buckets hit%s\n",
               ev.statement().c_str(), ev.faults_text().c_str(), static_cast<unsigned long long>(ev.coverage_hit()),
               ev.coverage.size(), ev.coverage.empty() ? "" : " (--coverage lists them)");
  if (s.until_ppm)
    std::fprintf(stderr, "  until the bound falls below %s (%llu clean seeds a variant): %s after %llu seeds\n",
                 reports::bound_percent(*s.until_ppm).c_str(), static_cast<unsigned long long>(s.until_seeds),
                 sum.enough ? "reached" : "NOT reached", static_cast<unsigned long long>(sum.ran));
  if (sum.by_variant.size() > 1 || (sum.by_variant.size() == 1 && !sum.by_variant.begin()->first.empty()))
    for (const auto& [variant, v] : sum.by_variant)
      std::fprintf(stderr, "    %s: %s\n", variant_label(variant).c_str(), v.statement().c_str());
  if (sum.first_violation_wall_s)
    std::fprintf(stderr, "  first violation found after %.3fs of wall time\n", *sum.first_violation_wall_s);
  for (const auto& k : kinds) {
    std::fprintf(stderr, "  %s%s %s: %llu seeds, first seed %llu (%s)\n",
                 k.counterexample ? "COUNTEREXAMPLE " : "expected ", variant_label(k.variant).c_str(),
                 k.invariant.c_str(), static_cast<unsigned long long>(k.seeds),
                 static_cast<unsigned long long>(k.first_seed), tally.swarm_of(k).c_str());
    // Its causes, in the summary's order, each with the sentence of its first seed.
    for (const auto& [kind, c] : k.causes_in_order())
      std::fprintf(stderr, "    cause %s: %llu seeds, first seed %llu: %s\n", kind.c_str(),
                   static_cast<unsigned long long>(c.seeds), static_cast<unsigned long long>(c.first_seed),
                   c.example.c_str());
  }
  for (const auto& l : tally.error_lines) std::fprintf(stderr, "%s\n", l.c_str());
  if (tally.errors_unlisted != 0)
    std::fprintf(stderr, "  ... and %llu more seeds ended in an error\n",
                 static_cast<unsigned long long>(tally.errors_unlisted));
  for (const auto& l : shrunk.lines) std::fprintf(stderr, "%s\n", l.c_str());
  for (const auto& w : why) std::fprintf(stderr, "  not as expected: %s\n", w.c_str());
}

}  // namespace

explore_verb::explore_verb(CLI::App& app)
    : verb(app.add_subcommand("explore",
                              "Search seeds for violations: swarm-drawn fault schedules from the scenario's "
                              "faults.rates, shrinking each new finding to a minimal scenario file")) {
  sub_->add_option("FILE", file_, "Scenario file ('-' for standard input)")->required();
  auto* seeds = seeds_given_ =
      sub_->add_option("--seeds", seeds_, "How many seeds to run, from --first-seed: 1 to 2^64-1 (default 100)")
          ->type_name("N");
  auto* time = sub_->add_option("--time", time_, "Run seeds until this much wall time has passed, e.g. 60s");
  seeds->excludes(time);
  auto* until = sub_->add_option("--until-bound", until_bound_,
                                 "Run seeds until every variant has broken, or has enough clean seeds that a defect "
                                 "striking more than P of seeds would have shown (95% confidence): P from 0.001% to "
                                 "50%, e.g. 1% (about 300 seeds); --seeds or --time caps it (default cap: 10 times "
                                 "the seeds needed)")
                    ->type_name("P");
  auto* first_seed = sub_->add_option("--first-seed", first_seed_, "The first seed: 0 to 2^64-1 (default 0)")->type_name("S");
  jobs_given_ = sub_->add_option("--jobs,-j", jobs_,
                                 "Threads, one run each: 1 to " + std::to_string(jobs_max) +
                                     " (default: the machine's hardware threads, at most " + std::to_string(jobs_max) +
                                     ")")
                    ->type_name("N");
  auto* shard = sub_->add_option("--shard", shard_, "I/N: run only the seeds s with s % N == I (default 0/1)");
  until->excludes(shard);  // a shard's bound is not the search's
  sub_->add_option("--out", out_dir_, "Directory for the summary, counterexamples and minimal scenarios (default out/explore); "
                   "created if missing, locked while the search writes it");
  auto* junit = sub_->add_option("--junit", junit_,
                                 "Also write JUnit XML for CI: one testcase per variant, failed by a counterexample or "
                                 "a missing expected violation, an error when the search could not conclude; '-' for "
                                 "stdout (docs/ci.md)");
  sub_->add_flag("--quiet,-q", quiet_, "No summary on stderr (the progress line shows only on a terminal anyway)");
  auto* coverage = sub_->add_flag("--coverage", coverage_,
                                  "Print on stdout the coverage table: each probe and bucket (which faults met which "
                                  "client phase and server state) with the judged seeds that hit it");
  auto* no_shrink = sub_->add_flag("--no-shrink", no_shrink_, "Report findings without shrinking them");
  auto* shrink_max =
      sub_->add_option("--shrink-max", shrink_max_, "Shrink at most this many kinds of finding: 0 to 1000 (default 4)")
          ->type_name("K");
  auto* shrink_runs = sub_->add_option("--shrink-runs", shrink_runs_, "Runs one shrink may use: 1 to 100000000 (default 5000)")
                              ->type_name("R");
  auto* search = sub_->add_option("--search", search_,
                                  "What each seed runs: swarm (default: its own rates within the scenario's "
                                  "faults.rates, then faults drawn from them), plain (the rates at their bounds, as "
                                  "admitsim run --seed does), or guided (swarm with feedback: half the seeds mutate "
                                  "the fault schedules of earlier seeds that reached rare coverage buckets or near "
                                  "misses; docs/explore.md)")
                     ->type_name("S");
  auto* perturb = sub_->add_flag("--perturb-ties", perturb_ties_,
                                 "Each seed also draws the order of events due at one instant");
  auto* ties_only = sub_->add_flag("--ties-only", ties_only_,
                                   "Run the scenario as admitsim run does (its own seed); seeds vary only the order of "
                                   "events due at one instant");
  perturb->excludes(ties_only);
  search->excludes(ties_only);  // --ties-only runs the scenario's own faults
  auto* exhaustive = sub_->add_flag("--exhaustive", exhaustive_,
                                    "Enumerate every order of the events due at one instant in the scenario's own run "
                                    "(per lease variant), within --max-delays; writes DIR/<name>-orders.json");
  auto* max_delays = sub_->add_option("--max-delays", max_delays_,
                                      "With --exhaustive: explore the orders that delay at most this many events behind "
                                      "later ones, summed over the run: 0 to 1000000 (default 2)")
                         ->type_name("K");
  auto* max_orders = sub_->add_option("--max-orders", max_orders_,
                                      "With --exhaustive: stop after this many orders per variant: 1 to 2^64-1 (default 100000)")
                         ->type_name("N");
  auto* placements = sub_->add_flag("--placements", placements_,
                                    "Run every placement of the scenario's scheduled faults (1 to 3, no rates) at the "
                                    "instants its run acts: 1ns before and after each call, reply, grant, release and "
                                    "lease expiry, each fault at or after the one before; writes "
                                    "DIR/<name>-placements.json (docs/explore.md)");
  auto* max_placements = sub_->add_option("--max-placements", max_placements_,
                                          "With --placements: stop after this many runs per variant, the result then "
                                          "inconclusive: 1 to 2^64-1 (default 100000)")
                             ->type_name("N");
  max_placements->needs(placements);
  auto* order = sub_->add_option("--order", order_,
                                 "Replay one same-instant order of the scenario's own run, as --exhaustive reports it "
                                 "(POINT:CHOICE,...; '' is the default order)");
  auto* variant = sub_->add_option("--variant", variant_, "With --order: the lease variant to run");
  sub_->add_option("--trace", trace_,
                   "With --order: also write every trace entry of the order's run as JSON lines to this file ('-' "
                   "for stdout; docs/trace.md)");
  confirm_.add_to(sub_, "each shrunk counterexample (its minimal scenario, else the seed's explored one; not with "
                        "--no-shrink or --shard)");
  max_delays->needs(exhaustive);
  max_orders->needs(exhaustive);
  variant->needs(order);
  // The order modes run the scenario's own run: no seeds to choose, share out or shrink.
  for (CLI::Option* o : {exhaustive, order, placements}) {
    for (CLI::Option* seed_option :
         {seeds, time, until, first_seed, shard, perturb, ties_only, search, no_shrink, shrink_max, shrink_runs})
      o->excludes(seed_option);
  }
  exhaustive->excludes(order);
  placements->excludes(exhaustive);
  placements->excludes(order);
  // A JUnit file is a seed search's verdicts.
  for (CLI::Option* o : {exhaustive, order, placements}) {
    o->excludes(junit);
    o->excludes(coverage);
    o->excludes(confirm_.flag());  // a seed search's counterexamples
  }
}

int explore_verb::run() const {
  const std::string bytes = read_input(file_, "scenario file");
  const scenario::scenario base = parse_scenario(file_, bytes);
  const unsigned jobs = read_jobs();
  // One trace file is one run's story (or a few variants'): a search runs thousands.
  if (trace_ && !order_)
    throw input_error{"--trace", "expected --order as well: a trace is the story of one run, and a seed search or "
                                 "--exhaustive runs many (trace a finding with admitsim run FILE --trace PATH, an "
                                 "order with --order ORDER --trace PATH)"};
  if (exhaustive_ || order_ || placements_) {
    (void)confirm_.read();  // refuses an option of --confirm, which they do not take
    return run_order_modes(bytes, base, jobs);
  }
  return run_seeds(bytes, base, jobs);
}

unsigned explore_verb::read_jobs() const {
  // Every number before anything runs (numbers.hpp).
  if (jobs_given_->count() != 0) return static_cast<unsigned>(parse_number("--jobs", jobs_, 1, jobs_max));
  return std::clamp(std::thread::hardware_concurrency(), 1u, jobs_max);
}

int explore_verb::run_order_modes(const std::string& bytes, const scenario::scenario& base, unsigned jobs) const {
  orders_request req;
  req.file = file_;
  req.bytes = bytes;
  req.base = &base;
  req.max_delays = parse_number("--max-delays", max_delays_, 0, 1'000'000);
  req.max_orders = parse_number("--max-orders", max_orders_, 1);
  req.placements = placements_;
  req.max_placements = parse_number("--max-placements", max_placements_, 1);
  req.order = order_;
  req.variant = variant_;
  req.trace = trace_;
  req.out_dir = out_dir_;
  req.jobs = jobs;
  req.quiet = quiet_;
  dir_lock lock;
  if (exhaustive_ || placements_) prepare_folder(out_dir_, lock, orders_summary_path(req));
  try {
    return run_orders(req);
  } catch (const std::system_error& e) {
    throw threads_refused(jobs, e);
  }
}

seed_search explore_verb::read_seed_options(const scenario::scenario& base, unsigned jobs) const {
  seed_search s;
  s.file = file_;
  s.shard = shard_;
  std::tie(s.shard_index, s.shard_count) = parse_shard(shard_);
  s.opt.seeds.first = parse_number("--first-seed", first_seed_);
  s.opt.seeds.shard_index = s.shard_index;
  s.opt.seeds.shard_count = s.shard_count;
  if (!time_.empty()) {
    const auto t = scenario::parse_duration_ns(time_);
    if (!t || *t <= 0) throw input_error{"--time", "expected a duration such as \"60s\", got \"" + time_ + "\""};
    s.opt.time_budget = std::chrono::nanoseconds(*t);
  } else {
    s.opt.seeds.count = seeds_given_->count() != 0 ? parse_number("--seeds", seeds_, 1) : default_seeds;
  }
  if (until_bound_) {
    s.until_ppm = reports::parse_share_ppm(*until_bound_);
    if (!s.until_ppm)
      throw input_error{"--until-bound", "expected a share from 0.001% to 50% such as \"1%\" or \"0.01\", got \"" +
                                             *until_bound_ + "\""};
    s.until_seeds = reports::seeds_for_bound(*s.until_ppm);
    if (time_.empty() && seeds_given_->count() == 0) {
      s.opt.seeds.count = 10 * s.until_seeds;  // the default cap
    } else if (s.opt.seeds.count && *s.opt.seeds.count < s.until_seeds) {
      throw input_error{"--seeds", "expected at least " + std::to_string(s.until_seeds) + ", the clean seeds a bound below " +
                                       reports::bound_percent(*s.until_ppm) + " needs (--until-bound), got " +
                                       std::to_string(*s.opt.seeds.count)};
    }
    // Every variant has broken, or has the clean seeds its bound needs.
    const std::uint64_t need = s.until_seeds;
    s.opt.enough = [need](const explore::explore_totals& t) {
      if (t.by_variant.empty()) return false;
      for (const auto& [variant, e] : t.by_variant)
        if (e.violating == 0 && e.seeds < need) return false;
      return true;
    };
  }
  s.shrink = !no_shrink_;
  s.shrink_max = parse_number("--shrink-max", shrink_max_, 0, 1'000);
  s.shrink_runs = parse_number("--shrink-runs", shrink_runs_, 1, 100'000'000);
  s.opt.jobs = jobs;
  s.opt.mode.perturb_ties = perturb_ties_;
  s.opt.mode.ties_only = ties_only_;
  const std::optional<explore::search_strategy> strategy = explore::parse_search_strategy(search_);
  if (!strategy) throw input_error{"--search", "expected swarm, plain or guided, got \"" + search_ + "\""};
  s.opt.mode.strategy = *strategy;
  s.strategy = *strategy;
  s.opt.stop = [] { return sigint_seen(); };
  s.perturb_ties = perturb_ties_;
  s.ties_only = ties_only_;
  s.quiet = quiet_;
  s.dir = out_dir_;
  s.summary_path = (fs::path(s.dir) / (base.name + "-explore.json")).string();
  s.junit = junit_;
  s.base = &base;
  s.confirm = confirm_.read();
  if (s.confirm && !s.shrink)
    throw input_error{"--confirm", "expected no --no-shrink: explore confirms each shrunk counterexample (the minimal "
                                   "scenario file a shrink writes), and --no-shrink writes none; to confirm a seed "
                                   "unshrunk, run admitsim confirm on its scenario or report"};
  if (s.confirm && s.shard_count > 1)
    throw input_error{"--confirm", "expected no --shard: a shard's summary is merged (admitsim merge) into the bytes "
                                   "of the search as one, and a confirmation is a measurement; confirm the merged "
                                   "search's counterexamples with admitsim merge --confirm"};
  return s;
}

int explore_verb::run_seeds(const std::string& bytes, const scenario::scenario& base, unsigned jobs) const {
  const seed_search s = read_seed_options(base, jobs);
  dir_lock lock;  // held until the summary is written
  prepare_folder(s.dir, lock, s.summary_path);
  if (s.junit) check_junit_path(s);
  seed_tally tally;
  const explore::explore_totals sum = search_seeds(base, s, tally);
  const std::vector<finding_kind> kinds = tally.kinds_in_order();
  shrink_report shrunk = shrink_findings(base, kinds, s, tally);
  confirm_findings(s, shrunk);
  const std::vector<std::string> why = reasons_not_as_expected(sum, tally, shrunk, s);
  const int rc = why.empty() ? exit_as_expected : exit_not_expected;
  // The one line a quiet search still prints: a search that ran nothing is no pass.
  if (s.quiet && sum.ran == 0) print_error("explore", "no seed ran (" + no_seed_reason(s) + ")");
  // The JUnit input first: the summary takes the findings.
  std::optional<std::string> junit_bytes;
  if (s.junit) junit_bytes = reports::render_explore_junit(junit_of(base, s, sum, tally, shrunk));
  write_file(s.summary_path, summary_of(bytes, base, s, sum, kinds, tally, shrunk, why, rc).render());
  if (junit_bytes)
    if (const auto why_not = write_output(*s.junit, *junit_bytes, "JUnit file")) throw input_error{*s.junit, *why_not};
  if (!s.quiet) print_search(s, sum, kinds, tally, shrunk, why);
  if (coverage_) {
    // The table, one bucket a line: the judged seeds that hit it, of how many.
    std::printf("coverage of %s: %llu of %zu buckets hit in %llu judged seeds\n", s.file.c_str(),
                static_cast<unsigned long long>(explore::evidence_of(sum).coverage_hit()), sum.coverage.size(),
                static_cast<unsigned long long>(sum.judged));
    for (const auto& [name, seeds] : sum.coverage)
      std::printf("%10llu  %s%s\n", static_cast<unsigned long long>(seeds), name.c_str(), seeds == 0 ? "  (never hit)" : "");
  }
  return rc;
}

std::unique_ptr<verb> make_explore_verb(CLI::App& app) { return std::make_unique<explore_verb>(app); }

}  // namespace admit::cli
