#include "sim/scenario/loader.hpp"

#include <algorithm>
#include <set>
#include <string>

#include "sim/scenario/duration.hpp"

namespace admit::scenario {

namespace {

using json = nlohmann::ordered_json;

std::string shown(const json& v) {
  std::string s = v.dump();
  if (s.size() > 60) s = s.substr(0, 57) + "...";
  return s;
}

[[noreturn]] void fail(const std::string& path, const std::string& expected, const json& got) {
  throw scenario_error(path.empty() ? "/" : path, "expected " + expected + ", got " + shown(got));
}

[[noreturn]] void fail_msg(const std::string& path, const std::string& message) {
  throw scenario_error(path.empty() ? "/" : path, message);
}

std::string child(const std::string& path, std::string_view key) {
  std::string escaped;
  for (char c : key) {
    if (c == '~') escaped += "~0";
    else if (c == '/') escaped += "~1";
    else escaped += c;
  }
  return path + "/" + escaped;
}
std::string child(const std::string& path, std::size_t index) {
  return path + "/" + std::to_string(index);
}

// Reads an object's fields, remembering which keys were used, so that
// finish() can reject the rest as unknown.
class object_reader {
 public:
  object_reader(const json& j, std::string path, std::string what)
      : j_(j), path_(std::move(path)) {
    if (!j_.is_object()) fail(path_, what, j_);
  }
  const std::string& path() const { return path_; }
  bool has(std::string_view key) const { return j_.contains(key); }
  const json* get(std::string_view key) {
    used_.insert(std::string(key));
    auto it = j_.find(key);
    return it == j_.end() ? nullptr : &*it;
  }
  const json& require(std::string_view key, const std::string& what) {
    const json* v = get(key);
    if (v == nullptr) fail_msg(path_, "missing required key \"" + std::string(key) + "\" (" + what + ")");
    return *v;
  }
  void finish() const {
    for (auto it = j_.begin(); it != j_.end(); ++it) {
      if (used_.count(it.key()) == 0) {
        std::string allowed;
        for (const auto& k : used_) allowed += (allowed.empty() ? "" : ", ") + k;
        fail_msg(child(path_, it.key()), "unknown key; expected one of: " + allowed);
      }
    }
  }

