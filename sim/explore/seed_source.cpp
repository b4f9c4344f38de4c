#include "sim/explore/seed_source.hpp"

#include <algorithm>
#include <array>
#include <bit>

#include "gate/admit_assert.hpp"
#include "sim/explore/explorer.hpp"
#include "sim/kernel/prng.hpp"
#include "sim/world/fault_draw.hpp"
#include "sim/world/lease/lease_coverage.hpp"

namespace admit::explore {

const char* to_string(search_strategy s) {
  switch (s) {
    case search_strategy::plain: return "plain";
    case search_strategy::swarm: return "swarm";
    case search_strategy::guided: return "guided";
  }
  ADMIT_ASSERT(false, "a strategy of the enum");
  return "";
}

std::optional<search_strategy> parse_search_strategy(std::string_view text) {
  for (const search_strategy s : {search_strategy::plain, search_strategy::swarm, search_strategy::guided})
    if (text == to_string(s)) return s;
  return std::nullopt;
}

namespace {

using scenario::fault_kind;
using scenario::fault_spec;
using scenario::node_ref;
using sim::vtime_ns;

constexpr vtime_ns day_ns = 24 * 3600 * sim::sec;

// The scenario's rates at their bounds, drawn with the seed: `admitsim run --seed`.
class plain_source final : public seed_source {
 public:
  explicit plain_source(const scenario::scenario& base) : base_(base) {}
  std::uint64_t lag() const override { return 0; }
  seed_plan plan(std::uint64_t seed) override {
    seed_plan p;
    p.seed = seed;
    p.run_seed = seed;
    swarm_config at_bounds;
    if (base_.faults.rates && base_.faults.rates->any()) {
      at_bounds.bounded = true;
      at_bounds.rates = *base_.faults.rates;
    }
    p.e = explored_with(base_, at_bounds, world::nodes_of(base_), seed);
    return p;
  }
  void learn(const seed_outcome&) override {}

 private:
  const scenario::scenario& base_;
};

seed_plan swarm_plan(const scenario::scenario& base, std::uint64_t seed) {
  seed_plan p;
  p.seed = seed;
  p.run_seed = seed;
  p.e = explore_seed(base, seed);
  return p;
}

class swarm_source final : public seed_source {
 public:
  explicit swarm_source(const scenario::scenario& base) : base_(base) {}
  std::uint64_t lag() const override { return 0; }
  seed_plan plan(std::uint64_t seed) override { return swarm_plan(base_, seed); }
  void learn(const seed_outcome&) override {}

 private:
  const scenario::scenario& base_;
};

// A magnitude in [lo, hi] whose binary exponent is uniform, then uniform within its octave: as likely
// a microsecond as a second, so a mutant explores fine and coarse moves alike.
vtime_ns log_uniform(sim::prng& rng, vtime_ns lo, vtime_ns hi) {
  ADMIT_ASSERT(lo >= 1 && lo <= hi, "a non-empty positive range");
  const int a = std::bit_width(static_cast<std::uint64_t>(lo)) - 1;
  const int b = std::bit_width(static_cast<std::uint64_t>(hi)) - 1;
  const int e = a + static_cast<int>(rng.uniform_u64(static_cast<std::uint64_t>(b - a + 1)));
  const vtime_ns octave_lo = std::max<vtime_ns>(lo, vtime_ns{1} << e);
  const vtime_ns octave_hi = std::min<vtime_ns>(hi, e >= 62 ? hi : (vtime_ns{2} << e) - 1);
  return rng.uniform_i64(octave_lo, octave_hi);
}

// The corpus's weights are integers (no floating point reaches a plan).
constexpr std::uint64_t rare_unit = 1'000'000;
constexpr std::uint64_t near_miss_factor = 4;

class guided_source final : public seed_source {
 public:
  explicit guided_source(const scenario::scenario& base)
      : base_(base), nodes_(world::nodes_of(base)), bounds_(base.faults.rates.value_or(scenario::fault_rates{})) {
    for (const char* n : world::lease::near_miss_names) near_misses_.emplace_back(n);
    for (std::size_t i = 0; i < scenario::fault_rate_count; ++i) arms_.emplace_back(5);
    for (int i = 0; i < 3; ++i) arms_.emplace_back(4);
  }

