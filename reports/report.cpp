#include "reports/report.hpp"

#include <algorithm>

#include "gate/admit_assert.hpp"
#include "sim/codec/json_codec.hpp"
#include "sim/check/causes.hpp"
#include "sim/scenario/duration.hpp"

namespace admit::reports {

// The field readers every from_json shares (sim/codec/json_codec.hpp).
using namespace admit::codec;

namespace {

using json = nlohmann::ordered_json;

json latency_json(const check::histogram& h) {
  json j;
  j["count"] = h.count();
  j["p50"] = h.percentile(500);
  j["p90"] = h.percentile(900);
  j["p99"] = h.percentile(990);
  j["max"] = h.max();
  return j;
}

json response_json(const world::run_record& rec, const std::string& id) {
  json j;
  auto it = rec.outcomes.find(id);
  if (it == rec.outcomes.end() || !it->second.responded) {
    j["http_status"] = nullptr;
    j["status"] = "no_response";
    return j;
  }
  j["http_status"] = it->second.http_status;
  j["status"] = it->second.status;
  return j;
}

json observation_json(const scenario::observation& o, const world::run_record& rec) {
  using k = scenario::observation::kind;
  switch (o.k) {
    case k::snapshot: {
      const world::captured_snapshot* s = rec.find_snapshot(o.target, o.at_ns);
      if (s == nullptr) return json{{"not_reached", "the run ended before " + scenario::format_duration(o.at_ns)}};
      return snapshot_json(s->snap);
    }
    case k::response:
      return response_json(rec, o.target);
    case k::client_exception: {
      auto it = rec.outcomes.find(o.target);
      if (it != rec.outcomes.end() && it->second.client_timed_out) return "ReadTimeout";
      return nullptr;
    }
    case k::array: {
      json a = json::array();
      for (const auto& ch : o.children) a.push_back(observation_json(ch.second, rec));
      return a;
    }
    case k::object: {
      json obj = json::object();
      for (const auto& ch : o.children) obj[ch.first] = observation_json(ch.second, rec);
      return obj;
    }
  }
  return nullptr;
}

}  // namespace

json snapshot_json(const fifo::snapshot& s) {
  json j;
  j["active"] = s.active;
  j["waiting"] = s.waiting;
  json events = json::array();
  for (const auto& e : s.events) {
    json ev;
    ev["order"] = e.order;
    ev["status"] = std::string(fifo::to_string(e.st));
    ev["active"] = e.active;
    ev["waiting"] = e.waiting;
    events.push_back(std::move(ev));
  }
  j["events"] = std::move(events);
  j["max_active"] = s.max_active;
  j["max_waiting"] = s.max_waiting;
  // The lab reports seconds; a whole number of seconds prints as an integer.
  if (s.wait_deadline_ns % 1'000'000'000 == 0)
    j["wait_seconds"] = s.wait_deadline_ns / 1'000'000'000;
  else
    j["wait_seconds"] = static_cast<double>(s.wait_deadline_ns) / 1e9;
  return j;
}

// sim/check/verdict.hpp decides; this names the expectation that applies to the run.
bool as_expected(const scenario::scenario& sc, const world::run_record& rec) {
  return check::meets(scenario::expectation_for(sc, rec.variant), rec.invariants, rec.inconclusive.has_value());
}

namespace {

json inconclusive_json(const world::inconclusive_reason& why) {
  json j;
  j["reason"] = why.kind;
  j["detail"] = why.detail;
  if (why.script) {
    // Which script of the protocol failed, where, and on which call.
    const world::script_failure& f = *why.script;
    json s;
    s["operation"] = f.operation;
    s["script"] = f.script;
    s["origin"] = f.origin;
    s["line"] = f.line;
    s["error"] = f.message;
    s["command"] = f.command;
    s["step_limit"] = f.step_limit;
    s["memory_limit"] = f.memory_limit;
    s["token"] = f.token;
    s["worker"] = f.worker;
    s["at_ns"] = f.at_ns;
    j["script"] = std::move(s);
  }
  return j;
}

json causes_json(const std::vector<check::cause>& causes) {
  json out = json::array();
  for (const check::cause& c : causes) out.push_back(json{{"kind", c.kind}, {"detail", c.detail}});
  return out;
}

// How bad an invariant's violations got: exact totals, the worst moment, the
// first windows and the causes by count (sim/check/results.hpp).
json violations_json(const check::invariant_result& i) {
  json v;
  v["kind"] = i.level ? "level" : "event";
  v["windows"] = i.windows;
  if (i.level) v["time_in_violation_ns"] = i.time_in_violation_ns;
  if (i.worst) {
    json w;
    w["value"] = i.worst->value;
    w["bound"] = i.worst->bound;
    w["at_ns"] = i.worst->at_ns;
    w["detail"] = i.worst->detail;
    v["worst"] = std::move(w);
  }
  json list = json::array();
  for (const check::violation_window& w : i.window_list) {
    json e;
    e["start_ns"] = w.start_ns;
    e["end_ns"] = w.end_ns;
    if (i.level) {
      e["open_at_end"] = w.open_at_end;
      e["peak"] = w.peak;
      e["bound"] = w.bound;
      e["peak_ns"] = w.peak_ns;
    }
    e["detail"] = w.detail;
    e["causes"] = causes_json(w.causes);
    list.push_back(std::move(e));
  }
  v["window_list"] = std::move(list);
  v["windows_listed"] = i.window_list.size();
  json causes = json::array();
  for (const check::cause_count& c : i.causes) {
    const check::cause_info* row = check::find_cause(c.kind);
    ADMIT_ASSERT(row != nullptr, "every cause a world names is a row of the cause table");
    json designs = json::array();
    for (std::string_view rest = row->designs; !rest.empty();) {
      const std::size_t comma = rest.find(", ");
      designs.push_back(std::string(rest.substr(0, comma)));
      rest = comma == std::string_view::npos ? std::string_view{} : rest.substr(comma + 2);
    }
    causes.push_back(json{{"kind", c.kind}, {"count", c.count}, {"title", row->title}, {"designs", std::move(designs)},
                          {"example", c.example}});
  }
  v["causes"] = std::move(causes);
  return v;
}

json invariants_json(const world::run_record& rec) {
  json inv = json::object();
  for (const auto& i : rec.invariants) {
    json j;
    j["enabled"] = i.enabled;
    j["holds"] = i.holds;
    j["checked"] = i.checked;
    if (i.first) {
      json v;
      v["at_ns"] = i.first->at_ns;
      v["detail"] = i.first->detail;
      j["first_violation"] = std::move(v);
    }
    if (!i.holds) j["violations"] = violations_json(i);
    inv[i.name] = std::move(j);
  }
  return inv;
}

json metrics_json(const world::run_record& rec) {
  const world::run_metrics& m = rec.metrics;
  json mj;
  mj["requests"] = m.requests;
  mj["completed"] = m.completed;
  json refused = json::object();
  for (const auto& [reason, n] : m.refused) refused[reason] = n;
  mj["refused"] = std::move(refused);
  mj["client_timeouts"] = m.client_timeouts;
  mj["gate_inflight_max"] = m.gate_inflight_max;
  mj["portal_inflight_max"] = m.portal_inflight_max;
  if (!rec.lease) mj["waiting_max"] = m.waiting_max;
  if (rec.lease) {
    const world::lease_metrics& l = *rec.lease;
    mj["holders_max"] = l.holders_max;
    mj["portal_429"] = l.portal_429;
    mj["portal_attempted_max"] = l.portal_attempted_max;
    mj["leases_reaped_live"] = l.leases_reaped_live;
    mj["deferred"] = l.deferred;
    mj["redis_calls"] = l.redis_calls;
    mj["redis_errors"] = l.redis_errors;
    mj["failed_releases"] = l.failed_releases;
    mj["renewals_lost"] = l.renewals_lost;
    mj["regrants"] = l.regrants;
    if (l.regrants != 0) mj["regrant_example"] = l.regrant_example;
    if (l.requeue_and_exit) {
      mj["items_requeued"] = l.items_requeued;
      mj["workers_exited"] = l.workers_exited;
      mj["items_left"] = l.items_left;
    }
  }
  mj["simulated_ns"] = m.simulated_ns;
  mj["run_status"] = sim::to_string(rec.status);
  json lat;
  lat["wait"] = latency_json(m.wait_ns);
  lat["service"] = latency_json(m.service_ns);
  mj["latency_ns"] = std::move(lat);
  return mj;
}

// Last in its run's object: what the kernel did, which replay compares and the golden tests do not.
json diagnostics_json(const world::run_record& rec) {
  json d;
  d["events"] = rec.diagnostics.events;
  d["sequence_numbers"] = rec.diagnostics.sequence_numbers;
  if (const auto& p = rec.diagnostics.process) {
    d["process_messages"] = p->messages;
    d["process_wakes_ahead"] = p->wakes_ahead;
  }
  return d;
}

json probes_json(const world::run_record& rec) {
  json hit = json::object();
  json never = json::array();
  for (const auto& [name, n] : rec.probes) {
    if (n > 0) hit[name] = n;
    else never.push_back(name);
  }
  json p;
  p["hit"] = std::move(hit);
  p["never_hit"] = std::move(never);
  return p;
}

json trace_json(const world::run_record& rec) {
  json t;
  t["dropped_before"] = rec.trace_dropped;
  json entries = json::array();
  for (const auto& e : rec.trace) {
    json j;
    j["at_ns"] = e.at_ns;
    j["source"] = e.source;
    j["what"] = e.what;
    j["active"] = e.active;
    j["waiting"] = e.waiting;
    j["ref"] = e.ref;
    entries.push_back(std::move(j));
  }
  t["entries"] = std::move(entries);
  return t;
}

}  // namespace

json build_report(const report_input& in) {
  const scenario::scenario& sc = *in.sc;
  std::vector<const world::run_record*> runs = in.runs;
  if (runs.empty() && in.rec != nullptr) runs.push_back(in.rec);
  const bool per_variant = runs.size() > 1 || (!runs.empty() && !runs.front()->variant.empty());
  bool any_violation = false;
  bool all_met = true;
  for (const auto* r : runs) {
    any_violation = any_violation || r->any_violation();
    all_met = all_met && as_expected(sc, *r);
  }
  report_header h;
  if (!runs.empty() && !runs.front()->gate_core.empty()) h.gate_core = runs.front()->gate_core;
  h.scenario_name = sc.name;
  h.scenario_file = in.file;
  h.scenario_sha256 = in.sha256;
  h.seed = runs.empty() ? 0 : runs.front()->seed;
  json r = h.to_json();
  if (in.source != nullptr) r["scenario"]["source"] = *in.source;
  // The report's verdict: a violation anywhere, else inconclusive if any run was cut short, else pass.
  bool any_inconclusive = false;
  for (const auto* run : runs) any_inconclusive = any_inconclusive || run->inconclusive.has_value();
  r["verdict"] = check::combined_verdict(any_violation, any_inconclusive);
  json ex;
  if (!per_variant) {
    ex["verdict"] = sc.expect.verdict;
    ex["violated"] = sc.expect.violated;
  }
  ex["met"] = all_met;
  r["expected"] = std::move(ex);

  if (!per_variant) {
    const world::run_record& rec = *runs.front();
    if (rec.inconclusive) r["inconclusive"] = inconclusive_json(*rec.inconclusive);
    r["invariants"] = invariants_json(rec);
    r["metrics"] = metrics_json(rec);
    r["probes"] = probes_json(rec);
    json cases = json::object();
    for (const auto& c : sc.cases) cases[c.name] = observation_json(c.what, rec);
    r["cases"] = std::move(cases);
    if (rec.any_violation()) r["trace"] = trace_json(rec);
    r["diagnostics"] = diagnostics_json(rec);
  } else {
    json variants = json::object();
    for (const auto* rec : runs) {
      json v;
      v["verdict"] = rec->verdict();
      if (rec->inconclusive) v["inconclusive"] = inconclusive_json(*rec->inconclusive);
      const check::expectation expected = scenario::expectation_for(sc, rec->variant);
      json e;
      e["verdict"] = expected.verdict;
      e["violated"] = expected.violated;
      e["met"] = as_expected(sc, *rec);
      v["expected"] = std::move(e);
      v["invariants"] = invariants_json(*rec);
      v["metrics"] = metrics_json(*rec);
      v["probes"] = probes_json(*rec);
      if (rec->any_violation()) v["trace"] = trace_json(*rec);
      v["diagnostics"] = diagnostics_json(*rec);
      variants[rec->variant] = std::move(v);
    }
    r["variants"] = std::move(variants);
  }
  r["replay"] = replay_command(in.file, runs.empty() ? 0 : runs.front()->seed);
  return r;
}

std::string render_report(const json& report) { return render_json(report); }

json report_header::to_json() const {
  json r;
  r["format"] = report_format;
  r["execution_mode"] = execution_mode;
  // A team's own core ran (sim/world/own_gate.hpp): the verdict is about that core, not admitsim's.
  if (gate_core) {
    json core;
    core["name"] = *gate_core;
    // "process": a gate's child process (docs/process-gate.md); "own": a C++ core linked in.
    core["origin"] = gate_core->rfind("process:", 0) == 0 ? "process" : "own";
    r["gate_core"] = std::move(core);
  }
  json s;
  s["name"] = scenario_name;
  s["file"] = scenario_file;
  s["sha256"] = scenario_sha256;
  r["scenario"] = std::move(s);
  r["seed"] = seed;
  return r;
}

namespace {

// The string at /scenario/KEY of a report, or a codec_error naming it and what it is.
std::string scenario_string(const json& scenario, const char* key, const std::string& what) {
  const auto it = scenario.find(key);
  const std::string path = std::string("/scenario/") + key;
  const std::string expected = "expected a string (" + what + "), got ";
  if (it == scenario.end()) throw codec_error(path, expected + "nothing");
  if (!it->is_string()) {
    const std::string type = it->type_name();
    throw codec_error(path, expected + (type == "array" || type == "object" ? "an " : "a ") + type);
  }
  return it->get<std::string>();
}

}  // namespace

report_header report_header::from_json(const json& report) {
  if (!report.is_object() || report.value("format", "") != report_format)
    throw codec_error("/format", "expected \"" + std::string(report_format) + "\"");
  report_header h;
  if (report.contains("gate_core")) {
    // A team's own core ran: its name, if it gives one.
    const json& core = report["gate_core"];
    h.gate_core = core.is_object() && core.contains("name") && core["name"].is_string() ? core["name"].get<std::string>()
                                                                                           : std::string();
    // admitsim runs no team's linked-in core: nothing more of its report is read. A process
    // gate's child is named by the scenario (docs/process-gate.md): its report reads on.
    if (h.gate_core->rfind("process:", 0) != 0) return h;
  }
  if (!report.contains("scenario") || !report["scenario"].is_object() || !report["scenario"].contains("source") ||
      !report.contains("seed") || !report["seed"].is_number_unsigned())
    throw codec_error("", "expected /scenario/source and /seed in the report");
  const json& sc = report["scenario"];
  h.scenario_file = scenario_string(sc, "file", "the scenario's file name");
  h.scenario_sha256 = scenario_string(sc, "sha256", "the scenario's digest");
  h.scenario_name = scenario_string(sc, "name", "the scenario's name");
  h.seed = report["seed"].get<std::uint64_t>();
  return h;
}


std::string shell_quote(const std::string& word) {
  const bool plain = !word.empty() && std::all_of(word.begin(), word.end(), [](char c) {
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '.' ||
           c == '/' || c == '-';
  });
  if (plain) return word;
  std::string out = "'";
  for (const char c : word) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

}  // namespace admit::reports
