#include "sim/explore/scenario_json.hpp"

#include <algorithm>
#include <cstdlib>

#include "gate/admit_assert.hpp"
#include "sim/scenario/duration.hpp"

namespace admit::explore {

namespace {

using json = nlohmann::ordered_json;
// Declarations, not `using namespace admit::scenario`: in a unity batch (CMakeLists.txt) a using-directive
// here would reach the files after this one, where `scenario` then names both the namespace and its struct.
using admit::scenario::acquire_timeout_policy;
using admit::scenario::arrival_kind;
using admit::scenario::arrival_spec;
using admit::scenario::backoff_spec;
using admit::scenario::clock_spec;
using admit::scenario::failure;
using admit::scenario::fault_duration;
using admit::scenario::fault_kind;
using admit::scenario::fault_kind_info;
using admit::scenario::fault_kind_names;
using admit::scenario::fault_rate_count;
using admit::scenario::fault_rates;
using admit::scenario::fault_rates_file_order;
using admit::scenario::fault_spec;
using admit::scenario::fleet_spec;
using admit::scenario::format_duration;
using admit::scenario::gate_kind;
using admit::scenario::gate_spec;
using admit::scenario::lease_params;
using admit::scenario::observation;
using admit::scenario::param_client_timeout;
using admit::scenario::param_persistence;
using admit::scenario::param_replication_lag;
using admit::scenario::param_step;
using admit::scenario::persistence;
using admit::scenario::protocol_ref;
using admit::scenario::request_spec;
using admit::scenario::service_spec;
using admit::scenario::world_mutation;
using admit::scenario::world_mutation_names;

std::string fraction_of(std::uint64_t v, std::uint64_t unit, int digits, const char* suffix) {
  std::string frac = std::to_string(v % unit);
  frac.insert(0, static_cast<std::size_t>(digits) - frac.size(), '0');
  while (!frac.empty() && frac.back() == '0') frac.pop_back();
  return std::to_string(v / unit) + (frac.empty() ? "" : "." + frac) + suffix;
}

json dist_json(const sim::duration_dist& d) {
  switch (d.kind) {
    case sim::duration_kind::fixed:
      return duration_text(d.value_ns);
    case sim::duration_kind::uniform:
      return json{{"kind", "uniform"}, {"min", duration_text(d.value_ns)}, {"max", duration_text(d.hi_ns)}};
    case sim::duration_kind::exponential:
      return json{{"kind", "exponential"}, {"mean", duration_text(d.value_ns)}};
    case sim::duration_kind::lognormal:
      return json{{"kind", "lognormal"}, {"median", duration_text(d.value_ns)}, {"sigma", d.sigma}};
    case sim::duration_kind::pareto:
      return json{{"kind", "pareto"}, {"scale", duration_text(d.value_ns)}, {"alpha", d.alpha}};
  }
  ADMIT_ASSERT(false, "a distribution of a known kind");
  return nullptr;
}

// Its folder absolute (as the loader made it), so the written scenario runs the same child from anywhere.
json process_json(const scenario::process_spec& ps) {
  json p;
  p["command"] = ps.command;
  p["cwd"] = ps.cwd;
  if (!ps.name.empty()) p["name"] = ps.name;
  p["message_timeout"] = duration_text(ps.message_timeout_ns);
  return p;
}

json gate_json(const gate_spec& g) {
  json j;
  j["name"] = g.name;
  if (g.kind == gate_kind::fifo) {
    j["kind"] = "fifo";
    j["max_active"] = g.fifo.max_active;
    j["max_waiting"] = g.fifo.max_waiting;
    j["wait_deadline"] = duration_text(g.fifo.wait_deadline_ns);
    j["event_log"] = g.fifo.event_log_capacity;
    if (g.fifo.mut != fifo::mutation::none)
      j["mutation"] = std::string(fifo::to_string(g.fifo.mut));
    else if (g.world_mut != world_mutation::none)
      j["mutation"] = world_mutation_names[static_cast<std::size_t>(g.world_mut)];
    if (g.process) j["process"] = process_json(*g.process);
    return j;
  }
  const lease_params& l = g.lease;
  j["kind"] = "lease";
  if (!l.protocols.empty()) {
    // Each protocol as the scenario gave it (its scripts inline), so the written scenario runs the same Lua.
    json ps = json::array();
    for (const protocol_ref& p : l.protocols) ps.push_back(json::parse(p.source_json));
    j["protocol"] = ps.size() == 1 ? ps.front() : std::move(ps);
  }
  if (l.variants.empty()) {
    // Only protocols: their client policy is in them, and the gate-level fields are refused.
  } else if (l.variants.size() == 1) {
    j["variant"] = std::string(redis::to_string(l.variants.front()));
  } else {
    json vs = json::array();
    for (redis::variant v : l.variants) vs.push_back(std::string(redis::to_string(v)));
    j["variant"] = std::move(vs);
  }
  j["limit"] = l.limit;
  j["lease"] = duration_text(l.lease_ns);
  // The loader takes the client fields only where a run reads them.
  if (reads_acquire_timeout(l)) j["acquire_timeout"] = duration_text(l.acquire_timeout_ns);
  json b;
  if (l.backoff.k == backoff_spec::kind::fixed) {
    b["kind"] = "fixed";
    b["delay"] = duration_text(l.backoff.delay_ns);
  } else {
    b["kind"] = "exponential";
    b["base"] = duration_text(l.backoff.base_ns);
    b["max"] = duration_text(l.backoff.max_ns);
    b["jitter"] = l.backoff.jit == backoff_spec::jitter::full ? "full" : "none";
  }
  if (reads_backoff(l)) j["backoff"] = std::move(b);
  if (reads_renew_every(l)) j["renew_every"] = duration_text(l.renew_every_ns);
  if (l.queue_timeout_ns && reads_queue_timeout(l)) j["queue_timeout"] = duration_text(*l.queue_timeout_ns);
  j["key"] = l.key;
  if (l.redis_nodes != 1) j["redis_nodes"] = l.redis_nodes;  // written only when not the default, as files omit it
  if (g.world_mut != world_mutation::none)
    j["mutation"] = world_mutation_names[static_cast<std::size_t>(g.world_mut)];
  if (g.process) j["process"] = process_json(*g.process);
  return j;
}

json clock_fields(json j, const clock_spec& c) {
  j["offset"] = signed_duration_text(c.offset_ns);
  j["drift_ppm"] = c.drift_ppm;
  return j;
}

json fleet_json(const fleet_spec& f) {
  json j;
  j["workers"] = f.workers;
  // Written only when it is not the default, so that a scenario written back before the field existed reads the same.
  if (f.on_acquire_timeout == acquire_timeout_policy::requeue_and_exit) j["on_acquire_timeout"] = "requeue_and_exit";
  j["clock"] = clock_fields(json::object(), f.clock);
  if (!f.clocks.empty()) {
    json cs = json::array();
    for (const auto& [w, c] : f.clocks) cs.push_back(clock_fields(json{{"worker", w}}, c));
    j["clocks"] = std::move(cs);
  }
  return j;
}

// over_cap and on_client_close are written for a lease scenario only: a FIFO scenario's loader refuses them.
json service_json(const service_spec& s, bool lease) {
  json j;
  if (s.portal_cap) j["portal_cap"] = *s.portal_cap;
  j["service_time"] = dist_json(s.service_time);
  if (s.client_timeout_ns) j["client_timeout"] = duration_text(*s.client_timeout_ns);
  if (lease) j["over_cap"] = s.over_cap == service_spec::over_cap_policy::serve ? "serve" : "reject_429";
  // Written only when it is not the default, so that a scenario written back before the field existed reads the same.
  if (lease && s.on_client_close == service_spec::client_close_policy::free_slot) j["on_client_close"] = "free_slot";
  return j;
}

json request_json(const request_spec& r, bool several_gates) {
  json j;
  j["id"] = r.id;
  if (several_gates) j["gate"] = r.gate;
  j["at"] = duration_text(r.at_ns);
  if (r.service_ns) j["service"] = duration_text(*r.service_ns);
  if (r.cancel_at_ns) j["cancel_at"] = duration_text(*r.cancel_at_ns);
  if (r.client_timeout_ns) j["client_timeout"] = duration_text(*r.client_timeout_ns);
  if (r.fail == failure::constructor) j["fail"] = "constructor";
  return j;
}

json arrival_json(const arrival_spec& a, bool several_gates) {
  static const char* const kinds[] = {"constant", "poisson", "ramp", "deadline_surge"};
  json j;
  j["kind"] = kinds[static_cast<std::size_t>(a.kind)];
  j["count"] = a.count;
  j["start"] = duration_text(a.start_ns);
  if (several_gates) j["gate"] = a.gate;
  switch (a.kind) {
    case arrival_kind::constant:
      j["every"] = duration_text(a.every_ns);
      break;
    case arrival_kind::poisson:
      j["mean_gap"] = duration_text(a.mean_gap_ns);
      break;
    case arrival_kind::ramp:
      j["gap_from"] = duration_text(a.gap_from_ns);
      j["gap_to"] = duration_text(a.gap_to_ns);
      break;
    case arrival_kind::deadline_surge:
      j["deadline"] = duration_text(a.deadline_ns);
      j["gap_far"] = duration_text(a.gap_far_ns);
      j["gap_near"] = duration_text(a.gap_near_ns);
      break;
  }
  if (a.service) j["service"] = dist_json(*a.service);
  if (a.client_timeout_ns) j["client_timeout"] = duration_text(*a.client_timeout_ns);
  if (a.cancel_after_ns) j["cancel_after"] = duration_text(*a.cancel_after_ns);
  if (a.fail_ppm != 0) j["fail_ppm"] = a.fail_ppm;
  return j;
}

json fault_json(const fault_spec& f) {
  json j;
  j["at"] = duration_text(f.at_ns);
  j["kind"] = fault_kind_names[static_cast<std::size_t>(f.kind)];
  if (f.between) {
    j["between"] = json::array({to_string(f.between->first), to_string(f.between->second)});
  } else if (f.target) {
    j["target"] = to_string(*f.target);
  }
  // The fields its row takes, then its duration when it has one.
  const fault_kind_info& row = fault_row(f.kind);
  if (row.params & param_persistence)
    j["persistence"] = f.persist == persistence::aof_everysec ? "aof_everysec"
                       : f.persist == persistence::aof_always ? "aof_always"
                                                              : "none";
  if (row.params & param_replication_lag) j["replication_lag"] = duration_text(f.replication_lag_ns);
  if (row.params & param_step) j["step"] = signed_duration_text(f.step_ns);
  if (row.params & param_client_timeout) j["client_timeout"] = duration_text(f.client_timeout_ns);
  if (f.duration_ns && row.duration != fault_duration::none) j["duration"] = duration_text(*f.duration_ns);
  if (f.node != 0) j["node"] = f.node;  // only a fault on Redis has one
  return j;
}

json rates_json(const fault_rates& r) {
  json j;
  // Every rate in file order, the first four always and the later ones
  // (the Redis kinds first) when above 0: a FIFO scenario written back names no Redis.
  for (std::size_t i = 0; i < fault_rate_count; ++i) {
    const fault_kind k = fault_rates_file_order[i];
    if (i < 4 || r.per_hour_of(k) > 0) j[fault_row(k).rate.key] = r.per_hour_of(k);
  }
  j["max_step"] = duration_text(r.max_step_ns);
  j["mean_duration"] = duration_text(r.mean_duration_ns);
  if (r.max_replication_lag_ns != 1 * sim::sec) j["max_replication_lag"] = duration_text(r.max_replication_lag_ns);
  if (r.until_ns > 0) j["until"] = duration_text(r.until_ns);
  if (r.restart_persistence != fault_rates{}.restart_persistence) {
    json ps = json::array();
    for (const persistence p : r.restart_persistence)
      ps.push_back(p == persistence::aof_everysec ? "aof_everysec" : p == persistence::aof_always ? "aof_always" : "none");
    j["restart_persistence"] = std::move(ps);
  }
  return j;
}

json observation_value(const observation& o);

// The fields of one observation (snapshot, response, client_exception, object) into `j`.
void observation_fields(json& j, const observation& o) {
  switch (o.k) {
    case observation::kind::snapshot:
      j["snapshot"] = o.target;
      j["at"] = duration_text(o.at_ns);
      break;
    case observation::kind::response:
      j["response"] = o.target;
      break;
    case observation::kind::client_exception:
      j["client_exception"] = o.target;
      break;
    case observation::kind::object: {
      json obj = json::object();
      for (const auto& [key, child] : o.children) obj[key] = observation_value(child);
      j["object"] = std::move(obj);
      break;
    }
    case observation::kind::array:
      ADMIT_ASSERT(false, "an array is a value, never a case's own observation");
  }
}

json observation_value(const observation& o) {
  if (o.k == observation::kind::array) {
    json a = json::array();
    for (const auto& ch : o.children) a.push_back(observation_value(ch.second));
    return a;
  }
  json j = json::object();
  observation_fields(j, o);
  return j;
}

json verdict_json(const std::string& verdict, const std::vector<std::string>& violated) {
  json j;
  j["verdict"] = verdict;
  if (!violated.empty()) j["violated"] = violated;
  return j;
}

}  // namespace

std::string duration_text(sim::vtime_ns ns) {
  ADMIT_ASSERT(ns >= 0, "duration_text takes a non-negative duration");
  const auto v = static_cast<std::uint64_t>(ns);
  if (v % 1'000'000 == 0) return format_duration(ns);  // whole milliseconds or more: "350ms", "2m"
  if (v >= 1'000'000'000) return fraction_of(v, 1'000'000'000, 9, "s");
  if (v >= 1'000'000) return fraction_of(v, 1'000'000, 6, "ms");
  if (v >= 1'000) return fraction_of(v, 1'000, 3, "us");
  return std::to_string(v) + "ns";
}

std::string signed_duration_text(sim::vtime_ns ns) {
  if (ns == 0) return "0ms";
  const sim::vtime_ns magnitude = ns < 0 ? -ns : ns;
  std::string out(1, ns < 0 ? '-' : '+');  // appended, not `"-" + text`: GCC 12 warns falsely (-Wrestrict) on that
  out += duration_text(magnitude);
  return out;
}

nlohmann::ordered_json scenario_to_json(const admit::scenario::scenario& sc) {
  json j;
  j["name"] = sc.name;
  if (!sc.description.empty()) j["description"] = sc.description;
  j["seed"] = sc.seed;
  const bool several_gates = sc.gates.size() > 1;
  if (several_gates) {
    json gs = json::array();
    for (const auto& g : sc.gates) gs.push_back(gate_json(g));
    j["gates"] = std::move(gs);
  } else {
    ADMIT_ASSERT(!sc.gates.empty(), "a scenario has at least one gate");
    j["gate"] = gate_json(sc.gates.front());
  }
  const bool lease = admit::scenario::world_of(sc) == check::world_lease;
  if (lease) j["fleet"] = fleet_json(sc.fleet);  // the FIFO world has no fleet, and its loader refuses one
  j["service"] = service_json(sc.service, lease);

  json wl;
  if (!sc.requests.empty()) {
    json rs = json::array();
    for (const auto& r : sc.requests) rs.push_back(request_json(r, several_gates));
    wl["requests"] = std::move(rs);
  }
  if (!sc.arrivals.empty()) {
    json as = json::array();
    for (const auto& a : sc.arrivals) as.push_back(arrival_json(a, several_gates));
    wl["arrivals"] = std::move(as);
  }
  j["workload"] = std::move(wl);

  if (!sc.faults.schedule.empty() || sc.faults.rates) {
    json f;
    if (!sc.faults.schedule.empty()) {
      json s = json::array();
      for (const auto& x : sc.faults.schedule) s.push_back(fault_json(x));
      f["schedule"] = std::move(s);
    }
    if (sc.faults.rates) f["rates"] = rates_json(*sc.faults.rates);
    j["faults"] = std::move(f);
  }

  if (!sc.cases.empty()) {
    json cs = json::array();
    for (const auto& c : sc.cases) {
      json cj;
      cj["name"] = c.name;
      observation_fields(cj, c.what);
      cs.push_back(std::move(cj));
    }
    j["cases"] = std::move(cs);
  }

  json ck;
  if (!sc.checks.invariants.empty()) ck["invariants"] = sc.checks.invariants;
  ck["max_events"] = sc.checks.max_events;
  ck["horizon"] = duration_text(sc.checks.horizon_ns);
  ck["trace"] = sc.checks.trace_capacity;
  ck["stop_at_first"] = sc.checks.stop_at_first;
  if (sc.checks.liveness_horizon_ns) ck["liveness_horizon"] = duration_text(*sc.checks.liveness_horizon_ns);
  j["checks"] = std::move(ck);

  json ex = verdict_json(sc.expect.verdict, sc.expect.violated);
  if (!sc.expect.variants.empty()) {
    json vs = json::object();
    for (const auto& v : sc.expect.variants) vs[v.variant] = verdict_json(v.verdict, v.violated);
    ex["variants"] = std::move(vs);
  }
  j["expect"] = std::move(ex);
  return j;
}

std::string render_scenario(const admit::scenario::scenario& sc) { return scenario_to_json(sc).dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n"; }

}  // namespace admit::explore