  std::uint64_t lag() const override { return guided_lag; }

  seed_plan plan(std::uint64_t seed) override {
    sim::prng rng = sim::substream(seed, "explore/guided");
    const bool fresh = rng.uniform_u64(2) == 0;
    if (!bounds_.any()) return swarm_plan(base_, seed);  // nothing to draw: every seed is the swarm's
    if (fresh || corpus_.empty()) return tuned_plan(rng, seed);
    entry& parent = pick(rng);
    ++parent.picked;
    seed_plan p;
    p.seed = seed;
    p.run_seed = rng.uniform_u64(8) == 0 ? seed : parent.run_seed;
    std::vector<fault_spec> drawn = parent.drawn;
    std::string how;
    const std::uint64_t ops = 1 + rng.uniform_u64(3);
    for (std::uint64_t i = 0; i < ops; ++i) how += (i == 0 ? "" : ", ") + mutate(rng, drawn, parent.drawn.size());
    std::stable_sort(drawn.begin(), drawn.end(), [](const fault_spec& a, const fault_spec& b) { return a.at_ns < b.at_ns; });
    p.e.swarm = parent.swarm;
    p.e.sc = base_;
    p.e.sc.seed = p.run_seed;
    p.e.sc.faults.rates.reset();
    p.e.faults_from_file = base_.faults.schedule.size();
    p.e.faults_drawn = drawn.size();
    world::merge_faults(p.e.sc.faults.schedule, drawn);
    p.e.drawn = std::move(drawn);
    p.origin = "mutant of seed " + std::to_string(parent.seed) +
               (p.run_seed != parent.run_seed ? " with this seed's workload" : "") + ": " + how;
    ADMIT_ASSERT(p.e.drawn.size() <= guided_faults_max, "a mutant keeps within the fault cap");
    return p;
  }

  void learn(const seed_outcome& o) override {
    ADMIT_ASSERT(o.plan != nullptr, "a guided seed's outcome carries its plan");
    const std::vector<std::uint8_t>& arms = o.plan->arms;
    ADMIT_ASSERT(arms.empty() || arms.size() == arms_.size(), "a tuned plan chose every parameter");
    // A tuned draw whose seed broke an invariant scores as much as one that hit a bucket never hit.
    if (!arms.empty() && !o.error && o.any_violation())
      for (std::size_t i = 0; i < arms.size(); ++i) arms_[i].add(arms[i], 2 * rare_unit);
    // Only a judged seed that broke nothing teaches: a break is already a finding, and a cut run
    // covered what it did not reach.
    if (o.error || o.any_violation()) return;
    for (const run_outcome& r : o.runs)
      if (r.inconclusive) return;
    std::map<std::string, bool> seen;  // the buckets this seed hit, and whether each is a near miss
    for (const run_outcome& r : o.runs)
      for (const auto& [name, count] : r.coverage)
        if (count > 0) seen[name] = is_near_miss(name);
    std::uint64_t weight = 0;
    std::uint64_t near_weight = 0;  // the near misses' part: what the tuned parameters are scored by
    bool novel = false, near = false;
    for (const auto& [name, miss] : seen) {
      std::uint64_t& h = hits_[name];
      ADMIT_ASSERT(h <= clean_, "a bucket is hit by at most every clean seed");
      novel = novel || h == 0;
      if (miss) {
        // A near miss scores by how few seeds reach it (the portal at its cap, common under load, by
        // little; a permit lost under its holder, the first half of most breaks, by much), and does
        // not fade as it recurs: near misses are where a search should stay.
        near = near || 2 * h <= clean_;
        const std::uint64_t w = near_miss_factor * rare_unit * (clean_ + 1 - h) / (clean_ + 1);
        weight += w;
        near_weight += w;
      } else {
        weight += rare_unit / (1 + h);
      }
      ++h;
    }
    ++clean_;
    for (std::size_t i = 0; i < arms.size(); ++i) arms_[i].add(arms[i], near_weight);
    // An entry is something to mutate: drawn faults, none cut by the draw's limit.
    if (!(novel || near) || o.plan->e.drawn.empty() || !o.plan->e.sc.faults.draw_limited.empty()) return;
    entry e;
    e.seed = o.seed;
    e.run_seed = o.plan->run_seed;
    e.drawn = o.plan->e.drawn;
    e.swarm = o.plan->e.swarm;
    e.weight = weight;
    if (corpus_.size() < guided_corpus_max) {
      corpus_.push_back(std::move(e));
      return;
    }
    // Full: the new entry replaces the lightest (the first of equals) if it is heavier.
    auto lightest = std::min_element(corpus_.begin(), corpus_.end(),
                                     [](const entry& a, const entry& b) { return a.weight < b.weight; });
    if (lightest->weight < e.weight) *lightest = std::move(e);
  }

