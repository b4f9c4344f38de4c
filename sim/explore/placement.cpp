#include "sim/explore/placement.hpp"

#include <algorithm>
#include <mutex>
#include <optional>

#include "gate/admit_assert.hpp"
#include "sim/check/trace_sink.hpp"
#include "sim/explore/one_variant.hpp"
#include "sim/explore/parallel_for.hpp"
#include "sim/world/world.hpp"

namespace admit::explore {

namespace {

// The instants of one run: every trace entry's time but a fault's own, and in a lease world
// each Redis entry's time plus one lease.
class instant_sink final : public check::trace_sink {
 public:
  explicit instant_sink(std::optional<vtime_ns> lease_ns) : lease_ns_(lease_ns) {}
  void begin_run(std::string_view) override {}
  void entry(const check::trace_line& e) noexcept override {
    if (e.source == "fault" || failed_) return;
    try {
      times_.push_back(e.at_ns);
      if (lease_ns_ && e.source == "redis" && e.at_ns <= sim::vtime_max - *lease_ns_) times_.push_back(e.at_ns + *lease_ns_);
    } catch (...) {
      failed_ = true;
    }
  }
  void end_run() override {}
  void lost(std::string_view) noexcept override { failed_ = true; }

  // Sorted and distinct. Throws std::bad_alloc when an entry could not be kept.
  std::vector<vtime_ns> instants() {
    if (failed_) throw std::bad_alloc();
    std::sort(times_.begin(), times_.end());
    times_.erase(std::unique(times_.begin(), times_.end()), times_.end());
    return std::move(times_);
  }

