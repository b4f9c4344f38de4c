#include "sim/explore/shrink.hpp"

#include <algorithm>
#include <optional>
#include <set>

#include "gate/admit_assert.hpp"
#include "sim/explore/scenario_json.hpp"
#include "sim/kernel/prng.hpp"
#include "sim/scenario/duration.hpp"
#include "sim/scenario/loader.hpp"
#include "sim/world/arrivals.hpp"
#include "sim/world/world.hpp"

namespace admit::explore {

using scenario::fault_spec;
using scenario::request_spec;
using sc_t = scenario::scenario;

std::uint64_t request_count(const sc_t& sc) {
  std::uint64_t n = sc.requests.size();
  for (const auto& a : sc.arrivals) n += static_cast<std::uint64_t>(a.count);
  return n;
}

namespace {

// Zeller and Hildebrandt's ddmin: a 1-minimal subsequence of `items` for which
// `test` holds, given that it holds for `items`. Order is kept.
template <class T, class Test>
std::vector<T> ddmin(std::vector<T> items, Test&& test) {
  std::size_t n = 2;
  while (items.size() >= 2) {
    const std::size_t size = items.size();
    n = std::min(n, size);
    auto begin_of = [&](std::size_t i) { return static_cast<std::ptrdiff_t>(i * size / n); };
    bool reduced = false;
    for (std::size_t i = 0; i < n && !reduced; ++i) {
      std::vector<T> subset(items.begin() + begin_of(i), items.begin() + begin_of(i + 1));
      if (test(subset)) {
        items = std::move(subset);
        n = 2;
        reduced = true;
      }
    }
    // With two chunks each complement is the other chunk, already tried.
    for (std::size_t i = 0; i < n && !reduced && n > 2; ++i) {
      std::vector<T> complement(items.begin(), items.begin() + begin_of(i));
      complement.insert(complement.end(), items.begin() + begin_of(i + 1), items.end());
      if (test(complement)) {
        items = std::move(complement);
        n = std::max<std::size_t>(n - 1, 2);
        reduced = true;
      }
    }
    if (!reduced) {
      if (n >= size) break;
      n = std::min(size, 2 * n);
    }
  }
  return items;
}

class shrinker {
 public:
  shrinker(std::uint64_t seed, const shrink_target& target, const shrink_limits& limits)
      : seed_(seed), target_(target), limits_(limits) {}

  // Whether `c` still breaks the target invariant; remembers where it broke.
  bool breaks(const sc_t& c) {
    if (c.requests.empty() && c.arrivals.empty()) return false;
    if (runs_ >= limits_.max_runs) {
      exhausted_ = true;
      return false;
    }
    ++runs_;
    try {
      for (const auto& rec : world::run_all(c, seed_)) {
        if (rec.variant != target_.variant) continue;
        for (const auto& inv : rec.invariants)
          if (inv.name == target_.invariant && !inv.holds && inv.first) {
            at_ns_ = inv.first->at_ns;
            detail_ = inv.first->detail;
            return true;
          }
      }
    } catch (const std::exception&) {
      // An internal assertion or a combination no world runs: not the same failure.
    }
    return false;
  }

  // Keeps `candidate` in `cur` when it still breaks.
  bool try_keep(sc_t& cur, sc_t candidate) {
    if (!breaks(candidate)) return false;
    cur = std::move(candidate);
    return true;
  }

  // Restores where the kept candidate broke (after a candidate that broke elsewhere was refused).
  void remember(sim::vtime_ns at_ns, std::string detail) {
    at_ns_ = at_ns;
    detail_ = std::move(detail);
  }

  std::size_t runs() const { return runs_; }
  bool exhausted() const { return exhausted_; }
  sim::vtime_ns at_ns() const { return at_ns_; }
  const std::string& detail() const { return detail_; }
  const shrink_target& target() const { return target_; }
  std::uint64_t seed() const { return seed_; }
  const shrink_limits& limits() const { return limits_; }