 private:
  struct entry {
    std::uint64_t seed = 0;
    std::uint64_t run_seed = 0;
    std::vector<fault_spec> drawn;
    swarm_config swarm;
    std::uint64_t weight = 0;  // its buckets' rarity when it was learned
    std::uint64_t picked = 0;  // how many mutants came from it: its pull falls as 1 / (1 + picked)
  };

  // One parameter of the tuned swarm: its choices, how often each was drawn and what its seeds scored.
  struct arm_set {
    std::vector<std::uint64_t> pulls, score;
    explicit arm_set(std::size_t n) : pulls(n, 0), score(n, 0) {}
    void add(std::uint8_t a, std::uint64_t s) {
      ADMIT_ASSERT(a < pulls.size(), "a choice of the parameter");
      ++pulls[a];
      score[a] += s;
    }
    // Half the time uniform; else in proportion to the mean score (a choice never drawn: the best mean).
    std::uint8_t draw(sim::prng& rng) const {
      const auto n = static_cast<std::uint64_t>(pulls.size());
      if (rng.uniform_u64(2) == 0) return static_cast<std::uint8_t>(rng.uniform_u64(n));
      std::vector<std::uint64_t> mean(pulls.size(), 0);
      std::uint64_t best = 1;
      for (std::size_t i = 0; i < pulls.size(); ++i)
        if (pulls[i] != 0) best = std::max(best, mean[i] = score[i] / pulls[i] + 1);
      std::uint64_t total = 0;
      for (std::size_t i = 0; i < pulls.size(); ++i) total += pulls[i] == 0 ? best : mean[i];
      std::uint64_t r = rng.uniform_u64(total);
      for (std::size_t i = 0; i < pulls.size(); ++i) {
        const std::uint64_t w = pulls[i] == 0 ? best : mean[i];
        if (r < w) return static_cast<std::uint8_t>(i);
        r -= w;
      }
      ADMIT_ASSERT(false, "the draw falls inside the total");
      return 0;
    }
  };

  // A value uniform in quarter `q` (0..3) of [lo, hi].
  static std::int64_t in_quarter(sim::prng& rng, std::int64_t lo, std::int64_t hi, std::uint8_t q) {
    ADMIT_ASSERT(lo <= hi && q < 4, "a range and a quarter of it");
    const std::int64_t span = hi - lo + 1;
    const std::int64_t a = lo + span * q / 4;
    const std::int64_t b = std::max(a, lo + span * (q + 1) / 4 - 1);
    return rng.uniform_i64(a, b);
  }

