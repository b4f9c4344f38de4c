// explorer: runs one scenario under many seeds, in parallel, and classifies
// what each seed found.
//
// Model. A seed's run is its plan (seed_source.hpp: a swarm draw by default)
// followed by world::run_all: an independent world per run, built, run and
// destroyed on one thread. Parallelism is across seeds only: run_explore is a
// parallel_for (parallel_for.hpp) over the seed indexes, and whichever thread
// finishes a seed hands on, under one lock and in seed order, every outcome
// whose earlier seeds are all done (a guided source learns it there and plans
// the seed guided_lag further on), so the findings never depend on `jobs` or
// on timing (a time budget or a stop request only decides how many seeds ran:
// always a prefix of the shard's seeds). The search keeps no outcome after
// handing it on, and a seed starts at most reorder_window seeds (guided_lag
// for a guided search) ahead of the oldest one not handed on, so its memory
// does not grow with the number of seeds (docs/limits.md).
//
// Classification of one run against the scenario's `expect` (its variant's
// entry for a lease run):
//   counterexample  an invariant broke although the run was expected to pass,
//                   or one that the expected `violated` list does not name;
//   expected        every invariant that broke is one the expectation names
//                   (or it names none);
//   error           the run threw (an internal assertion): always reported;
//   inconclusive    the run could not finish (event budget, horizon, wall
//                   guard, fault-draw limit) and its scenario does not expect
//                   that: the seed is counted and the search is not a pass.
//
// With explore_mode::perturb_ties each seed also draws the order in which
// events due at one instant run (sim::tie_perturbation), and the summary
// counts the distinct orders the runs took.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "reports/evidence.hpp"
#include "sim/explore/seed_source.hpp"
#include "sim/explore/swarm.hpp"
#include "sim/scenario/scenario.hpp"
#include "sim/world/lease_world.hpp"
#include "sim/world/own_gate.hpp"
#include "sim/world/run_record.hpp"

namespace admit::explore {

using sim::vtime_ns;

// The seeds of a search: [first, first + count) (or unbounded with a time
// budget), keeping those with seed % shard_count == shard_index.
struct seed_range {
  std::uint64_t first = 0;
  std::optional<std::uint64_t> count;
  std::uint64_t shard_index = 0;
  std::uint64_t shard_count = 1;

  // The k-th seed of this shard (from 0), or nullopt past the end.
  std::optional<std::uint64_t> at(std::uint64_t k) const;
  // How many seeds the shard holds, when the range is bounded.
  std::optional<std::uint64_t> size() const;
};

struct invariant_break {
  std::string name;
  vtime_ns at_ns = 0;
  std::string detail;
  // How bad it got, for a run that went on past its first violation (explore_mode::run_to_end;
  // admitsim matrix reads these): a level invariant's worst moment and time in violation, and
  // the causes the world named, most first (check::invariant_result). worst_value - worst_bound
  // is the overshoot a sweep reports (docs/sweep.md); 0 and 0 for an event invariant.
  bool level = false;
  std::int64_t worst_value = 0;
  std::int64_t worst_bound = 0;
  vtime_ns time_in_violation_ns = 0;
  std::vector<check::cause_count> causes;
};

struct run_outcome {
  std::string variant;                  // empty for a FIFO scenario
  std::vector<invariant_break> broken;  // by the time each first broke (then the report's order)
  std::string expected_verdict;         // "pass" or "violation"
  bool met = false;                     // reports::as_expected
  bool counterexample = false;
  // The run could not finish (world::inconclusive_reason::kind): it judged nothing it did not
  // reach, so the seed is neither clean nor, unless the scenario expects it, as expected.
  std::optional<std::string> inconclusive;
  std::string run_status;
  std::uint64_t requests = 0;
  std::int64_t portal_inflight_max = 0;
  std::uint64_t events = 0;
  std::array<std::uint64_t, scenario::fault_kind_count> faults_injected{};  // world::run_record's
  // Its probes, then its coverage buckets (world::run_record's, moved in by explore_one).
  check::probe_counts coverage;
};

// How a seed varies what it runs.
struct explore_mode {
  // What each seed runs (seed_source.hpp): the rates at their bounds, a swarm draw, or a guided one.
  search_strategy strategy = search_strategy::swarm;
  // Same-instant events run in an order drawn from the seed (sim::tie_perturbation).
  bool perturb_ties = false;
  // Only the same-instant order varies: every seed runs the scenario as `admitsim run` does with
  // the scenario's own seed (its rates drawn with that seed); implies perturb_ties.
  bool ties_only = false;
  // Every run goes on past its first violation to its end (the scenario's own checks.stop_at_first),
  // so that its outcome says how bad it got; otherwise for_search decides.
  bool run_to_end = false;
  // Every FIFO gate runs this team's own core (sim/world/own_gate.hpp), or admitsim's when null.
  // With jobs > 1 its factory is called from several threads at once: it must be safe to call
  // concurrently (own_gate_of's is), and each core it makes serves one run on one thread.
  const world::own_gate* own = nullptr;
};

struct seed_outcome {
  std::uint64_t seed = 0;
  std::shared_ptr<const seed_plan> plan;  // what it ran (its scenario, run seed, and a guided seed's origin)
  std::vector<std::uint64_t> orderings;  // with perturbed ties: one fingerprint per run, in run order
  swarm_config swarm;
  std::size_t faults_from_file = 0;
  std::size_t faults_drawn = 0;
  std::vector<run_outcome> runs;
  std::optional<std::string> error;  // the seed's run threw

