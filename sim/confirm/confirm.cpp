#include "sim/confirm/confirm.hpp"

#include <algorithm>
#include <cmath>

#include "gate/admit_assert.hpp"
#include "sim/world/fault_draw.hpp"
#include "sim/world/lease_world.hpp"

namespace admit::confirm {

namespace {

using json = nlohmann::ordered_json;

std::int64_t times(std::int64_t v, double scale, std::int64_t floor) {
  if (v <= 0) return v;
  return std::max<std::int64_t>(floor, static_cast<std::int64_t>(std::llround(static_cast<double>(v) * scale)));
}

bool contains(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

// What a result rests on when its run strayed from the intended schedule.
std::string timing_note(const run_result& r) {
  if (!r.late_beyond_margin()) return "";
  std::int64_t late = r.arrival_late_max_real_ns;
  for (const fault_timing& f : r.faults) late = std::max(late, f.latest_real_ns());
  return "; its timing strayed: an arrival or a fault (its start, or its server's return) came " +
         std::to_string(late / 1'000'000) +
         " ms late (real time), beyond the protocol's margin of " + std::to_string(r.margin_real_ns / 1'000'000) +
         " ms (a twentieth of the lease)";
}

json level_json(const level_check& c) {
  json o = json::object();
  o["holds"] = c.holds();
  if (!c.watched) o["watched"] = false;
  o["bound"] = c.bound;
  o["peak"] = c.peak;
  o["peak_at_ns"] = c.peak_at_ns;
  o["observations"] = c.samples;
  if (c.first_at_ns) {
    json f = json::object();
    f["at_ns"] = *c.first_at_ns;
    f["detail"] = c.first_detail;
    o["first_violation"] = std::move(f);
  }
  return o;
}

json liveness_json(const liveness_check& l) {
  json o = json::object();
  o["holds"] = l.holds();
  if (!l.watched) o["watched"] = false;
  o["bound_ns"] = l.bound_ns;
  o["grants"] = l.grants;
  o["refusals"] = l.refusals;
  o["refusals_with_free_capacity"] = l.refusals_free;
  o["refusals_unjudged"] = l.refusals_unjudged;
  o["longest_refused_with_free_capacity_ns"] = l.longest_free_ns;
  if (l.permits_left_unjudged) o["permits_left_unjudged"] = true;
  if (l.first_at_ns) {
    json f = json::object();
    f["at_ns"] = *l.first_at_ns;
    f["rule"] = l.first_rule;
    f["detail"] = l.first_detail;
    o["first_violation"] = std::move(f);
  }
  return o;
}

}  // namespace

gate::lease_client_config scaled(const gate::lease_client_config& cfg, double scale) {
  gate::lease_client_config c = cfg;
  c.lease_ms = times(c.lease_ms, scale, 1);
  c.queue_timeout_ms = times(c.queue_timeout_ms, scale, 1);
  c.acquire_timeout_ns = times(c.acquire_timeout_ns, scale, 1);
  c.renew_every_ns = times(c.renew_every_ns, scale, 1);
  c.backoff.delay_ns = times(c.backoff.delay_ns, scale, 1);
  c.backoff.base_ns = times(c.backoff.base_ns, scale, 1);
  c.backoff.max_ns = times(c.backoff.max_ns, scale, 1);
  // The client policy's own durations in its protocol: WAIT's timeout (a script's literals are not scaled).
  if (c.proto && c.proto->client.acknowledge) {
    auto p = std::make_shared<redis::protocol>(*c.proto);
    p->client.acknowledge->timeout_ms = times(p->client.acknowledge->timeout_ms, scale, 1);
    c.proto = std::move(p);
  }
  return c;
}

confirmation confirm_run(const scenario::scenario& sc, const std::string& name, const simulated& sim,
                         const gate::lease_client_config& cfg, const run_options& opts, int runs) {
  ADMIT_ASSERT(runs >= 1 && runs <= runs_max, "the number of runs is checked by its reader");
  confirmation c;
  c.run = name;
  c.sim = sim;
  if (sim.verdict == "inconclusive") {
    c.verdict = "inconclusive";
    c.why = "the simulated run was inconclusive: there is nothing to confirm";
    return c;
  }
  std::vector<std::string> target;  // the simulated breaks a real run can see
  for (const std::string& b : sim.broken)
    if (watches(sc, b)) target.push_back(b);
  if (sim.verdict == "violation" && target.empty()) {
    c.verdict = "inconclusive";
    const std::string b = sim.broken.empty() ? std::string("no named invariant") : sim.broken.front();
    c.why = "the simulated run broke " + b +
            (b == "liveness" && sc.checks.liveness_horizon_ns
                 ? std::string(", judged at checks.liveness_horizon, which a real run does not make real yet")
                 : std::string(", which a real run does not watch yet (it watches portal_inflight_le_cap, "
                               "gate_inflight_le_cap and liveness)"));
    return c;
  }
  const gate::lease_client_config real_cfg = scaled(cfg, opts.time_scale);
  int judged = 0;
  for (int i = 0; i < runs; ++i) {
    if (opts.interrupted != nullptr && opts.interrupted->load()) break;
    c.real.push_back(run_real(sc, real_cfg, opts));
    const run_result& r = c.real.back();
    if (r.inconclusive) continue;
    ++judged;
    // The breaks of this run that count: of an invariant the simulation broke (or, where it held, any).
    const auto counts = [&](bool broke, const std::string& name) {
      return broke && watches(sc, name) && (sim.verdict != "violation" || contains(target, name));
    };
    const bool portal = counts(!r.portal.holds(), r.portal.name);
    const bool holders = counts(!r.holders.holds(), r.holders.name);
    const bool live = counts(!r.live.holds(), r.live.name);
    if (portal || holders || live) {
      c.verdict = "confirmed";
      const std::string where = " on redis-server " + r.server_version + " in real run " + std::to_string(i + 1) + ": ";
      if (portal || holders) {
        const level_check& l = portal ? r.portal : r.holders;
        c.why = l.name + " broke" + where + "peak " + std::to_string(l.peak) + " against " + std::to_string(l.bound) +
                " at " + std::to_string(l.peak_at_ns / 1'000'000) + " ms" + timing_note(r);
      } else {
        c.why = r.live.name + " broke" + where + r.live.first_detail + timing_note(r);
      }
      c.as_expected = sim.verdict == "violation";
      return c;
    }
  }
  if (judged == 0) {
    c.verdict = "inconclusive";
    c.why = c.real.empty() ? std::string("interrupted before any real run")
                           : "no real run could be judged: " + *c.real.back().inconclusive;
    return c;
  }
  c.verdict = "not_confirmed";
  c.why = "no watched invariant broke in " + std::to_string(judged) + " real run" + (judged == 1 ? "" : "s") +
          (judged < static_cast<int>(c.real.size()) ? " (" + std::to_string(c.real.size() - judged) + " inconclusive)" : "");
  for (const run_result& r : c.real)
    if (!r.inconclusive && r.late_beyond_margin()) {
      c.why += timing_note(r);
      break;
    }
  c.as_expected = sim.verdict == "pass";
  return c;
}

confirmation confirm_counterexample(const scenario::scenario& sc, const std::string& name, const std::string& broken,
                                    const run_options& opts, int runs) {
  confirmation c;
  c.run = name;
  c.sim.verdict = "violation";
  c.sim.broken = {broken};
  c.verdict = "inconclusive";
  if (sc.gates.size() != 1 || sc.gates[0].kind != scenario::gate_kind::lease) {
    c.why = "not made real: /gate: a FIFO gate runs in-process, with nothing to confirm on Redis";
    return c;
  }
  const scenario::scenario with_faults = world::with_drawn_faults(sc, opts.seed);
  const std::optional<gate::lease_client_config> cfg = world::lease_client_config_of(with_faults, name);
  if (!cfg) {
    c.why = "the gate has no run named " + name;
    return c;
  }
  if (const auto no = unsupported(with_faults, *cfg)) {
    c.why = "not made real yet: " + no->first + ": " + no->second;
    return c;
  }
  return confirm_run(with_faults, name, c.sim, *cfg, opts, runs);
}

std::string label(const confirmation& c) {
  if (c.verdict == "confirmed") {
    for (const run_result& r : c.real)
      if (!r.inconclusive && r.broke()) return "confirmed on redis-server " + r.server_version;
    ADMIT_ASSERT(false, "a confirmation rests on a real run that broke");
  }
  if (c.verdict == "not_confirmed") {
    std::size_t judged = 0;
    for (const run_result& r : c.real) judged += r.inconclusive ? 0 : 1;
    return "not confirmed in " + std::to_string(judged) + " real run" + (judged == 1 ? "" : "s");
  }
  return "confirmation inconclusive";
}

json to_json(const run_result& r) {
  json o = json::object();
  if (r.inconclusive) o["inconclusive"] = *r.inconclusive;
  o["redis_server"] = r.server_version;
  json inv = json::object();
  inv[r.portal.name] = level_json(r.portal);
  inv[r.holders.name] = level_json(r.holders);
  inv[r.live.name] = liveness_json(r.live);
  o["invariants"] = std::move(inv);
  json m = json::object();
  m["items"] = r.items;
  m["completed"] = r.completed;
  m["deferred"] = r.deferred;
  m["crashed_workers"] = r.crashed;
  m["aborted"] = r.aborted;
  m["retired_workers"] = r.retired;
  m["requeued"] = r.requeued;
  m["ended_ns"] = r.ended_ns;
  m["stopped_at_break"] = r.stopped_at_break;
  o["metrics"] = std::move(m);
  json t = json::object();
  t["arrival_late_max_real_ns"] = r.arrival_late_max_real_ns;
  t["margin_real_ns"] = r.margin_real_ns;
  t["late_beyond_margin"] = r.late_beyond_margin();
  json faults = json::array();
  for (const fault_timing& f : r.faults) {
    json j = json::object();
    j["kind"] = f.kind;
    if (!f.target.empty()) j["target"] = f.target;
    j["intended_ns"] = f.intended_ns;
    j["achieved_ns"] = f.achieved_ns;
    j["late_real_ns"] = f.late_real_ns;
    if (f.back_intended_ns) {
      j["back_intended_ns"] = *f.back_intended_ns;
      j["back_achieved_ns"] = *f.back_achieved_ns;
      j["back_late_real_ns"] = *f.back_late_real_ns;
    }
    faults.push_back(std::move(j));
  }
  t["faults"] = std::move(faults);
  o["timing"] = std::move(t);
  return o;
}

json to_json(const confirmation& c) {
  json o = json::object();
  json s = json::object();
  s["verdict"] = c.sim.verdict;
  s["broken"] = c.sim.broken;
  o["simulated"] = std::move(s);
  o["verdict"] = c.verdict;
  o["as_expected"] = c.as_expected;
  o["why"] = c.why;
  json runs = json::array();
  for (const run_result& r : c.real) runs.push_back(to_json(r));
  o["real_runs"] = std::move(runs);
  return o;
}

}  // namespace admit::confirm
