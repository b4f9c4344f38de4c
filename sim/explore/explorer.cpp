#include "sim/explore/explorer.hpp"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <mutex>
#include <system_error>
#include <thread>

#include "gate/admit_assert.hpp"
#include "reports/report.hpp"
#include "sim/kernel/prng.hpp"
#include "sim/kernel/scheduler.hpp"
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
  seed_outcome out;
  out.seed = seed;
  // ties_only: the scenario's own run (its seed, its rates drawn with it); only the order varies.
  explored_scenario e;
  if (mode.ties_only) {
    e.sc = base;
    e.faults_from_file = base.faults.schedule.size();
  } else {
    e = explore_seed(base, seed);
  }
  out.swarm = e.swarm;
  out.faults_from_file = e.faults_from_file;
  out.faults_drawn = e.faults_drawn;
  std::vector<world::run_record> recs;
  try {
    std::optional<sim::tie_perturbation> ties;
    if (mode.perturb_ties || mode.ties_only) ties.emplace(tie_seed(seed));
    recs = world::run_all(mode.run_to_end ? e.sc : for_search(e.sc), mode.ties_only ? base.seed : seed, verdict_only(),
                          nullptr, mode.own);
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
  const std::uint64_t window = reorder_window_per_job * jobs;

  std::atomic<std::uint64_t> next{0};
  std::atomic<std::uint64_t> done{0};
  std::atomic<std::uint64_t> with_violation{0};
  std::atomic<std::uint64_t> counterexamples{0};
  std::atomic<bool> quit{false};  // no thread takes another seed
  std::mutex m;
  std::condition_variable cv;       // the calling thread waits on it: an outcome, a thread ended
  std::condition_variable room_cv;  // threads wait on it for the window to move
  unsigned running = jobs;
  std::uint64_t handed = 0;  // every index below it has been handed on
  std::map<std::uint64_t, seed_outcome> finished;  // by index, waiting for the earlier ones
  std::optional<double> first_violation_s;
  std::vector<std::exception_ptr> failures(jobs);
  bool stopped = false;

  auto should_stop = [&] {
    if (quit) return true;
    if ((options.time_budget && clock::now() - t0 >= *options.time_budget) || (options.stop && options.stop())) {
      std::lock_guard<std::mutex> lock(m);
      stopped = stopped || (options.stop && options.stop());
      quit = true;
      room_cv.notify_all();
      return true;
    }
    return false;
  };
  auto work = [&](unsigned t) {
    try {
      for (;;) {
        if (should_stop()) break;
        const std::uint64_t k = next.fetch_add(1);
        const std::optional<std::uint64_t> seed = options.seeds.at(k);
        if (!seed) break;
        {
          std::unique_lock<std::mutex> lock(m);
          room_cv.wait(lock, [&] { return quit || k < handed + window; });
        }
        if (quit) break;  // index k is not run: the outcomes from it on are dropped, keeping a prefix
        seed_outcome o = explore_one(base, *seed, options.mode);
        const bool violation = o.any_violation() || o.error;
        if (violation) ++with_violation;
        if (o.any_counterexample()) ++counterexamples;
        ++done;
        std::lock_guard<std::mutex> lock(m);
        if (violation && !first_violation_s) first_violation_s = std::chrono::duration<double>(clock::now() - t0).count();
        finished.emplace(k, std::move(o));
        cv.notify_all();
      }
    } catch (...) {
      failures[t] = std::current_exception();
      quit = true;
    }
    std::lock_guard<std::mutex> lock(m);
    --running;
    room_cv.notify_all();
    cv.notify_all();
  };

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
    on_seed(std::move(o));
  };

  std::vector<std::thread> threads;
  threads.reserve(jobs);
  try {
    for (unsigned t = 0; t < jobs; ++t) threads.emplace_back(work, t);
  } catch (const std::system_error&) {
    // Destroying a joinable thread aborts: stop the started ones, join them, then report.
    {
      std::lock_guard<std::mutex> lock(m);
      quit = true;
      running -= jobs - static_cast<unsigned>(threads.size());
      room_cv.notify_all();
    }
    for (auto& th : threads) th.join();
    throw;
  }
  auto last_progress = clock::now();
  {
    std::unique_lock<std::mutex> lock(m);
    for (;;) {
      // Hand on, outside the lock, every outcome whose earlier seeds are all done (none once the
      // search had enough: what ran beside the last seed counted is dropped, keeping a prefix).
      while (!s.enough && !finished.empty() && finished.begin()->first == handed) {
        seed_outcome o = std::move(finished.begin()->second);
        finished.erase(finished.begin());
        ++handed;
        room_cv.notify_all();
        lock.unlock();
        hand_on(std::move(o));
        const bool enough = options.enough && options.enough(s);
        lock.lock();
        if (enough) {
          s.enough = true;
          quit = true;  // no thread takes another seed
          room_cv.notify_all();
        }
      }
      if (running == 0) break;
      // Once the search had enough, an outcome ready to hand on is no reason to wake (it is dropped):
      // waking for it would spin holding the lock the threads need to end.
      cv.wait_for(lock, options.progress_every, [&] {
        return running == 0 || (!s.enough && !finished.empty() && finished.begin()->first == handed);
      });
      if (running != 0 && options.on_progress && clock::now() - last_progress >= options.progress_every) {
        last_progress = clock::now();
        explore_progress p;
        p.done = done;
        p.total = options.seeds.size();
        p.with_violation = with_violation;
        p.counterexamples = counterexamples;
        p.elapsed_s = std::chrono::duration<double>(clock::now() - t0).count();
        lock.unlock();
        options.on_progress(p);
        lock.lock();
      }
    }
  }
  for (auto& th : threads) th.join();
  for (const auto& f : failures)
    if (f) std::rethrow_exception(f);

  for (auto& [variant, counter] : orders) {
    s.distinct_orderings[variant] = counter.count();
    s.distinct_orderings_capped = s.distinct_orderings_capped || counter.capped();
  }
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