  bool any_violation() const;
  bool any_counterexample() const;
  bool any_inconclusive() const;
};

struct explore_totals;

struct explore_progress {
  std::uint64_t done = 0;
  std::optional<std::uint64_t> total;
  std::uint64_t with_violation = 0;
  std::uint64_t counterexamples = 0;
  double elapsed_s = 0;
};

struct explore_options {
  seed_range seeds;
  explore_mode mode;
  std::optional<std::chrono::nanoseconds> time_budget;  // wall clock; stops taking new seeds after it
  unsigned jobs = 1;
  // Called about every `progress_every` while seeds run, as a seed is handed on (from the thread
  // that hands it on, never two at once).
  std::function<void(const explore_progress&)> on_progress;
  std::chrono::milliseconds progress_every{250};
  // Polled before each seed (from any thread): true stops taking new seeds, as a time budget does.
  std::function<bool()> stop;
  // Asked after each seed is handed on (where on_seed is called), with the totals so far: true ends the
  // search there (no later seed is handed on, whatever ran beside it), so the seeds counted are the
  // same prefix for every `jobs` (explore --until-bound).
  std::function<bool(const explore_totals&)> enough;
};

// How many seeds a thread may run ahead of the oldest one not yet finished,
// per thread: what bounds the outcomes waiting to be handed on in seed order.
inline constexpr std::uint64_t reorder_window_per_job = 64;

// The distinct same-instant orders counted per variant: past this many the
// count stops growing and the totals say it is a lower bound.
inline constexpr std::size_t distinct_orderings_max = 1'000'000;

// What a search counts, over every seed it ran.
struct explore_totals {
  std::uint64_t ran = 0;              // how many seeds ran (a prefix of the shard's seeds)
  std::optional<std::uint64_t> first_seed, last_seed;
  std::uint64_t runs = 0;
  std::uint64_t with_violation = 0;
  std::uint64_t counterexamples = 0;  // seeds with at least one
  std::uint64_t errors = 0;
  std::uint64_t inconclusive = 0;     // seeds with a run that could not finish and was not expected to
  // What the search rests on (reports/evidence.hpp): the seeds whose runs were judged (no error, and
  // finished or broke before a limit cut them), those that broke an invariant (the first of them),
  // and the faults every run injected, by kind.
  std::uint64_t judged = 0;
  std::uint64_t violating = 0;
  std::optional<std::uint64_t> first_violating_seed;
  std::array<std::uint64_t, scenario::fault_kind_count> faults_injected{};
  // Each bucket (probes, then coverage) with the judged seeds that hit it.
  check::probe_counts coverage;
  // The same per variant (its runs only; "" for a FIFO scenario's): one variant may hold while another breaks.
  std::map<std::string, reports::evidence> by_variant;
  // With perturbed ties: how many distinct same-instant orders the runs of each variant took.
  std::map<std::string, std::uint64_t> distinct_orderings;
  bool distinct_orderings_capped = false;  // some variant reached distinct_orderings_max
  bool stopped = false;                    // options.stop ended the search
  bool enough = false;                     // options.enough ended the search
  // Wall clock (for the CLI's summary line only; never in a report).
  double wall_s = 0;
  std::optional<double> first_violation_wall_s;
};

// The search's evidence, from its totals.
reports::evidence evidence_of(const explore_totals& t);

// The totals and every outcome, by seed.
struct explore_summary : explore_totals {
  std::vector<seed_outcome> seeds;
};

// The outcome of one run against the scenario's expectation (its variant's
// entry for a lease run), classified as above.
run_outcome classify_run(const scenario::scenario& base, const world::run_record& rec);

// The run options explore uses: no timeline, no trace (it reads neither).
world::lease_run_options verdict_only();

// `sc` as explore's search runs it: stopped at its first violation
// (checks.stop_at_first) when that cannot change what the search concludes,
// that is when no expectation names the invariants it allows to break (then
// any violation is, or none is, a counterexample). A scenario that names them
// runs to its end: an invariant it does not name may break after one it does.
scenario::scenario for_search(const scenario::scenario& sc);

// One seed, on the calling thread: its plan by mode.strategy (a guided search's first plans are fresh
// swarm draws, and so is this; the feedback exists only within run_explore), or, with ties_only,
// the scenario's own run.
seed_outcome explore_one(const scenario::scenario& base, std::uint64_t seed, const explore_mode& mode = {});

// One planned seed, on the calling thread.
seed_outcome run_plan(const scenario::scenario& base, std::shared_ptr<const seed_plan> plan, const explore_mode& mode);

// The seed of the same-instant order of explore seed `seed` (explore_mode::perturb_ties).
std::uint64_t tie_seed(std::uint64_t seed);

// Every seed of the range, on `jobs` threads; each outcome goes to `on_seed`
// in seed order (one at a time, from the thread that hands it on) and is not
// kept. Throws std::system_error when a thread cannot be started (after
// joining those that did).
explore_totals run_explore(const scenario::scenario& base, const explore_options& options,
                           const std::function<void(seed_outcome&&)>& on_seed);

// The same, keeping every outcome (for tests and small searches).
explore_summary run_explore(const scenario::scenario& base, const explore_options& options);

// The expectation that applies to a run of `variant` ("" for FIFO).
std::pair<std::string, std::vector<std::string>> expectation_for(const scenario::scenario& sc,
                                                                 const std::string& variant);

}  // namespace admit::explore