 private:
  std::optional<vtime_ns> lease_ns_;
  std::vector<vtime_ns> times_;
  bool failed_ = false;
};

std::optional<vtime_ns> lease_of(const scenario::scenario& sc) {
  for (const auto& g : sc.gates)
    if (g.kind == scenario::gate_kind::lease) return g.lease.lease_ns;
  return std::nullopt;
}

// The faults of `sc`'s schedule at `at_ns` (the first at_ns.size() of `faults`), in time order.
scenario::scenario with_faults(const scenario::scenario& sc, const std::vector<scenario::fault_spec>& faults,
                               const std::vector<vtime_ns>& at_ns) {
  ADMIT_ASSERT(at_ns.size() <= faults.size(), "no more times than faults");
  scenario::scenario out = sc;
  out.faults.schedule.clear();
  for (std::size_t i = 0; i < at_ns.size(); ++i) {
    scenario::fault_spec f = faults[i];
    f.at_ns = at_ns[i];
    out.faults.schedule.push_back(f);
  }
  std::stable_sort(out.faults.schedule.begin(), out.faults.schedule.end(),
                   [](const scenario::fault_spec& a, const scenario::fault_spec& b) { return a.at_ns < b.at_ns; });
  return out;
}

// Whether fault `f` at `at` heals by the liveness horizon, as the loader requires of a schedule.
bool heals_in_time(const scenario::scenario& sc, const scenario::fault_spec& f, vtime_ns at) {
  const auto lh = sc.checks.liveness_horizon_ns;
  if (!lh) return true;
  if (at > *lh) return false;
  return !f.duration_ns || at + *f.duration_ns <= *lh;
}

}  // namespace

std::string placement_refusal(const scenario::scenario& base) {
  if (base.faults.rates && base.faults.rates->any())
    return "/faults/rates: expected none: --placements places the faults of faults.schedule, each at every instant "
           "the protocol acts; rates draw faults of their own (remove them, or search them with a seed search)";
  if (base.faults.schedule.empty())
    return "/faults/schedule: expected 1 to " + std::to_string(placement_faults_max) +
           " faults to place (their kind, target and length; their \"at\" is what --placements chooses), got none";
  if (base.faults.schedule.size() > placement_faults_max)
    return "/faults/schedule: expected 1 to " + std::to_string(placement_faults_max) + " faults to place, got " +
           std::to_string(base.faults.schedule.size()) +
           " (every placement of each is a run: shrink the scenario first, admitsim explore shrinks what it finds)";
  return "";
}

scenario::scenario placed(const scenario::scenario& base, const std::string& variant, const std::vector<vtime_ns>& at_ns) {
  ADMIT_ASSERT(at_ns.size() == base.faults.schedule.size(), "one time a fault");
  scenario::scenario out = with_faults(one_variant(base, variant), base.faults.schedule, at_ns);
  // One run: the variant's expectation is the file's (a per-variant entry would name runs it no longer has).
  const check::expectation e = scenario::expectation_for(base, variant);
  out.expect = scenario::expect_spec{};
  out.expect.verdict = std::string(e.verdict);
  out.expect.violated.assign(e.violated.begin(), e.violated.end());
  return out;
}

placement_summary enumerate_placements(const scenario::scenario& base, const placement_limits& limits) {
  ADMIT_ASSERT(placement_refusal(base).empty(), "the caller checked the scenario");
  placement_summary sum;
  sum.seed = base.seed;
  sum.limits = limits;
  sum.faults = base.faults.schedule;
  const std::vector<scenario::fault_spec>& faults = sum.faults;
  const std::size_t k = faults.size();
  const std::optional<vtime_ns> lease_ns = lease_of(base);

  struct result {
    std::vector<vtime_ns> instants;  // a partial placement's run: where the next fault goes
    std::optional<run_outcome> outcome;  // a full placement's run
  };
  for (const std::string& variant : variants_of(base)) {
    scenario::scenario sc = one_variant(base, variant);
    sc.faults.schedule.clear();
    variant_placements v;
    v.variant = variant;
    bool cut = false;
    std::vector<std::vector<vtime_ns>> level{{}};  // the placements of the first j faults
    for (std::size_t j = 0; j <= k && !level.empty(); ++j) {
      std::sort(level.begin(), level.end());
      if (v.runs + level.size() > limits.max_runs) {
        level.resize(static_cast<std::size_t>(limits.max_runs - v.runs));
        cut = true;
      }
      const bool leaves = j == k;
      std::vector<result> results(level.size());
      parallel_for(level.size(), std::max(1u, limits.jobs), [&](std::size_t i) {
        const scenario::scenario run = with_faults(sc, faults, level[i]);
        if (leaves) {
          std::vector<world::run_record> recs = world::run_all(run, run.seed, verdict_only());
          ADMIT_ASSERT(recs.size() == 1, "one variant, one run");
          results[i].outcome = classify_run(base, recs.front());
        } else {
          instant_sink sink(lease_ns);
          world::run_all(run, run.seed, verdict_only(), &sink);
          results[i].instants = sink.instants();
        }
      });
      v.runs += level.size();
      if (j == 0 && !leaves) v.instants_fault_free = results.front().instants.size();
      std::vector<std::vector<vtime_ns>> next;
      for (std::size_t i = 0; i < level.size(); ++i) {
        result& r = results[i];
        if (leaves) {
          run_outcome& o = *r.outcome;
          ++v.placements;
          if (o.inconclusive && !o.met) ++v.inconclusive;
          if (o.broken.empty()) continue;
          ++v.violating;
          if (o.counterexample) ++v.counterexamples;
          if (v.findings.size() < limits.findings_kept) v.findings.push_back(placement_finding{level[i], std::move(o)});
          continue;
        }
        const vtime_ns after = level[i].empty() ? 0 : level[i].back();
        std::vector<vtime_ns> candidates;
        for (const vtime_ns t : r.instants)
          for (const vtime_ns c : {t - 1, t + 1})
            if (c >= after && (candidates.empty() || candidates.back() < c)) candidates.push_back(c);
        for (const vtime_ns c : candidates) {
          if (!heals_in_time(sc, faults[j], c)) {
            ++v.skipped_past_horizon;
            continue;
          }
          // Never more placements queued than the runs left: memory stays within the bound too.
          if (v.runs + next.size() >= limits.max_runs) {
            cut = true;
            break;
          }
          std::vector<vtime_ns> child = level[i];
          child.push_back(c);
          next.push_back(std::move(child));
        }
      }
      level = std::move(next);
    }
    v.complete = !cut;
    ADMIT_ASSERT(v.violating <= v.placements && v.counterexamples <= v.violating, "the counts nest");
    sum.variants.push_back(std::move(v));
  }
  return sum;
}

}  // namespace admit::explore