  // The swarm's parameters by the arms, then its faults by the world's rule.
  seed_plan tuned_plan(sim::prng& rng, std::uint64_t seed) {
    seed_plan p;
    p.seed = seed;
    p.run_seed = seed;
    p.origin = "tuned swarm";
    swarm_config sw;
    sw.bounded = true;
    std::size_t a = 0;
    for (const fault_kind k : scenario::fault_rates_file_order) {
      const std::uint8_t arm = arms_[a++].draw(rng);  // 0: off, 1..4: a quarter of [1, bound]
      p.arms.push_back(arm);
      const std::int64_t bound = bounds_.per_hour_of(k);
      sw.rates.per_hour_of(k) = arm == 0 || bound <= 0 ? 0 : in_quarter(rng, 1, bound, static_cast<std::uint8_t>(arm - 1));
    }
    for (vtime_ns* length : {&sw.rates.mean_duration_ns, &sw.rates.max_step_ns, &sw.rates.max_replication_lag_ns}) {
      const vtime_ns bound = std::max<vtime_ns>(length == &sw.rates.mean_duration_ns ? bounds_.mean_duration_ns
                                                : length == &sw.rates.max_step_ns     ? bounds_.max_step_ns
                                                                                      : bounds_.max_replication_lag_ns,
                                                1);
      const std::uint8_t arm = arms_[a++].draw(rng);
      p.arms.push_back(arm);
      *length = in_quarter(rng, std::max<vtime_ns>(bound / 10, 1), bound, arm);
    }
    ADMIT_ASSERT(a == arms_.size(), "one draw a parameter");
    sw.rates.until_ns = bounds_.until_ns;
    sw.rates.restart_persistence = bounds_.restart_persistence;
    p.e = explored_with(base_, sw, nodes_, seed);
    return p;
  }

  bool is_near_miss(const std::string& name) const {
    return std::find(near_misses_.begin(), near_misses_.end(), name) != near_misses_.end();
  }

  entry& pick(sim::prng& rng) {
    ADMIT_ASSERT(!corpus_.empty(), "a mutant needs an entry");
    std::uint64_t total = 0;
    for (const entry& e : corpus_) total += e.weight / (1 + e.picked) + 1;
    std::uint64_t r = rng.uniform_u64(total);
    for (entry& e : corpus_) {
      const std::uint64_t w = e.weight / (1 + e.picked) + 1;
      if (r < w) return e;
      r -= w;
    }
    ADMIT_ASSERT(false, "the draw falls inside the total");
    return corpus_.front();
  }

  // A length as the draw gives one: 1ns .. 24h, ending by the liveness horizon; nullopt when the
  // fault strikes at or after the horizon (the draw never places one there).
  std::optional<vtime_ns> fit_length(vtime_ns at_ns, vtime_ns len) const {
    len = std::clamp<vtime_ns>(len, 1, day_ns);
    if (nodes_.heal_by_ns) {
      if (*nodes_.heal_by_ns - at_ns < 1) return std::nullopt;
      len = std::min(len, *nodes_.heal_by_ns - at_ns);
    }
    return len;
  }

  bool lasts(const fault_spec& f) const {
    return scenario::fault_row(f.kind).duration != scenario::fault_duration::none && f.duration_ns.has_value();
  }

  // Moves `f` to `at_ns`, its length refitted; false (and `f` unchanged) when it cannot strike there.
  bool move_to(fault_spec& f, vtime_ns at_ns) const {
    at_ns = std::clamp<vtime_ns>(at_ns, 0, std::max<vtime_ns>(bounds_.until_ns - 1, 0));
    if (lasts(f)) {
      const auto len = fit_length(at_ns, *f.duration_ns);
      if (!len) return false;
      f.duration_ns = *len;
    }
    f.at_ns = at_ns;
    return true;
  }

  vtime_ns move_scale() const { return std::max<vtime_ns>(bounds_.mean_duration_ns, sim::ms); }

