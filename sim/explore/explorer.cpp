#include "sim/explore/explorer.hpp"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <mutex>

#include "gate/admit_assert.hpp"
#include "reports/report.hpp"
#include "sim/explore/parallel_for.hpp"
#include "sim/kernel/prng.hpp"
#include "sim/kernel/scheduler.hpp"
#include "sim/world/coverage_buckets.hpp"
#include "sim/world/lease_world.hpp"
#include "sim/world/world.hpp"

namespace admit::explore {

std::optional<std::uint64_t> seed_range::at(std::uint64_t k) const {
  ADMIT_ASSERT(shard_count >= 1, "a shard count of at least 1");
  ADMIT_ASSERT(shard_index < shard_count, "a shard index below the shard count");
  // The first seed s >= first with s % shard_count == shard_index, then every shard_count-th.
  const std::uint64_t offset = (shard_index + shard_count - first % shard_count) % shard_count;
  if (offset > UINT64_MAX - first) return std::nullopt;
  const std::uint64_t s0 = first + offset;
  if (k > (UINT64_MAX - s0) / shard_count) return std::nullopt;
  const std::uint64_t s = s0 + k * shard_count;
  if (count && s - first >= *count) return std::nullopt;
  return s;
}

std::optional<std::uint64_t> seed_range::size() const {
  if (!count) return std::nullopt;
  const std::uint64_t offset = (shard_index + shard_count - first % shard_count) % shard_count;
  if (offset >= *count) return 0;
  return (*count - offset - 1) / shard_count + 1;
}

bool seed_outcome::any_violation() const {
  return std::any_of(runs.begin(), runs.end(), [](const run_outcome& r) { return !r.broken.empty(); });
}

bool seed_outcome::any_inconclusive() const {
  return std::any_of(runs.begin(), runs.end(), [](const run_outcome& r) { return r.inconclusive && !r.met; });
}

bool seed_outcome::any_counterexample() const {
  return error.has_value() ||
         std::any_of(runs.begin(), runs.end(), [](const run_outcome& r) { return r.counterexample; });
}

std::pair<std::string, std::vector<std::string>> expectation_for(const scenario::scenario& sc,
                                                                 const std::string& variant) {
  const check::expectation e = scenario::expectation_for(sc, variant);
  return {std::string(e.verdict), std::vector<std::string>(e.violated.begin(), e.violated.end())};
}

std::uint64_t tie_seed(std::uint64_t seed) { return sim::substream(seed, "explore/ties").next_u64(); }

// What explore reads of a run (invariants, status, metrics) does not need a
// lease run's timeline or trace (world::lease_run_options).
world::lease_run_options verdict_only() {
  world::lease_run_options lean;
  lean.timeline = false;
  lean.trace = false;
  return lean;
}

scenario::scenario for_search(const scenario::scenario& sc) {
  scenario::scenario out = sc;
  bool names = !sc.expect.violated.empty();
  for (const auto& v : sc.expect.variants) names = names || !v.violated.empty();
  if (!names) out.checks.stop_at_first = true;
  return out;
}

run_outcome classify_run(const scenario::scenario& base, const world::run_record& rec) {
  run_outcome r;
  r.variant = rec.variant;
  for (const auto& inv : rec.invariants)
    if (!inv.holds && inv.first) {
      invariant_break b;
      b.name = inv.name;
      b.at_ns = inv.first->at_ns;
      b.detail = inv.first->detail;
      b.level = inv.level;
      if (inv.worst) {
        b.worst_value = inv.worst->value;
        b.worst_bound = inv.worst->bound;
      }
      b.time_in_violation_ns = inv.time_in_violation_ns;
      b.causes = inv.causes;
      r.broken.push_back(std::move(b));
    }
  std::stable_sort(r.broken.begin(), r.broken.end(),
                   [](const invariant_break& a, const invariant_break& b) { return a.at_ns < b.at_ns; });
  const check::expectation expected = scenario::expectation_for(base, rec.variant);
  r.expected_verdict = expected.verdict;
  r.met = reports::as_expected(base, rec);
  r.counterexample = check::is_counterexample(expected, rec.invariants);
  r.run_status = sim::to_string(rec.status);
  if (rec.inconclusive) r.inconclusive = rec.inconclusive->kind;
  r.requests = rec.metrics.requests;
  r.portal_inflight_max = rec.metrics.portal_inflight_max;
  r.events = rec.diagnostics.events;
  r.faults_injected = rec.faults_injected;
  return r;
}

reports::evidence evidence_of(const explore_totals& t) {
  ADMIT_ASSERT(t.violating <= t.judged && t.judged <= t.ran, "the violating seeds are among the judged, among those run");
  reports::evidence e;
  e.seeds = t.judged;
  e.violating = t.violating;
  e.first_violating_seed = t.first_violating_seed;
  e.faults = t.faults_injected;
  e.coverage = t.coverage;
  return e;
}

seed_outcome explore_one(const scenario::scenario& base, std::uint64_t seed, const explore_mode& mode) {
  auto p = std::make_shared<seed_plan>();
  if (mode.ties_only) {
    // The scenario's own run (its seed, its rates drawn with it); only the order varies.
    p->seed = seed;
    p->run_seed = base.seed;
    p->e.sc = base;
    p->e.faults_from_file = base.faults.schedule.size();
  } else {
    // A guided source with nothing learned plans a fresh swarm draw: the swarm's plan.
    *p = make_seed_source(mode.strategy == search_strategy::plain ? search_strategy::plain : search_strategy::swarm, base)
             ->plan(seed);
  }
  return run_plan(base, std::move(p), mode);
}

seed_outcome run_plan(const scenario::scenario& base, std::shared_ptr<const seed_plan> plan, const explore_mode& mode) {
  ADMIT_ASSERT(plan != nullptr, "a seed runs a plan");
  seed_outcome out;
  out.seed = plan->seed;
  out.plan = plan;
  const explored_scenario& e = plan->e;
  out.swarm = e.swarm;
  out.faults_from_file = e.faults_from_file;
  out.faults_drawn = e.faults_drawn;
  std::vector<world::run_record> recs;
  try {
    std::optional<sim::tie_perturbation> ties;
    if (mode.perturb_ties || mode.ties_only) ties.emplace(tie_seed(plan->seed));
    recs = world::run_all(mode.run_to_end ? e.sc : for_search(e.sc), plan->run_seed, verdict_only(), nullptr, mode.own);
    if (ties) out.orderings = ties->fingerprints();
  } catch (const std::exception& ex) {
    out.error = ex.what();
    return out;
  }
  for (auto& rec : recs) {
    run_outcome& r = out.runs.emplace_back(classify_run(base, rec));
    r.coverage = std::move(rec.probes);
    r.coverage.insert(r.coverage.end(), std::make_move_iterator(rec.coverage.begin()),
                      std::make_move_iterator(rec.coverage.end()));
  }
  return out;
}

namespace {

// Distinct 64-bit fingerprints, counted exactly up to distinct_orderings_max
// in about 8 bytes each: appended, then sorted and deduplicated whenever the
// unsorted tail is as long as the sorted part.
class distinct_counter {
 public:
  void add(std::uint64_t f) {
    if (capped_) return;
    values_.push_back(f);
    if (values_.size() >= 2 * sorted_ + 1024) compact();
  }
  std::uint64_t count() {
    compact();
    return values_.size();
  }
  bool capped() const { return capped_; }