 private:
  const json& j_;
  std::string path_;
  std::set<std::string> used_;
};

std::int64_t read_int(const json& v, const std::string& path, std::int64_t lo, std::int64_t hi) {
  const std::string expected =
      "an integer from " + std::to_string(lo) + " to " + std::to_string(hi);
  if (!v.is_number_integer()) fail(path, expected, v);
  if (v.is_number_unsigned()) {
    const auto u = v.get<std::uint64_t>();
    if (u > static_cast<std::uint64_t>(hi)) fail(path, expected, v);
    return static_cast<std::int64_t>(u);
  }
  const auto x = v.get<std::int64_t>();
  if (x < lo || x > hi) fail(path, expected, v);
  return x;
}

double read_double(const json& v, const std::string& path, double lo, double hi) {
  const std::string expected = "a number from " + shown(json(lo)) + " to " + shown(json(hi));
  if (!v.is_number()) fail(path, expected, v);
  const double x = v.get<double>();
  if (!(x >= lo && x <= hi)) fail(path, expected, v);
  return x;
}

std::string read_string(const json& v, const std::string& path, const std::string& what) {
  if (!v.is_string()) fail(path, what, v);
  return v.get<std::string>();
}

std::string read_name(const json& v, const std::string& path) {
  const std::string what = "a name of 1 to 64 letters, digits, '_', '-' or '.'";
  std::string s = read_string(v, path, what);
  const bool ok = !s.empty() && s.size() <= 64 &&
                  std::all_of(s.begin(), s.end(), [](char c) {
                    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                           c == '_' || c == '-' || c == '.';
                  });
  if (!ok) fail(path, what, v);
  return s;
}

vtime_ns read_duration(const json& v, const std::string& path, vtime_ns lo = 0,
                       vtime_ns hi = 100LL * 24 * 3600 * sim::sec) {
  std::string expected = "a duration such as \"250ms\"";
  if (lo > 0) expected = "a positive duration such as \"250ms\"";
  if (!v.is_string()) fail(path, expected, v);
  const auto d = parse_duration_ns(v.get<std::string>());
  if (!d) fail(path, expected + " (units ns, us, ms, s, m, h)", v);
  if (*d < lo || *d > hi)
    fail(path, "a duration from " + format_duration(lo) + " to " + format_duration(hi), v);
  return *d;
}

template <class E, std::size_t N>
E read_enum(const json& v, const std::string& path, const std::pair<const char*, E> (&options)[N]) {
  std::string expected = "one of";
  for (std::size_t i = 0; i < N; ++i) expected += std::string(i ? ", " : " ") + "\"" + options[i].first + "\"";
  if (!v.is_string()) fail(path, expected, v);
  const std::string s = v.get<std::string>();
  for (const auto& [name, value] : options)
    if (s == name) return value;
  fail(path, expected, v);
}

sim::duration_dist read_dist(const json& v, const std::string& path) {
  if (v.is_string()) return sim::duration_dist::fixed(read_duration(v, path));
  object_reader r(v, path, "a duration such as \"350ms\" or a distribution object");
  static const std::pair<const char*, sim::duration_kind> kinds[] = {
      {"fixed", sim::duration_kind::fixed},
      {"uniform", sim::duration_kind::uniform},
      {"exponential", sim::duration_kind::exponential},
      {"lognormal", sim::duration_kind::lognormal},
      {"pareto", sim::duration_kind::pareto}};
  const auto kind = read_enum(r.require("kind", "the distribution"), child(path, "kind"), kinds);
  sim::duration_dist d;
  switch (kind) {
    case sim::duration_kind::fixed:
      d = sim::duration_dist::fixed(read_duration(r.require("value", "a duration"), child(path, "value")));
      break;
    case sim::duration_kind::uniform: {
      const vtime_ns lo = read_duration(r.require("min", "a duration"), child(path, "min"));
      const vtime_ns hi = read_duration(r.require("max", "a duration"), child(path, "max"));
      if (hi < lo) fail(child(path, "max"), "a duration not below min (" + format_duration(lo) + ")", *r.get("max"));
      d = sim::duration_dist::uniform(lo, hi);
      break;
    }
    case sim::duration_kind::exponential:
      d = sim::duration_dist::exponential(read_duration(r.require("mean", "a duration"), child(path, "mean"), 1));
      break;
    case sim::duration_kind::lognormal: {
      const vtime_ns median = read_duration(r.require("median", "a duration"), child(path, "median"), 1);
      const double sigma = read_double(r.require("sigma", "a number"), child(path, "sigma"), 0.0, 10.0);
      d = sim::duration_dist::lognormal(median, sigma);
      break;
    }
    case sim::duration_kind::pareto: {
      const vtime_ns scale = read_duration(r.require("scale", "a duration"), child(path, "scale"), 1);
      const double alpha = read_double(r.require("alpha", "a number"), child(path, "alpha"), 0.01, 100.0);
      d = sim::duration_dist::pareto(scale, alpha);
      break;
    }
  }
  r.finish();
  return d;
}

gate_spec read_gate(const json& v, const std::string& path, bool name_required) {
  object_reader r(v, path, "a gate object");
  gate_spec g;
  if (const json* n = r.get("name"))
    g.name = read_name(*n, child(path, "name"));
  else if (name_required)
    fail_msg(path, "missing required key \"name\" (each of several gates needs a name)");
  static const std::pair<const char*, gate_kind> kinds[] = {{"fifo", gate_kind::fifo}};
  g.kind = read_enum(r.require("kind", "the gate's kind"), child(path, "kind"), kinds);
  g.fifo.max_active = read_int(r.require("max_active", "the cap on active leases"), child(path, "max_active"), 1,
                               fifo::max_active_limit);
  if (const json* x = r.get("max_waiting"))
    g.fifo.max_waiting = read_int(*x, child(path, "max_waiting"), 0, fifo::max_waiting_limit);
  if (const json* x = r.get("wait_deadline"))
    g.fifo.wait_deadline_ns = read_duration(*x, child(path, "wait_deadline"), 1, fifo::wait_deadline_ns_limit);
  if (const json* x = r.get("event_log"))
    g.fifo.event_log_capacity = read_int(*x, child(path, "event_log"), 0, fifo::event_log_capacity_limit);
  if (const json* x = r.get("mutation")) {
    static const std::pair<const char*, fifo::mutation> muts[] = {
        {"none", fifo::mutation::none},
        {"leak_handover_on_cancel", fifo::mutation::leak_handover_on_cancel},
        {"admit_off_by_one", fifo::mutation::admit_off_by_one},
        {"newcomers_jump_queue", fifo::mutation::newcomers_jump_queue},
        {"double_release_on_timeout", fifo::mutation::double_release_on_timeout}};
    g.fifo.mut = read_enum(*x, child(path, "mutation"), muts);
  }
  r.finish();
  return g;
}

observation read_observation(object_reader& r, const std::string& path);

observation read_observation_value(const json& v, const std::string& path) {
  if (v.is_array()) {
    observation o;
    o.k = observation::kind::array;
    for (std::size_t i = 0; i < v.size(); ++i)
      o.children.emplace_back("", read_observation_value(v[i], child(path, i)));
    return o;
  }
  object_reader r(v, path, "an observation: {\"snapshot\": gate, \"at\": duration}, {\"response\": request}, "
                           "{\"client_exception\": request}, {\"object\": {...}} or an array");
  observation o = read_observation(r, path);
  r.finish();
  return o;
}

observation read_observation(object_reader& r, const std::string& path) {
  observation o;
  int kinds = 0;
  for (const char* k : {"snapshot", "response", "client_exception", "object"})
    if (r.has(k)) ++kinds;
  if (kinds != 1)
    fail_msg(path, "expected exactly one of \"snapshot\", \"response\", \"client_exception\", \"object\"");
  if (const json* g = r.get("snapshot")) {
    o.k = observation::kind::snapshot;
    o.target = read_name(*g, child(path, "snapshot"));
    o.at_ns = read_duration(r.require("at", "when to take the snapshot"), child(path, "at"));
  } else if (const json* q = r.get("response")) {
    o.k = observation::kind::response;
    o.target = read_name(*q, child(path, "response"));
  } else if (const json* c = r.get("client_exception")) {
    o.k = observation::kind::client_exception;
    o.target = read_name(*c, child(path, "client_exception"));
  } else if (const json* obj = r.get("object")) {
    o.k = observation::kind::object;
    const std::string p = child(path, "object");
    if (!obj->is_object() || obj->empty()) fail(p, "an object of named observations", *obj);
    for (auto it = obj->begin(); it != obj->end(); ++it)
      o.children.emplace_back(it.key(), read_observation_value(it.value(), child(p, it.key())));
  }
  return o;
}

}  // namespace

scenario load_scenario_json(const json& doc) {
  object_reader top(doc, "", "a scenario object");
  scenario sc;
  sc.name = read_name(top.require("name", "the scenario's name"), "/name");
  if (const json* d = top.get("description")) sc.description = read_string(*d, "/description", "a string");
  if (const json* s = top.get("seed")) {
    if (!s->is_number_integer() || (!s->is_number_unsigned() && s->get<std::int64_t>() < 0))
      fail("/seed", "an integer from 0 to 18446744073709551615", *s);
    sc.seed = s->get<std::uint64_t>();
  }

  // Gates: "gate" (one) or "gates" (several, each named).
  const json* one = top.get("gate");
  const json* many = top.get("gates");
  if ((one == nullptr) == (many == nullptr))
    fail_msg("/", "expected exactly one of \"gate\" (one gate) or \"gates\" (a list of named gates)");
  if (one != nullptr) {
    sc.gates.push_back(read_gate(*one, "/gate", false));
  } else {
    if (!many->is_array() || many->empty() || many->size() > 64)
      fail("/gates", "a list of 1 to 64 gate objects", *many);
    for (std::size_t i = 0; i < many->size(); ++i) {
      gate_spec g = read_gate((*many)[i], child("/gates", i), true);
      for (const auto& other : sc.gates)
        if (other.name == g.name) fail(child(child("/gates", i), "name"), "a gate name not used before", g.name);
      sc.gates.push_back(std::move(g));
    }
  }
  auto gate_exists = [&](const std::string& n) {
    return std::any_of(sc.gates.begin(), sc.gates.end(), [&](const gate_spec& g) { return g.name == n; });
  };

  if (const json* sv = top.get("service")) {
    object_reader r(*sv, "/service", "a service object");
    if (const json* c = r.get("portal_cap")) sc.service.portal_cap = read_int(*c, "/service/portal_cap", 1, 100'000'000);
    if (const json* t = r.get("service_time")) sc.service.service_time = read_dist(*t, "/service/service_time");
    if (const json* t = r.get("client_timeout"))
      sc.service.client_timeout_ns = read_duration(*t, "/service/client_timeout", 1);
    r.finish();
  }

  const json& wl = top.require("workload", "what arrives when");
  {
    object_reader r(wl, "/workload", "a workload object");
    const json& reqs = r.require("requests", "a list of requests");
    if (!reqs.is_array() || reqs.empty() || reqs.size() > 1'000'000)
      fail("/workload/requests", "a list of 1 to 1000000 requests", reqs);
    std::set<std::string> ids;
    for (std::size_t i = 0; i < reqs.size(); ++i) {
      const std::string p = child("/workload/requests", i);
      object_reader q(reqs[i], p, "a request object");
      request_spec rq;
      rq.id = q.has("id") ? read_name(*q.get("id"), child(p, "id")) : "r" + std::to_string(i + 1);
      (void)q.get("id");
      if (!ids.insert(rq.id).second) fail(child(p, "id"), "a request id not used before", rq.id);
      if (const json* g = q.get("gate")) {
        rq.gate = read_name(*g, child(p, "gate"));
        if (!gate_exists(rq.gate)) fail(child(p, "gate"), "the name of a gate of this scenario", *g);
      } else if (sc.gates.size() == 1) {
        rq.gate = sc.gates[0].name;
      } else {
        fail_msg(p, "missing required key \"gate\" (the scenario has several gates)");
      }
      rq.at_ns = read_duration(q.require("at", "the arrival time"), child(p, "at"));
      if (const json* x = q.get("service")) rq.service_ns = read_duration(*x, child(p, "service"));
      if (const json* x = q.get("cancel_at")) {
        rq.cancel_at_ns = read_duration(*x, child(p, "cancel_at"));
        if (*rq.cancel_at_ns < rq.at_ns)
          fail(child(p, "cancel_at"), "a time not before the request's arrival (" + format_duration(rq.at_ns) + ")", *x);
      }
      if (const json* x = q.get("client_timeout")) rq.client_timeout_ns = read_duration(*x, child(p, "client_timeout"), 1);
      if (const json* x = q.get("fail")) {
        static const std::pair<const char*, failure> fs[] = {{"none", failure::none},
                                                              {"constructor", failure::constructor}};
        rq.fail = read_enum(*x, child(p, "fail"), fs);
      }
      q.finish();
      sc.requests.push_back(std::move(rq));
    }
    r.finish();
  }
  std::set<std::string> request_ids;
  for (const auto& rq : sc.requests) request_ids.insert(rq.id);

  if (const json* cs = top.get("cases")) {
    if (!cs->is_array()) fail("/cases", "a list of cases", *cs);
    std::set<std::string> names;
    for (std::size_t i = 0; i < cs->size(); ++i) {
      const std::string p = child("/cases", i);
      object_reader r((*cs)[i], p, "a case object with a \"name\" and one observation");
      case_spec c;
      c.name = read_name(r.require("name", "the case's name"), child(p, "name"));
      if (!names.insert(c.name).second) fail(child(p, "name"), "a case name not used before", c.name);
      c.what = read_observation(r, p);
      r.finish();
      // References must resolve.
      std::vector<std::pair<const observation*, std::string>> stack{{&c.what, p}};
      while (!stack.empty()) {
        auto [o, op] = stack.back();
        stack.pop_back();
        if (o->k == observation::kind::snapshot && !gate_exists(o->target))
          fail(child(op, "snapshot"), "the name of a gate of this scenario", o->target);
        if ((o->k == observation::kind::response || o->k == observation::kind::client_exception) &&
            request_ids.count(o->target) == 0)
          fail(child(op, o->k == observation::kind::response ? "response" : "client_exception"),
               "the id of a request of this scenario", o->target);
        for (std::size_t k = 0; k < o->children.size(); ++k)
          stack.emplace_back(&o->children[k].second,
                             o->k == observation::kind::object ? child(child(op, "object"), o->children[k].first)
                                                               : child(op, k));
      }
      sc.cases.push_back(std::move(c));
    }
  }

  if (const json* ck = top.get("checks")) {
    object_reader r(*ck, "/checks", "a checks object");
    if (const json* inv = r.get("invariants")) {
      if (!inv->is_array()) fail("/checks/invariants", "a list of invariant names", *inv);
      for (std::size_t i = 0; i < inv->size(); ++i) {
        std::string expected = "one of";
        bool first = true;
        for (const char* n : invariant_names) {
          expected += std::string(first ? " " : ", ") + "\"" + n + "\"";
          first = false;
        }
        const json& v = (*inv)[i];
        if (!v.is_string()) fail(child("/checks/invariants", i), expected, v);
        const std::string s = v.get<std::string>();
        if (std::none_of(std::begin(invariant_names), std::end(invariant_names),
                         [&](const char* n) { return s == n; }))
          fail(child("/checks/invariants", i), expected, v);
        sc.checks.invariants.push_back(s);
      }
    }
    if (const json* x = r.get("max_events"))
      sc.checks.max_events = static_cast<std::uint64_t>(read_int(*x, "/checks/max_events", 1, 10'000'000'000));
    if (const json* x = r.get("horizon")) sc.checks.horizon_ns = read_duration(*x, "/checks/horizon", 1);
    if (const json* x = r.get("trace")) sc.checks.trace_capacity = read_int(*x, "/checks/trace", 0, 100'000);
    r.finish();
  }

  if (const json* ex = top.get("expect")) {
    object_reader r(*ex, "/expect", "an expect object");
    static const std::pair<const char*, int> verdicts[] = {{"pass", 0}, {"violation", 1}};
    sc.expect.verdict = read_enum(r.require("verdict", "\"pass\" or \"violation\""), "/expect/verdict", verdicts) == 0
                            ? "pass"
                            : "violation";
    if (const json* inv = r.get("violated")) {
      if (!inv->is_array()) fail("/expect/violated", "a list of invariant names", *inv);
      for (std::size_t i = 0; i < inv->size(); ++i) {
        const json& v = (*inv)[i];
        const bool known = v.is_string() && std::any_of(std::begin(invariant_names), std::end(invariant_names),
                                                        [&](const char* n) { return v.get<std::string>() == n; });
        if (!known) fail(child("/expect/violated", i), "an invariant name", v);
        sc.expect.violated.push_back(v.get<std::string>());
      }
      if (sc.expect.verdict == "pass" && !sc.expect.violated.empty())
        fail_msg("/expect/violated", "must be empty when the expected verdict is \"pass\"");
    }
    r.finish();
  }
  top.finish();
  return sc;
}

scenario load_scenario_text(std::string_view text) {
  if (text.empty()) throw scenario_error("/", "expected a JSON object, got an empty file");
  json doc;
  try {
    doc = json::parse(text.begin(), text.end());
  } catch (const json::parse_error& e) {
    // e.what() reads "[json.exception.parse_error.101] parse error at line 1, column 2: ...".
    std::string msg = e.what();
    const auto pos = msg.find("parse error");
    throw scenario_error("/", "expected valid JSON: " + (pos == std::string::npos ? msg : msg.substr(pos)));
  } catch (const json::exception& e) {
    throw scenario_error("/", std::string("expected valid JSON: ") + e.what());
  }
  return load_scenario_json(doc);
}

}  // namespace admit::scenario