  // One change to `drawn`, named for the plan's origin.
  std::string mutate(sim::prng& rng, std::vector<fault_spec>& drawn, std::size_t parent_size) {
    // Lengths matter most (a pause or an outage just past a lease): three chances in eight, two of
    // them to lengthen; a move two; an add, a removal, a retarget or a clock step's redraw one each.
    static constexpr std::array<std::uint8_t, 8> ops = {0, 0, 1, 1, 1, 2, 3, 4};
    const std::uint8_t op = ops[rng.uniform_u64(ops.size())];
    ADMIT_ASSERT(!drawn.empty(), "a mutant's entry drew faults (plan() picks no other)");
    const std::size_t i = static_cast<std::size_t>(rng.uniform_u64(drawn.size()));
    fault_spec& f = drawn[i];
    const char* kind = scenario::fault_row(f.kind).name;
    switch (op) {
      case 1:
        if (lasts(f)) {
          // x 1 .. 4 two times in three, else x 1/4 .. 1, in eighths (a length is at most 24h: no overflow).
          const bool longer = rng.uniform_u64(3) != 0;
          const auto eighths = static_cast<vtime_ns>(longer ? 8 + rng.uniform_u64(25) : 2 + rng.uniform_u64(7));
          const vtime_ns scaled = *f.duration_ns * eighths / 8;
          if (const auto len = fit_length(f.at_ns, std::max<vtime_ns>(scaled, 1))) {
            f.duration_ns = *len;
            return std::string(kind) + (longer ? " lengthened" : " shortened");
          }
        }
        break;
      case 2:
        return add(rng, drawn, parent_size);
      case 3:
        if (drawn.size() > 1) {
          drawn.erase(drawn.begin() + static_cast<std::ptrdiff_t>(i));
          return std::string(kind) + " removed";
        }
        break;
      case 4:
        if (f.kind == fault_kind::clock_step) {
          const vtime_ns magnitude = log_uniform(rng, 1, std::max<vtime_ns>(bounds_.max_step_ns, 1));
          f.step_ns = rng.uniform_u64(2) == 0 ? magnitude : -magnitude;
          return "clock_step redrawn";
        }
        if (f.target && f.target->k == node_ref::kind::worker && nodes_.workers > 1) {
          f.target->worker = static_cast<std::int64_t>(rng.uniform_u64(static_cast<std::uint64_t>(nodes_.workers)));
          return std::string(kind) + " retargeted";
        }
        if (f.between && f.between->first.k == node_ref::kind::worker && nodes_.workers > 1) {
          f.between->first.worker = static_cast<std::int64_t>(rng.uniform_u64(static_cast<std::uint64_t>(nodes_.workers)));
          return std::string(kind) + " retargeted";
        }
        break;
      default:
        break;
    }
    // Op 0, and the fallback of an op that does not apply: move the fault a little or a lot.
    const vtime_ns delta = log_uniform(rng, sim::us, move_scale());
    const bool later = rng.uniform_u64(2) == 0;
    if (!move_to(f, later ? f.at_ns + delta : f.at_ns - delta)) return std::string(kind) + " kept";
    return std::string(kind) + " moved";
  }

  // A copy of one of the faults, near it or anywhere before `until` (at most one more than the entry had).
  std::string add(sim::prng& rng, std::vector<fault_spec>& drawn, std::size_t parent_size) {
    if (drawn.empty() || drawn.size() >= guided_faults_max || drawn.size() > parent_size) return "nothing added";
    fault_spec f = drawn[static_cast<std::size_t>(rng.uniform_u64(drawn.size()))];
    const bool near = rng.uniform_u64(2) == 0;
    const vtime_ns at = near ? f.at_ns + log_uniform(rng, sim::us, move_scale())
                             : rng.uniform_i64(0, std::max<vtime_ns>(bounds_.until_ns - 1, 0));
    if (!move_to(f, at)) return "nothing added";
    drawn.push_back(f);
    return std::string(scenario::fault_row(f.kind).name) + " added";
  }

  const scenario::scenario& base_;
  world::fault_nodes nodes_;
  scenario::fault_rates bounds_;
  std::vector<std::string> near_misses_;
  std::map<std::string, std::uint64_t> hits_;  // bucket -> judged clean seeds that hit it
  std::vector<entry> corpus_;
  std::uint64_t clean_ = 0;     // the judged seeds without a violation learned so far
  std::vector<arm_set> arms_;  // per kind in file order, then mean_duration, max_step, max_replication_lag
};

}  // namespace

std::unique_ptr<seed_source> make_seed_source(search_strategy s, const scenario::scenario& base) {
  switch (s) {
    case search_strategy::plain: return std::make_unique<plain_source>(base);
    case search_strategy::swarm: return std::make_unique<swarm_source>(base);
    case search_strategy::guided: return std::make_unique<guided_source>(base);
  }
  ADMIT_ASSERT(false, "a strategy of the enum");
  return nullptr;
}

}  // namespace admit::explore