 private:
  void compact() {
    std::sort(values_.begin(), values_.end());
    values_.erase(std::unique(values_.begin(), values_.end()), values_.end());
    sorted_ = values_.size();
    if (sorted_ >= distinct_orderings_max) {
      values_.resize(distinct_orderings_max);
      sorted_ = values_.size();
      capped_ = true;
    }
  }
  std::vector<std::uint64_t> values_;
  std::size_t sorted_ = 0;
  bool capped_ = false;
};

}  // namespace

explore_totals run_explore(const scenario::scenario& base, const explore_options& options,
                           const std::function<void(seed_outcome&&)>& on_seed) {
  using clock = std::chrono::steady_clock;  // wall time decides when to stop and what the progress line says
  const auto t0 = clock::now();
  const unsigned jobs = std::max(1u, options.jobs);
  // ties_only runs the scenario's own plan (explore_one); every other mode asks the source.
  const std::unique_ptr<seed_source> source =
      options.mode.ties_only ? nullptr : make_seed_source(options.mode.strategy, base);
  const std::uint64_t lag = source ? source->lag() : 0;
  const std::uint64_t window = lag != 0 ? lag : reorder_window_per_job * jobs;

  std::mutex m;                     // everything below, and every call of on_seed, learn and plan with lag
  std::condition_variable room_cv;  // a seed waits on it for the window to reach it
  bool quit = false;                // no seed starts; the outcomes not yet handed on are dropped
  bool stopped = false;
  std::uint64_t handed = 0;  // every index below it has been handed on
  std::uint64_t done = 0, done_violating = 0, done_counterexamples = 0;
  std::map<std::uint64_t, seed_outcome> finished;  // by index, waiting for the earlier ones
  std::map<std::uint64_t, std::shared_ptr<const seed_plan>> plans;  // a learning source's, by index
  std::optional<double> first_violation_s;
  auto last_progress = clock::now();

  explore_totals s;
  std::map<std::string, distinct_counter> orders;
  auto hand_on = [&](seed_outcome&& o) {
    for (std::size_t i = 0; i < o.orderings.size() && i < o.runs.size(); ++i) orders[o.runs[i].variant].add(o.orderings[i]);
    ++s.ran;
    if (!s.first_seed) s.first_seed = o.seed;
    s.last_seed = o.seed;
    s.runs += o.runs.size();
    if (o.any_violation() || o.error) ++s.with_violation;
    if (o.any_counterexample()) ++s.counterexamples;
    if (o.error) ++s.errors;
    if (o.any_inconclusive()) ++s.inconclusive;
    const bool violating = o.any_violation();
    // A run a limit cut judged nothing past the cut (even one its scenario expects to be cut): unless it
    // broke before, its seed is no evidence.
    const bool cut = std::any_of(o.runs.begin(), o.runs.end(), [](const run_outcome& r) { return r.inconclusive.has_value(); });
    if (!o.error && (violating || !cut)) {
      ++s.judged;
      std::vector<const check::probe_counts*> runs;
      for (const run_outcome& r : o.runs) runs.push_back(&r.coverage);
      reports::evidence c;  // the fold of evidence::add_coverage, over the totals' list
      c.coverage = std::move(s.coverage);
      c.add_coverage(runs);
      s.coverage = std::move(c.coverage);
    }
    if (violating) {
      ++s.violating;
      if (!s.first_violating_seed) s.first_violating_seed = o.seed;  // seeds are handed on in order
    }
    for (const run_outcome& r : o.runs) {
      for (std::size_t k = 0; k < r.faults_injected.size(); ++k) s.faults_injected[k] += r.faults_injected[k];
      reports::evidence& v = s.by_variant[r.variant];
      v.add_seed(o.seed, !r.broken.empty(), r.inconclusive.has_value(), {&r.coverage});
      v.add_faults(r.faults_injected);
    }
    if (lag != 0) source->learn(o);
    on_seed(std::move(o));
  };
  // A learning source plans index k once the outcomes below k - lag are learned, and only those.
  auto plan_index = [&](std::uint64_t k) {
    if (const std::optional<std::uint64_t> seed = options.seeds.at(k))
      plans.emplace(k, std::make_shared<const seed_plan>(source->plan(*seed)));
  };
  if (lag != 0)
    for (std::uint64_t k = 0; k < lag; ++k) plan_index(k);

  auto end_search = [&] {  // under the lock
    quit = true;
    room_cv.notify_all();
  };
  auto should_stop = [&] {
    std::lock_guard<std::mutex> lock(m);
    if (quit) return true;
    if (options.stop && options.stop()) {
      stopped = true;
      end_search();
    } else if (options.time_budget && clock::now() - t0 >= *options.time_budget) {
      end_search();
    }
    return quit;
  };
  auto run_index = [&](std::size_t index) {
    const std::uint64_t k = index;
    const std::optional<std::uint64_t> seed = options.seeds.at(k);
    if (!seed) return;  // past the end of an unbounded range's shard (it does not happen before 2^64)
    std::shared_ptr<const seed_plan> plan;
    {
      std::unique_lock<std::mutex> lock(m);
      room_cv.wait(lock, [&] { return quit || k < handed + window; });
      if (quit) return;  // index k is not run: the outcomes from it on are dropped, keeping a prefix
      if (lag != 0) {
        const auto it = plans.find(k);
        ADMIT_ASSERT(it != plans.end(), "a seed inside the lag has its plan");
        plan = std::move(it->second);
        plans.erase(it);
      }
    }
    seed_outcome o = lag != 0 ? run_plan(base, std::move(plan), options.mode) : explore_one(base, *seed, options.mode);
    std::unique_lock<std::mutex> lock(m);
    ++done;
    const bool violation = o.any_violation() || o.error;
    if (violation) ++done_violating;
    if (o.any_counterexample()) ++done_counterexamples;
    if (violation && !first_violation_s) first_violation_s = std::chrono::duration<double>(clock::now() - t0).count();
    if (quit) return;
    finished.emplace(k, std::move(o));
    // Hand on every outcome whose earlier seeds are all done, in order.
    while (!quit && !finished.empty() && finished.begin()->first == handed) {
      seed_outcome next = std::move(finished.begin()->second);
      finished.erase(finished.begin());
      ++handed;
      hand_on(std::move(next));
      if (lag != 0) plan_index(handed - 1 + lag);
      if (options.enough && options.enough(s)) {
        s.enough = true;
        end_search();
      }
      room_cv.notify_all();
    }
    if (options.on_progress && clock::now() - last_progress >= options.progress_every) {
      last_progress = clock::now();
      explore_progress p;
      p.done = done;
      p.total = options.seeds.size();
      p.with_violation = done_violating;
      p.counterexamples = done_counterexamples;
      p.elapsed_s = std::chrono::duration<double>(clock::now() - t0).count();
      options.on_progress(p);
    }
  };
  // A seed that throws (an internal failure: a run's own errors are its outcome) ends the search for
  // every thread, including those waiting for the window; parallel_for rethrows it.
  auto task = [&](std::size_t index) {
    try {
      run_index(index);
    } catch (...) {
      std::lock_guard<std::mutex> lock(m);
      end_search();
      throw;
    }
  };
  const std::optional<std::uint64_t> size = options.seeds.size();
  const std::size_t n = size ? static_cast<std::size_t>(*size) : SIZE_MAX;
  parallel_for(n, jobs, task, should_stop);

  for (auto& [variant, counter] : orders) {
    s.distinct_orderings[variant] = counter.count();
    s.distinct_orderings_capped = s.distinct_orderings_capped || counter.capped();
  }
  // The buckets of fault kinds the scenario never strikes with count in no denominator.
  world::drop_buckets_never_struck(s.coverage, base);
  for (auto& [variant, e] : s.by_variant) world::drop_buckets_never_struck(e.coverage, base);
  s.stopped = stopped;
  s.wall_s = std::chrono::duration<double>(clock::now() - t0).count();
  s.first_violation_wall_s = first_violation_s;
  return s;
}

explore_summary run_explore(const scenario::scenario& base, const explore_options& options) {
  explore_summary s;
  static_cast<explore_totals&>(s) = run_explore(base, options, [&](seed_outcome&& o) { s.seeds.push_back(std::move(o)); });
  return s;
}

}  // namespace admit::explore