 private:
  std::uint64_t seed_;
  shrink_target target_;
  shrink_limits limits_;
  std::size_t runs_ = 0;
  bool exhausted_ = false;
  sim::vtime_ns at_ns_ = 0;
  std::string detail_;
};

// Step 1: only the target variant, no cases, the expectation the result must meet.
sc_t focus(const sc_t& sc, std::uint64_t seed, const shrink_target& t) {
  sc_t c = sc;
  c.seed = seed;
  c.cases.clear();
  c.faults.rates.reset();
  std::int64_t cap_total = 0;
  for (auto& g : c.gates) {
    cap_total += g.cap();
    if (g.kind == scenario::gate_kind::lease) (void)scenario::keep_only_run(g.lease, t.variant);
  }
  // The portal's cap defaults to the gates' total: pin it, so dropping a gate keeps it.
  const bool lease = std::any_of(c.gates.begin(), c.gates.end(),
                                 [](const scenario::gate_spec& g) { return g.kind == scenario::gate_kind::lease; });
  if (!c.service.portal_cap) c.service.portal_cap = lease ? c.gates.front().lease.limit : cap_total;
  c.expect = scenario::expect_spec{};
  c.expect.verdict = "violation";
  c.expect.violated = {t.invariant};
  return c;
}

// Step 2: the workload up to `until` (all of it without) as explicit requests.
std::optional<sc_t> materialize(const sc_t& sc, std::uint64_t seed, std::optional<sim::vtime_ns> until,
                                std::uint64_t max) {
  world::arrival_source src(sc, seed);
  // The worlds draw a missing service time from this stream, in arrival order.
  sim::prng service_rng = sim::substream(seed, "service");
  std::set<std::string> ids;
  for (const auto& r : sc.requests) ids.insert(r.id);
  std::vector<request_spec> out;
  while (std::optional<world::arrival> a = src.next()) {
    if (until && a->at_ns > *until) break;
    if (out.size() >= max) return std::nullopt;
    request_spec r;
    if (a->spec != nullptr) {
      r = *a->spec;
    } else {
      const auto& g = sc.arrivals[a->generator];
      std::string id = "a" + std::to_string(a->generator) + "_" + std::to_string(a->seq_in_generator);
      while (ids.count(id) != 0) id += "x";
      ids.insert(id);
      r.id = id;
      r.gate = g.gate;
      r.gate_index = g.gate_index;
      r.at_ns = a->at_ns;
      r.cancel_at_ns = a->cancel_at_ns;
      r.client_timeout_ns = a->client_timeout_ns;
      r.fail = a->fail;
    }
    r.service_ns = a->service_ns ? *a->service_ns : sc.service.service_time.sample(service_rng);
    out.push_back(std::move(r));
  }
  if (out.empty()) return std::nullopt;
  sc_t c = sc;
  c.requests = std::move(out);
  c.arrivals.clear();
  return c;
}

void drop_faults_after(sc_t& c, sim::vtime_ns t) {
  std::erase_if(c.faults.schedule, [&](const fault_spec& f) { return f.at_ns > t; });
}

// Step 2 as a whole: materialize (truncated at the violation when that can be done), else halve generators.
void make_explicit(shrinker& s, sc_t& cur) {
  if (cur.arrivals.empty() && cur.requests.empty()) return;
  const bool at_end = s.target().invariant == "liveness";
  const sim::vtime_ns t = s.at_ns();
  if (!at_end) {
    if (auto m = materialize(cur, s.seed(), t, s.limits().materialize_max)) {
      drop_faults_after(*m, t);
      if (s.try_keep(cur, std::move(*m))) return;
    }
  }
  if (cur.arrivals.empty()) return;  // already explicit
  // Too many (or the truncation did not hold): halve generator counts while it still breaks.
  for (int i = 0; i < 64 && request_count(cur) > s.limits().materialize_max; ++i) {
    sc_t c = cur;
    for (auto& a : c.arrivals) a.count = std::max<std::int64_t>(1, a.count / 2);
    if (request_count(c) == request_count(cur) || !s.try_keep(cur, std::move(c))) break;
  }
  if (auto m = materialize(cur, s.seed(), std::nullopt, s.limits().materialize_max)) s.try_keep(cur, std::move(*m));
}

bool shrink_faults(shrinker& s, sc_t& cur) {
  if (cur.faults.schedule.empty()) return false;
  const std::size_t before = cur.faults.schedule.size();
  {
    sc_t c = cur;
    c.faults.schedule.clear();
    if (s.try_keep(cur, std::move(c))) return true;
  }
  auto kept = ddmin(cur.faults.schedule, [&](const std::vector<fault_spec>& fs) {
    sc_t c = cur;
    c.faults.schedule = fs;
    return s.breaks(c);
  });
  if (kept.size() == before) return false;
  cur.faults.schedule = std::move(kept);
  return true;
}

bool shrink_requests(shrinker& s, sc_t& cur) {
  if (cur.requests.size() < 2) return false;
  const std::size_t before = cur.requests.size();
  auto kept = ddmin(cur.requests, [&](const std::vector<request_spec>& rs) {
    sc_t c = cur;
    c.requests = rs;
    return s.breaks(c);
  });
  if (kept.size() == before) return false;
  cur.requests = std::move(kept);
  return true;
}

std::int64_t highest_named_worker(const sc_t& c) {
  std::int64_t w = -1;
  auto see = [&](const scenario::node_ref& n) {
    if (n.k == scenario::node_ref::kind::worker) w = std::max(w, n.worker);
  };
  for (const auto& f : c.faults.schedule) {
    if (f.target) see(*f.target);
    if (f.between) {
      see(f.between->first);
      see(f.between->second);
    }
  }
  return w;
}

// Renames worker `from` to `to` in every fault (a worker's clock override moves with it).
sc_t renamed_worker(const sc_t& c, std::int64_t from, std::int64_t to) {
  sc_t out = c;
  auto rename = [&](scenario::node_ref& n) {
    if (n.k != scenario::node_ref::kind::worker) return;
    if (n.worker == from) n.worker = to;
    else if (n.worker == to) n.worker = from;
  };
  for (auto& f : out.faults.schedule) {
    if (f.target) rename(*f.target);
    if (f.between) {
      rename(f.between->first);
      rename(f.between->second);
    }
  }
  for (auto& [w, clock] : out.fleet.clocks) {
    if (w == from) w = to;
    else if (w == to) w = from;
  }
  std::sort(out.fleet.clocks.begin(), out.fleet.clocks.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  return out;
}

bool shrink_fleet(shrinker& s, sc_t& cur) {
  bool changed = false;
  // Faults on a high-numbered worker keep the fleet large: try the same faults on a lower one
  // (the workers swap names, so every fault still names one worker per original).
  for (std::int64_t w = highest_named_worker(cur); w > 0; w = std::min(w - 1, highest_named_worker(cur))) {
    for (std::int64_t lower = 0; lower < w; ++lower)
      if (s.try_keep(cur, renamed_worker(cur, w, lower))) {
        changed = true;
        break;
      }
  }
  const std::int64_t lowest = std::max<std::int64_t>(1, highest_named_worker(cur) + 1);
  for (std::int64_t w = lowest; w < cur.fleet.workers; ++w) {
    sc_t c = cur;
    c.fleet.workers = w;
    std::erase_if(c.fleet.clocks, [&](const auto& o) { return o.first >= w; });
    if (s.try_keep(cur, std::move(c))) {
      changed = true;
      break;
    }
  }
  for (std::size_t i = cur.fleet.clocks.size(); i > 0; --i) {
    sc_t c = cur;
    c.fleet.clocks.erase(c.fleet.clocks.begin() + static_cast<std::ptrdiff_t>(i - 1));
    changed = s.try_keep(cur, std::move(c)) || changed;
  }
  return changed;
}

// A smaller gate: a lower limit (lease) or max_active (FIFO), the portal's cap lowered by as much, so the
// portal's margin over the gate stays what it was; and a shorter FIFO queue.
bool shrink_caps(shrinker& s, sc_t& cur) {
  bool changed = false;
  auto lower_cap = [&](std::size_t i, std::int64_t by) {
    sc_t c = cur;
    auto& g = c.gates[i];
    if (g.kind == scenario::gate_kind::lease)
      g.lease.limit -= by;
    else
      g.fifo.max_active -= by;
    if (c.service.portal_cap) c.service.portal_cap = std::max<std::int64_t>(1, *c.service.portal_cap - by);
    return c;
  };
  for (std::size_t i = 0; i < cur.gates.size(); ++i) {
    // Halve the cap while that holds, then take one off at a time.
    for (int step = 0; step < 64 && cur.gates[i].cap() > 1; ++step) {
      const std::int64_t cap = cur.gates[i].cap();
      if (s.try_keep(cur, lower_cap(i, cap / 2))) {
        changed = true;
        continue;
      }
      if (cap / 2 == 1 || !s.try_keep(cur, lower_cap(i, 1))) break;
      changed = true;
    }
    for (int step = 0; step < 64 && cur.gates[i].kind == scenario::gate_kind::fifo &&
                       cur.gates[i].fifo.max_waiting > 0;
         ++step) {
      sc_t c = cur;
      c.gates[i].fifo.max_waiting /= 2;
      if (!s.try_keep(cur, std::move(c))) break;
      changed = true;
    }
  }
  return changed;
}

bool shorten_faults(shrinker& s, sc_t& cur) {
  bool changed = false;
  for (std::size_t i = 0; i < cur.faults.schedule.size(); ++i) {
    // A kind that lasts shrinks its duration (down to 0 where its row allows a
    // downtime of 0, else 1ns); an instant one with a step halves the step.
    const scenario::fault_kind_info& row = scenario::fault_row(cur.faults.schedule[i].kind);
    const bool zero_ok = row.duration == scenario::fault_duration::downtime;
    const bool halve_step = row.duration == scenario::fault_duration::none && (row.params & scenario::param_step) != 0;
    for (int step = 0; step < 64; ++step) {
      const fault_spec& f = cur.faults.schedule[i];
      sc_t c = cur;
      fault_spec& g = c.faults.schedule[i];
      if (halve_step) {
        if (f.step_ns == 1 || f.step_ns == -1) break;
        g.step_ns = f.step_ns / 2;
      } else {
        if (!f.duration_ns || *f.duration_ns == 0) break;
        const sim::vtime_ns d = *f.duration_ns / 2;
        if (d < 1 && !zero_ok) break;
        g.duration_ns = d;
      }
      if (!s.try_keep(cur, std::move(c))) break;
      changed = true;
    }
  }
  return changed;
}

bool simplify_requests(shrinker& s, sc_t& cur) {
  bool changed = false;
  for (std::size_t i = 0; i < cur.requests.size(); ++i) {
    if (cur.requests[i].cancel_at_ns) {
      sc_t c = cur;
      c.requests[i].cancel_at_ns.reset();
      changed = s.try_keep(cur, std::move(c)) || changed;
    }
    if (cur.requests[i].client_timeout_ns) {
      sc_t c = cur;
      c.requests[i].client_timeout_ns.reset();
      changed = s.try_keep(cur, std::move(c)) || changed;
    }
    if (cur.requests[i].fail != scenario::failure::none) {
      sc_t c = cur;
      c.requests[i].fail = scenario::failure::none;
      changed = s.try_keep(cur, std::move(c)) || changed;
    }
  }
  return changed;
}

bool drop_unused_gates(shrinker& s, sc_t& cur) {
  if (cur.gates.size() < 2) return false;
  std::set<std::string> used;
  for (const auto& r : cur.requests) used.insert(r.gate);
  for (const auto& a : cur.arrivals) used.insert(a.gate);
  if (used.size() == cur.gates.size()) return false;
  sc_t c = cur;
  std::erase_if(c.gates, [&](const scenario::gate_spec& g) { return used.count(g.name) == 0; });
  auto index_of = [&](const std::string& name) {
    for (std::size_t i = 0; i < c.gates.size(); ++i)
      if (c.gates[i].name == name) return i;
    return std::size_t{0};
  };
  for (auto& r : c.requests) r.gate_index = index_of(r.gate);
  for (auto& a : c.arrivals) a.gate_index = index_of(a.gate);
  return s.try_keep(cur, std::move(c));
}

// Step 6: the story moved to start near zero. A counterexample drawn late in a run (its first arrival
// at 3h) is as hard to read as it is to replay by hand; every absolute time of the scenario moves
// earlier by one whole number of seconds, so that the first event lands between 1s and 2s.
//
// What moves: explicit arrivals and cancellations, the generators' start and deadline, the faults'
// instants, the snapshots the cases read, checks.liveness_horizon and checks.horizon. What does
// not: every duration (service, timeouts, fault lengths, steps, backoff, leases), which is relative.
// Two things read absolute time and are handled:
//  * a worker's wall clock drifts with virtual time (clock_spec: t + offset + t * drift_ppm / 1e6),
//    so a drifting worker's offset takes the drift it had gathered by then. The shift is a whole
//    number of milliseconds, for which the world's drift arithmetic (fleet.hpp, worker_clock) splits
//    exactly: the clock reads the same, less the shift, at every shifted instant;
//  * the Redis server's AOF keeps what was written before the last whole second, and the lease
//    world's clocks start at a whole second of the epoch: a shift of whole seconds keeps every
//    instant at the same place within its second (and millisecond, which the scripts' times round to).
// Faults drawn from rates would be drawn again from zero; focus drops the rates, and a scenario that
// still has them is not moved. The move is kept only when the moved scenario breaks the same
// invariant at the same instant less the shift (the shrinker runs it, as every step's candidate).
constexpr sim::vtime_ns rebase_lead_ns = sim::sec;  // the first event lands this long after zero, or up to a second more

std::optional<sim::vtime_ns> first_event_ns(const sc_t& c) {
  std::optional<sim::vtime_ns> first;
  auto see = [&](sim::vtime_ns t) { first = first ? std::min(*first, t) : t; };
  for (const auto& r : c.requests) see(r.at_ns);
  for (const auto& a : c.arrivals) see(a.start_ns);
  for (const auto& f : c.faults.schedule) see(f.at_ns);
  return first;
}

// How far `c` can move earlier: a whole number of seconds, leaving the first event at least
// rebase_lead_ns after zero (0: it cannot, or need not, move).
sim::vtime_ns rebase_shift_ns(const sc_t& c) {
  if (c.faults.rates && c.faults.rates->any()) return 0;
  const std::optional<sim::vtime_ns> first = first_event_ns(c);
  if (!first || *first < rebase_lead_ns + sim::sec) return 0;
  return (*first - rebase_lead_ns) / sim::sec * sim::sec;
}

bool shift_observation(scenario::observation& o, sim::vtime_ns by) {
  if (o.k == scenario::observation::kind::snapshot) {
    if (o.at_ns < by) return false;
    o.at_ns -= by;
  }
  for (auto& [name, child] : o.children)
    if (!shift_observation(child, by)) return false;
  return true;
}

// The drift a clock gathers over `by` (a whole number of milliseconds), as the world computes it.
sim::vtime_ns drift_over(const scenario::clock_spec& c, sim::vtime_ns by) { return by / 1'000'000 * c.drift_ppm; }

// `c` with every absolute time `by` earlier (by: rebase_shift_ns), or nothing when some time or a
// compensated clock offset would leave its range.
std::optional<sc_t> rebased(const sc_t& c, sim::vtime_ns by) {
  ADMIT_ASSERT(by > 0 && by % sim::sec == 0, "a rebase moves by a whole number of seconds");
  sc_t out = c;
  for (auto& r : out.requests) {
    ADMIT_ASSERT(r.at_ns >= by, "no event before the shift");
    r.at_ns -= by;
    if (r.cancel_at_ns) *r.cancel_at_ns = std::max<sim::vtime_ns>(0, *r.cancel_at_ns - by);
  }
  for (auto& a : out.arrivals) {
    a.start_ns -= by;
    if (a.kind == scenario::arrival_kind::deadline_surge) a.deadline_ns -= by;
  }
  for (auto& f : out.faults.schedule) f.at_ns -= by;
  for (auto& k : out.cases)
    if (!shift_observation(k.what, by)) return std::nullopt;
  if (out.checks.horizon_ns - by < 1) return std::nullopt;
  out.checks.horizon_ns -= by;
  if (out.checks.liveness_horizon_ns) {
    if (*out.checks.liveness_horizon_ns - by < 1) return std::nullopt;
    *out.checks.liveness_horizon_ns -= by;
  }
  auto compensate = [&](scenario::clock_spec& clock) {
    clock.offset_ns += drift_over(clock, by);
    return clock.offset_ns >= -scenario::clock_offset_ns_max && clock.offset_ns <= scenario::clock_offset_ns_max;
  };
  if (!compensate(out.fleet.clock)) return std::nullopt;
  for (auto& [w, clock] : out.fleet.clocks)
    if (!compensate(clock)) return std::nullopt;
  return out;
}

// Step 6 as a whole: keeps the move when the same violation shows at the moved instant.
sim::vtime_ns rebase(shrinker& s, sc_t& cur) {
  const sim::vtime_ns by = rebase_shift_ns(cur);
  if (by == 0) return 0;
  std::optional<sc_t> moved = rebased(cur, by);
  if (!moved) return 0;
  const sim::vtime_ns was_at = s.at_ns();
  const std::string was_detail = s.detail();
  if (!s.breaks(*moved) || s.at_ns() != was_at - by) {
    // Not the same story: the shrinker remembers the unmoved violation again.
    s.remember(was_at, was_detail);
    return 0;
  }
  cur = std::move(*moved);
  return by;
}

}  // namespace

shrink_result shrink(const sc_t& sc, std::uint64_t seed, const shrink_target& target, const shrink_limits& limits) {
  shrink_result res;
  res.faults_before = sc.faults.schedule.size();
  res.requests_before = request_count(sc);
  res.workers_before = sc.fleet.workers;
  shrinker s(seed, target, limits);

  sc_t cur = focus(sc, seed, target);
  res.started = s.breaks(cur);
  if (res.started) {
    make_explicit(s, cur);
    for (int round = 0; round < limits.rounds_max && !s.exhausted(); ++round) {
      bool changed = shrink_faults(s, cur);
      changed = shrink_caps(s, cur) || changed;
      changed = shrink_requests(s, cur) || changed;
      changed = shrink_fleet(s, cur) || changed;
      changed = shorten_faults(s, cur) || changed;
      changed = simplify_requests(s, cur) || changed;
      changed = drop_unused_gates(s, cur) || changed;
      if (!changed) break;
    }
    res.rebased_by_ns = rebase(s, cur);
  }
  cur.description = "Shrunk by admitsim explore from " + sc.name + " with seed " + std::to_string(seed) + ": breaks " +
                    target.invariant + (target.variant.empty() ? "" : " under the " + target.variant + " variant") +
                    "; faults " + std::to_string(res.faults_before) + " -> " +
                    std::to_string(cur.faults.schedule.size()) + ", requests " + std::to_string(res.requests_before) +
                    " -> " + std::to_string(request_count(cur)) + ", workers " + std::to_string(res.workers_before) +
                    " -> " + std::to_string(cur.fleet.workers) + ".";
  if (res.rebased_by_ns > 0)
    cur.description += " Every time is " + scenario::format_duration(res.rebased_by_ns) +
                       " earlier than in the explored run (the first event at " +
                       scenario::format_duration(first_event_ns(cur).value_or(0)) + ").";

  // The file as written must break it on its own.
  res.runs = s.runs();
  res.budget_exhausted = s.exhausted();
  try {
    const sc_t loaded = scenario::load_scenario_text(render_scenario(cur));
    shrinker verify(seed, target, shrink_limits{});
    res.reproduced = verify.breaks(loaded);
    res.violation_at_ns = verify.at_ns();
    res.detail = verify.detail();
  } catch (const std::exception&) {
    res.reproduced = false;
  }
  res.faults_after = cur.faults.schedule.size();
  res.requests_after = request_count(cur);
  res.workers_after = cur.fleet.workers;
  res.minimal = std::move(cur);
  return res;
}

}  // namespace admit::explore
