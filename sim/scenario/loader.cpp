#include "sim/scenario/loader.hpp"

#include <algorithm>
#include <array>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>

#include "gate/admit_assert.hpp"
#include "sim/scenario/duration.hpp"
#include "sim/scenario/json_parse.hpp"
#include "sim/scenario/json_read.hpp"
#include "sim/scenario/memory_estimate.hpp"
#include "sim/scenario/protocol_loader.hpp"

namespace admit::scenario {

namespace {

using json = nlohmann::ordered_json;

using namespace json_read;

// Distributions: every duration at most sim::duration_cap_ns (10^15 ns,
// "1000000s"), the most a distribution can return.
sim::duration_dist read_dist(const json& v, const std::string& path) {
  constexpr vtime_ns cap = sim::duration_cap_ns;
  if (v.is_string()) return sim::duration_dist::fixed(read_duration(v, path, 0, cap));
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
      d = sim::duration_dist::fixed(read_duration(r.require("value", "a duration"), child(path, "value"), 0, cap));
      break;
    case sim::duration_kind::uniform: {
      const vtime_ns lo = read_duration(r.require("min", "a duration"), child(path, "min"), 0, cap);
      const vtime_ns hi = read_duration(r.require("max", "a duration"), child(path, "max"), 0, cap);
      if (hi < lo) fail(child(path, "max"), "a duration not below min (" + format_duration(lo) + ")", *r.get("max"));
      d = sim::duration_dist::uniform(lo, hi);
      break;
    }
    case sim::duration_kind::exponential:
      d = sim::duration_dist::exponential(
          read_duration(r.require("mean", "a duration"), child(path, "mean"), 1, cap));
      break;
    case sim::duration_kind::lognormal: {
      const vtime_ns median = read_duration(r.require("median", "a duration"), child(path, "median"), 1, cap);
      const double sigma = read_double(r.require("sigma", "a number"), child(path, "sigma"), 0.0, 10.0);
      d = sim::duration_dist::lognormal(median, sigma);
      break;
    }
    case sim::duration_kind::pareto: {
      const vtime_ns scale = read_duration(r.require("scale", "a duration"), child(path, "scale"), 1, cap);
      const double alpha = read_double(r.require("alpha", "a number"), child(path, "alpha"), 0.01, 100.0);
      d = sim::duration_dist::pareto(scale, alpha);
      break;
    }
  }
  r.finish();
  return d;
}

// --- gates ------------------------------------------------------------------

std::vector<redis::variant> read_variants(const json& v, const std::string& path) {
  static const std::pair<const char*, redis::variant> names[] = {{"seed", redis::variant::seed},
                                                                {"server_time", redis::variant::server_time},
                                                                {"renewal", redis::variant::renewal},
                                                                {"fencing", redis::variant::fencing},
                                                                {"fair", redis::variant::fair}};
  static_assert(std::size(names) == redis::all_variants.size());
  if (!v.is_array()) return {read_enum(v, path, names)};
  if (v.empty() || v.size() > redis::all_variants.size())
    fail(path, "a variant name or a list of 1 to " + std::to_string(redis::all_variants.size()) + " distinct variant names",
         v);
  std::vector<redis::variant> out;
  for (std::size_t i = 0; i < v.size(); ++i) {
    const redis::variant x = read_enum(v[i], child(path, i), names);
    if (std::find(out.begin(), out.end(), x) != out.end())
      fail(child(path, i), "a variant not listed before", v[i]);
    out.push_back(x);
  }
  return out;
}

backoff_spec read_backoff(const json& v, const std::string& path) {
  object_reader r(v, path,
                  "a backoff object such as {\"kind\": \"fixed\", \"delay\": \"200ms\"} or {\"kind\": "
                  "\"exponential\", \"base\": \"50ms\", \"max\": \"2s\"}");
  static const std::pair<const char*, backoff_spec::kind> kinds[] = {{"fixed", backoff_spec::kind::fixed},
                                                                     {"exponential", backoff_spec::kind::exponential}};
  constexpr vtime_ns hour = 3600 * sim::sec;
  backoff_spec b;
  b.k = read_enum(r.require("kind", "\"fixed\" or \"exponential\""), child(path, "kind"), kinds);
  if (b.k == backoff_spec::kind::fixed) {
    if (const json* x = r.get("delay")) b.delay_ns = read_duration(*x, child(path, "delay"), 1, hour);
  } else {
    if (const json* x = r.get("base")) b.base_ns = read_duration(*x, child(path, "base"), 1, hour);
    if (const json* x = r.get("max")) {
      b.max_ns = read_duration(*x, child(path, "max"), 1, hour);
      if (b.max_ns < b.base_ns)
        fail(child(path, "max"), "a duration not below base (" + format_duration(b.base_ns) + ")", *x);
    } else if (b.max_ns < b.base_ns) {
      b.max_ns = b.base_ns;  // the default cap never undercuts a larger base
    }
    if (const json* x = r.get("jitter")) {
      static const std::pair<const char*, backoff_spec::jitter> jit[] = {{"full", backoff_spec::jitter::full},
                                                                         {"none", backoff_spec::jitter::none}};
      b.jit = read_enum(*x, child(path, "jitter"), jit);
    }
  }
  r.finish();
  return b;
}


std::vector<protocol_ref> read_protocols(const json& v, const std::string& path) {
  constexpr std::size_t most = 8;
  std::vector<protocol_ref> out;
  auto one = [&](const json& x, const std::string& at) {
    if (x.is_string())
      fail_msg(at, "expected a protocol object; a protocol file named by path is read only by a command given the "
                   "scenario file (admitsim run, check, explore)");
    protocol_ref ref;
    ref.proto = std::make_shared<const redis::protocol>(read_protocol(x, at));
    ref.source_json = x.dump();
    out.push_back(std::move(ref));
  };
  if (!v.is_array()) {
    one(v, path);
    return out;
  }
  if (v.empty() || v.size() > most)
    fail(path, "a protocol (a file's path, or its object) or a list of 1 to " + std::to_string(most) + " of them", v);
  for (std::size_t i = 0; i < v.size(); ++i) one(v[i], child(path, i));
  return out;
}

void read_lease_fields(object_reader& r, const std::string& path, lease_params& l) {
  if (const json* x = r.get("protocol")) {
    l.protocols = read_protocols(*x, child(path, "protocol"));
    l.variants.clear();  // a gate with protocols runs only them unless "variant" names some too
  }
  if (const json* x = r.get("variant")) l.variants = read_variants(*x, child(path, "variant"));
  {
    // Runs are named in the report: every name once.
    const std::vector<std::string> names = run_names(l);
    for (std::size_t i = 0; i < names.size(); ++i)
      for (std::size_t j = 0; j < i; ++j)
        if (names[i] == names[j])
          fail_msg(child(path, "protocol"), "expected protocols whose names differ from each other and from the "
                                            "variants' (\"" + names[i] + "\" is used twice)");
  }
  l.limit = read_int(r.require("limit", "the number of permits"), child(path, "limit"), 1, lease_limit_max);
  if (const json* x = r.get("lease")) l.lease_ns = read_duration(*x, child(path, "lease"), sim::ms, day_ns);
  if (const json* x = r.get("acquire_timeout"))
    l.acquire_timeout_ns = read_duration(*x, child(path, "acquire_timeout"), 0, day_ns);
  if (const json* x = r.get("backoff")) l.backoff = read_backoff(*x, child(path, "backoff"));
  // A protocol's client policy comes from its file; where the file is silent, the gate's fields apply.
  // A gate field that no run would read is refused (it would silently do nothing).
  if (r.has("acquire_timeout") && !reads_acquire_timeout(l))
    fail_msg(child(path, "acquire_timeout"), "expected no \"acquire_timeout\": every protocol of this gate sets "
                                             "its own (client.acquire_timeout)");
  if (r.has("backoff") && !reads_backoff(l))
    fail_msg(child(path, "backoff"), "expected no \"backoff\": every protocol of this gate sets its own (client.retry)");
  l.renew_every_ns = l.lease_ns / 3;
  if (const json* x = r.get("renew_every")) {
    if (!reads_renew_every(l))
      fail(child(path, "renew_every"), "\"renew_every\" only with the \"renewal\" variant or a protocol that renews "
                                       "without an interval of its own", *x);
    l.renew_every_ns = read_duration(*x, child(path, "renew_every"), 1);
    if (l.renew_every_ns >= l.lease_ns)
      fail(child(path, "renew_every"), "a duration below lease (" + format_duration(l.lease_ns) + ")", *x);
  }
  if (const json* x = r.get("queue_timeout")) {
    if (!reads_queue_timeout(l))
      fail(child(path, "queue_timeout"),
           "\"queue_timeout\" only with the \"fair\" variant or a protocol whose calls pass {queue_timeout_ms}", *x);
    l.queue_timeout_ns = read_duration(*x, child(path, "queue_timeout"), 1, day_ns);
  }
  if (const json* x = r.get("key")) {
    const std::string what = "a Redis key of 1 to 256 printable ASCII characters without spaces";
    l.key = read_string(*x, child(path, "key"), what);
    const bool ok = !l.key.empty() && l.key.size() <= 256 &&
                    std::all_of(l.key.begin(), l.key.end(), [](char c) { return c > ' ' && c <= '~'; });
    if (!ok) fail(child(path, "key"), what, *x);
  }
  if (const json* x = r.get("redis_nodes")) {
    l.redis_nodes = read_int(*x, child(path, "redis_nodes"), 1, redis_nodes_max);
    // A built-in variant or a single-node protocol talks to node 0 only: the other nodes would do nothing.
    if (l.redis_nodes > 1) {
      if (!l.variants.empty())
        fail(child(path, "redis_nodes"), "1 in a gate with built-in variants (they run on one node; several nodes "
                                         "need protocols whose client.quorum is \"majority\" or \"all\")", *x);
      for (const protocol_ref& pr : l.protocols)
        if (pr.proto->client.quorum == redis::quorum_rule::single)
          fail(child(path, "redis_nodes"), "1, or protocols whose client.quorum is \"majority\" or \"all\" (protocol \"" +
                                               pr.proto->name + "\" runs on one node)", *x);
    }
  }
}

// A FIFO gate's child process (docs/process-gate.md). `cwd` is made
// absolute here: against the current directory, unless the text was read
// from a file and absolute_process_cwds made it absolute already.
process_spec read_process(const json& v, const std::string& path) {
  object_reader r(v, path, "a process object: {\"command\": [PROGRAM, ARG, ...]}");
  process_spec p;
  const std::string words = "an array of 1 to " + std::to_string(process_command_words_max) +
                            " strings (the program and its arguments), each 1 to " +
                            std::to_string(process_command_word_bytes_max) + " bytes without a NUL";
  const json& c = r.require("command", "the program and its arguments");
  const std::string cpath = child(path, "command");
  if (!c.is_array() || c.empty() || c.size() > process_command_words_max) fail(cpath, words, c);
  for (std::size_t i = 0; i < c.size(); ++i) {
    const std::string w = read_string(c[i], child(cpath, i), "a string of 1 to " +
                                                             std::to_string(process_command_word_bytes_max) +
                                                             " bytes without a NUL");
    if (w.empty() || w.size() > process_command_word_bytes_max || w.find('\0') != std::string::npos)
      fail(child(cpath, i), "a string of 1 to " + std::to_string(process_command_word_bytes_max) + " bytes without a NUL",
           c[i]);
    p.command.push_back(w);
  }
  if (const json* x = r.get("name")) {
    const std::string what = "a name of 1 to 56 letters, digits, '_', '-', '.' or ':'";
    p.name = read_string(*x, child(path, "name"), what);
    const bool ok = !p.name.empty() && p.name.size() <= 56 &&
                    std::all_of(p.name.begin(), p.name.end(), [](char ch) {
                      return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
                             ch == '_' || ch == '-' || ch == '.' || ch == ':';
                    });
    if (!ok) fail(child(path, "name"), what, *x);
  }
  std::string cwd = ".";
  if (const json* x = r.get("cwd")) {
    cwd = read_string(*x, child(path, "cwd"), "a directory (a string of 1 to 4096 bytes without a NUL)");
    if (cwd.empty() || cwd.size() > 4096 || cwd.find('\0') != std::string::npos)
      fail(child(path, "cwd"), "a directory (a string of 1 to 4096 bytes without a NUL)", *x);
  }
  std::error_code ec;
  std::filesystem::path dir(cwd);
  if (dir.is_relative()) dir = std::filesystem::current_path(ec) / dir;
  p.cwd = dir.lexically_normal().string();
  if (p.cwd.size() > 1 && p.cwd.back() == '/') p.cwd.pop_back();
  if (const json* x = r.get("message_timeout"))
    p.message_timeout_ns = read_duration(*x, child(path, "message_timeout"), sim::ms, process_message_timeout_ns_max);
  r.finish();
  return p;
}

gate_spec read_gate(const json& v, const std::string& path, bool name_required) {
  object_reader r(v, path, "a gate object");
  gate_spec g;
  if (const json* n = r.get("name"))
    g.name = read_name(*n, child(path, "name"));
  else if (name_required)
    fail_msg(path, "missing required key \"name\" (each of several gates needs a name)");
  static const std::pair<const char*, gate_kind> kinds[] = {{"fifo", gate_kind::fifo}, {"lease", gate_kind::lease}};
  g.kind = read_enum(r.require("kind", "the gate's kind"), child(path, "kind"), kinds);
  if (g.kind == gate_kind::lease) {
    read_lease_fields(r, path, g.lease);
    if (const json* x = r.get("mutation")) {
      static const std::pair<const char*, world_mutation> muts[] = {
          {"none", world_mutation::none},
          {"fail_open", world_mutation::fail_open},
          {"check_then_add", world_mutation::check_then_add},
          {"no_reaping", world_mutation::no_reaping},
          {"quorum_off_by_one", world_mutation::quorum_off_by_one}};
      g.world_mut = read_enum(*x, child(path, "mutation"), muts);
      // The broken count is the quorum client's: every run must be one.
      if (g.world_mut == world_mutation::quorum_off_by_one) {
        const bool all_quorum = g.lease.variants.empty() &&
                                std::all_of(g.lease.protocols.begin(), g.lease.protocols.end(), [](const protocol_ref& p) {
                                  return p.proto->client.quorum == redis::quorum_rule::majority;
                                });
        if (!all_quorum)
          fail(child(path, "mutation"), "\"quorum_off_by_one\" only in a gate whose every run is a protocol with "
                                        "client.quorum \"majority\"", *x);
      }
      // The broken acquires replace a built-in script; a protocol's script is the user's own.
      if (!g.lease.protocols.empty() &&
          (g.world_mut == world_mutation::check_then_add || g.world_mut == world_mutation::no_reaping))
        fail(child(path, "mutation"), "\"none\" or \"fail_open\" in a gate with protocols (the other mutations "
                                      "replace a built-in acquire)", *x);
    }
    if (const json* x = r.get("process")) {
      // The fleet's client runs in a child per worker; the server keeps its permits as the seed does
      // (the gate key, a sorted set scored by acquire time), which is what the world judges.
      g.process = read_process(*x, child(path, "process"));
      if (!g.lease.protocols.empty())
        fail_msg(child(path, "protocol"), "expected no protocol in a gate whose client is a process (its client "
                                           "is the child's own code; the server side is the seed's sorted set)");
      if (g.lease.variants != std::vector<redis::variant>{redis::variant::seed})
        fail(child(path, "variant"), "\"seed\" (or no variant) in a gate whose client is a process: the server "
                                     "keeps its permits as the seed does, at the gate's key",
             v.at("variant"));
      if (g.world_mut != world_mutation::none && g.world_mut != world_mutation::fail_open)
        fail(child(path, "mutation"), "\"none\" or \"fail_open\" in a gate whose client is a process (the other "
                                      "mutations break admitsim's own acquire, which does not run there)", v["mutation"]);
    }
    r.finish();
    return g;
  }
  g.fifo.max_active = read_int(r.require("max_active", "the cap on active leases"), child(path, "max_active"), 1,
                               fifo::max_active_limit);
  if (const json* x = r.get("max_waiting"))
    g.fifo.max_waiting = read_int(*x, child(path, "max_waiting"), 0, fifo::max_waiting_limit);
  if (const json* x = r.get("wait_deadline"))
    g.fifo.wait_deadline_ns = read_duration(*x, child(path, "wait_deadline"), 1, fifo::wait_deadline_ns_limit);
  if (const json* x = r.get("event_log"))
    g.fifo.event_log_capacity = read_int(*x, child(path, "event_log"), 0, fifo::event_log_capacity_limit);
  if (const json* x = r.get("mutation")) {
    // Core mutations break the sans-IO gate; release_before_work_ends breaks the driver.
    static const std::pair<const char*, int> muts[] = {
        {"none", 0},
        {"leak_handover_on_cancel", 1},
        {"admit_off_by_one", 2},
        {"newcomers_jump_queue", 3},
        {"double_release_on_timeout", 4},
        {"release_before_work_ends", 5}};
    static const fifo::mutation core[] = {fifo::mutation::none, fifo::mutation::leak_handover_on_cancel,
                                          fifo::mutation::admit_off_by_one, fifo::mutation::newcomers_jump_queue,
                                          fifo::mutation::double_release_on_timeout};
    const int m = read_enum(*x, child(path, "mutation"), muts);
    if (m == 5)
      g.world_mut = world_mutation::release_before_work_ends;
    else
      g.fifo.mut = core[m];
  }
  if (const json* x = r.get("process")) {
    g.process = read_process(*x, child(path, "process"));
    if (g.fifo.mut != fifo::mutation::none)
      fail(child(path, "mutation"), "\"none\" or \"release_before_work_ends\" in a gate with a process (the other "
                                    "mutations break admitsim's own core, which does not run there)", v["mutation"]);
  }
  r.finish();
  return g;
}

std::string gate_names(const std::vector<gate_spec>& gates) {
  std::string s;
  for (const auto& g : gates) s += (s.empty() ? "\"" : ", \"") + g.name + "\"";
  return s;
}

// A request's or generator's "gate": named, or the only gate by default.
void read_gate_ref(object_reader& q, const std::string& p, const std::vector<gate_spec>& gates, std::string& name,
                   std::size_t& index) {
  if (const json* g = q.get("gate")) {
    name = read_name(*g, child(p, "gate"));
    for (std::size_t i = 0; i < gates.size(); ++i)
      if (gates[i].name == name) {
        index = i;
        return;
      }
    fail(child(p, "gate"), "the name of a gate of this scenario (" + gate_names(gates) + ")", *g);
  }
  if (gates.size() != 1) fail_msg(p, "missing required key \"gate\" (the scenario has several gates)");
  name = gates[0].name;
  index = 0;
}

// --- fleet --------------------------------------------------------------------

void read_clock_fields(object_reader& r, clock_spec& c) {
  if (const json* x = r.get("offset"))
    c.offset_ns = read_signed_duration(*x, child(r.path(), "offset"), clock_offset_ns_max);
  if (const json* x = r.get("drift_ppm"))
    c.drift_ppm = read_int(*x, child(r.path(), "drift_ppm"), -drift_ppm_max, drift_ppm_max);
}

fleet_spec read_fleet(const json& v) {
  object_reader r(v, "/fleet", "a fleet object");
  fleet_spec f;
  if (const json* x = r.get("workers")) f.workers = read_int(*x, "/fleet/workers", 1, workers_max);
  if (const json* x = r.get("on_acquire_timeout")) {
    static constexpr std::pair<const char*, acquire_timeout_policy> models[] = {
        {"defer", acquire_timeout_policy::defer}, {"requeue_and_exit", acquire_timeout_policy::requeue_and_exit}};
    f.on_acquire_timeout = read_enum(*x, "/fleet/on_acquire_timeout", models);
  }
  if (const json* x = r.get("clock")) {
    object_reader c(*x, "/fleet/clock", "a clock object such as {\"offset\": \"-250ms\", \"drift_ppm\": 100}");
    read_clock_fields(c, f.clock);
    c.finish();
  }
  if (const json* x = r.get("clocks")) {
    if (!x->is_array() || x->size() > static_cast<std::size_t>(f.workers))
      fail("/fleet/clocks", "a list of at most " + std::to_string(f.workers) + " clock overrides (one per worker)",
           *x);
    for (std::size_t i = 0; i < x->size(); ++i) {
      const std::string p = child("/fleet/clocks", i);
      object_reader c((*x)[i], p, "a clock override such as {\"worker\": 3, \"offset\": \"+2s\"}");
      const std::int64_t w = read_int(c.require("worker", "the worker's index"), child(p, "worker"), 0, f.workers - 1);
      for (const auto& [other, _] : f.clocks)
        if (other == w) fail(child(p, "worker"), "a worker not overridden before", w);
      clock_spec cs = f.clock;  // fields not given keep the fleet's default
      read_clock_fields(c, cs);
      c.finish();
      f.clocks.emplace_back(w, cs);
    }
    std::sort(f.clocks.begin(), f.clocks.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  }
  r.finish();
  return f;
}

// --- workload -----------------------------------------------------------------

__extension__ typedef __int128 i128;  // exact bounds of arrival times; -Wpedantic wants the marker

std::string hours_rounded_up(i128 ns) {
  const i128 hour = 3600 * static_cast<i128>(sim::sec);
  return std::to_string(static_cast<long long>((ns + hour - 1) / hour)) + "h";
}

// The latest instant a generator's requests can reach (Poisson: the expected
// last arrival), exactly or as an upper bound; see arrivals.hpp.
i128 last_arrival_bound(const arrival_spec& a) {
  const i128 gaps = a.count - 1;
  switch (a.kind) {
    case arrival_kind::constant:
      return a.start_ns + gaps * a.every_ns;
    case arrival_kind::poisson:
      return a.start_ns + static_cast<i128>(a.count) * a.mean_gap_ns;
    case arrival_kind::ramp: {
      // Each gap is from + trunc(d * k / (gaps - 1)): the exact sum of the
      // unrounded gaps is gaps * from + d * gaps / 2, and truncation moves
      // each by less than 1 ns.
      const i128 d = static_cast<i128>(a.gap_to_ns) - a.gap_from_ns;
      return a.start_ns + gaps * a.gap_from_ns + (d * gaps) / 2 + gaps;
    }
    case arrival_kind::deadline_surge: {
      // No gap exceeds gap_far; once past the deadline every gap is gap_near.
      const i128 by_far = a.start_ns + gaps * a.gap_far_ns;
      const i128 by_near = static_cast<i128>(a.deadline_ns) + a.gap_far_ns + gaps * a.gap_near_ns;
      return std::min(by_far, by_near);
    }
  }
  return 0;
}

arrival_spec read_arrival(const json& v, const std::string& p, const std::vector<gate_spec>& gates) {
  object_reader q(v, p, "an arrivals generator object");
  static const std::pair<const char*, arrival_kind> kinds[] = {{"constant", arrival_kind::constant},
                                                               {"poisson", arrival_kind::poisson},
                                                               {"ramp", arrival_kind::ramp},
                                                               {"deadline_surge", arrival_kind::deadline_surge}};
  arrival_spec a;
  a.kind = read_enum(q.require("kind", "the generator's kind"), child(p, "kind"), kinds);
  a.count = read_int(q.require("count", "how many requests"), child(p, "count"), 1, arrival_count_max);
  if (const json* x = q.get("start")) a.start_ns = read_duration(*x, child(p, "start"), 0, arrival_time_limit_ns);
  read_gate_ref(q, p, gates, a.gate, a.gate_index);
  switch (a.kind) {
    case arrival_kind::constant:
      a.every_ns = read_duration(q.require("every", "the gap between requests"), child(p, "every"), 0, day_ns);
      break;
    case arrival_kind::poisson:
      a.mean_gap_ns = read_duration(q.require("mean_gap", "the mean gap"), child(p, "mean_gap"), 1, day_ns);
      break;
    case arrival_kind::ramp:
      a.gap_from_ns = read_duration(q.require("gap_from", "the first gap"), child(p, "gap_from"), 0, day_ns);
      a.gap_to_ns = read_duration(q.require("gap_to", "the last gap"), child(p, "gap_to"), 0, day_ns);
      break;
    case arrival_kind::deadline_surge: {
      const json& dl = q.require("deadline", "the instant of the deadline");
      a.deadline_ns = read_duration(dl, child(p, "deadline"), 0, arrival_time_limit_ns);
      if (a.deadline_ns <= a.start_ns)
        fail(child(p, "deadline"), "a time after start (" + format_duration(a.start_ns) + ")", dl);
      a.gap_far_ns = read_duration(q.require("gap_far", "the gap at start"), child(p, "gap_far"), 1, day_ns);
      const json& near = q.require("gap_near", "the gap at the deadline");
      a.gap_near_ns = read_duration(near, child(p, "gap_near"), 1, day_ns);
      if (a.gap_near_ns > a.gap_far_ns)
        fail(child(p, "gap_near"), "a gap not above gap_far (" + format_duration(a.gap_far_ns) + ")", near);
      break;
    }
  }
  if (const json* x = q.get("service")) a.service = read_dist(*x, child(p, "service"));
  if (const json* x = q.get("client_timeout")) a.client_timeout_ns = read_duration(*x, child(p, "client_timeout"), 1);
  if (const json* x = q.get("cancel_after")) a.cancel_after_ns = read_duration(*x, child(p, "cancel_after"));
  if (const json* x = q.get("fail_ppm")) a.fail_ppm = read_int(*x, child(p, "fail_ppm"), 0, 1'000'000);
  q.finish();
  const i128 last = last_arrival_bound(a);
  if (last > arrival_time_limit_ns)
    fail(child(p, "count"),
         "a count whose requests arrive by " + format_duration(arrival_time_limit_ns) + " (these would run to about " +
             hours_rounded_up(last) + ")",
         a.count);
  return a;
}

request_spec read_request(const json& v, const std::string& p, std::size_t i, const std::vector<gate_spec>& gates) {
  object_reader q(v, p, "a request object");
  request_spec rq;
  rq.id = q.has("id") ? read_name(*q.get("id"), child(p, "id")) : "r" + std::to_string(i + 1);
  (void)q.get("id");
  read_gate_ref(q, p, gates, rq.gate, rq.gate_index);
  rq.at_ns = read_duration(q.require("at", "the arrival time"), child(p, "at"), 0, arrival_time_limit_ns);
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
  return rq;
}

// --- faults -------------------------------------------------------------------

struct node_context {
  std::int64_t workers = 1;
  bool has_redis = false;  // a lease gate exists
  std::int64_t redis_nodes = 1;  // the lease gate's
};

std::string node_expectation(unsigned mask, const node_context& ctx) {
  std::vector<std::string> parts;
  if (mask & node_worker)
    parts.push_back(ctx.workers == 1 ? "\"worker:0\""
                                     : "\"worker:0\" to \"worker:" + std::to_string(ctx.workers - 1) + "\"");
  if (mask & node_redis) parts.push_back("\"redis\"");
  if (mask & node_portal) parts.push_back("\"portal\"");
  std::string s = "a node: ";
  for (std::size_t i = 0; i < parts.size(); ++i)
    s += (i == 0 ? "" : i + 1 == parts.size() ? " or " : ", ") + parts[i];
  if (mask & node_worker) s += " (fleet.workers is " + std::to_string(ctx.workers) + ")";
  return s;
}

// The node `v` names among `mask`'s (Redis only when the scenario has it), or nullopt.
std::optional<node_ref> parse_node(const json& v, unsigned mask, const node_context& ctx) {
  if (!ctx.has_redis) mask &= ~static_cast<unsigned>(node_redis);
  if (!v.is_string()) return std::nullopt;
  const std::string& s = v.get_ref<const std::string&>();
  node_ref n;
  if (s == "redis" && (mask & node_redis)) {
    n.k = node_ref::kind::redis;
    return n;
  }
  if (s == "portal" && (mask & node_portal)) {
    n.k = node_ref::kind::portal;
    return n;
  }
  constexpr std::string_view prefix = "worker:";
  if ((mask & node_worker) && s.size() > prefix.size() && s.size() <= prefix.size() + 6 &&
      s.compare(0, prefix.size(), prefix) == 0) {
    std::int64_t w = 0;
    bool digits = true;
    for (std::size_t i = prefix.size(); i < s.size(); ++i) {
      if (s[i] < '0' || s[i] > '9') digits = false;
      else w = w * 10 + (s[i] - '0');
    }
    const bool canonical = s.size() == prefix.size() + 1 || s[prefix.size()] != '0';  // no leading zeros
    if (digits && canonical && w < ctx.workers) {
      n.k = node_ref::kind::worker;
      n.worker = w;
      return n;
    }
  }
  return std::nullopt;
}

node_ref read_node(const json& v, const std::string& path, unsigned mask, const node_context& ctx) {
  if (const auto n = parse_node(v, mask, ctx)) return *n;
  fail(path, node_expectation(ctx.has_redis ? mask : mask & ~static_cast<unsigned>(node_redis), ctx), v);
}

unsigned node_bit(const node_ref& n) {
  switch (n.k) {
    case node_ref::kind::worker: return node_worker;
    case node_ref::kind::redis: return node_redis;
    case node_ref::kind::portal: return node_portal;
  }
  ADMIT_ASSERT(false, "a node is a worker, redis or the portal");
  return 0;
}

// The kinds `world` honours, as a message lists them: "a", "b" or "c".
std::string kinds_honoured(unsigned world) {
  std::vector<std::string> names;
  for (const auto& row : fault_kind_table)
    if (applies(row, world)) names.push_back("\"" + std::string(row.name) + "\"");
  ADMIT_ASSERT(!names.empty(), "every world honours some fault kind");
  std::string s;
  for (std::size_t i = 0; i < names.size(); ++i)
    s += (i == 0 ? "" : i + 1 == names.size() ? " or " : ", ") + names[i];
  return s;
}

// "target" and "between" of a fault, as its row allows them in `world`.
void read_fault_target(object_reader& r, fault_spec& f, const fault_targets& t, const node_context& ctx) {
  const std::string& p = r.path();
  ADMIT_ASSERT(t.rule != target_rule::none, "a kind the world refuses was refused before its target is read");
  // With a refusal text every value not allowed gets it; without, the list of the allowed nodes.
  auto target = [&](const json& x) {
    const std::string tp = child(p, "target");
    if (t.refused == nullptr) return read_node(x, tp, t.target, ctx);
    const auto n = parse_node(x, t.target, ctx);
    if (!n) fail(tp, t.refused, x);
    return *n;
  };
  if (t.rule != target_rule::target_or_link) {
    if (const json* x = r.get("target")) f.target = target(*x);
    else if (t.rule == target_rule::required)
      fail_msg(p, "missing required key \"target\" (" + node_expectation(t.target, ctx) + ")");
    else f.target = node_ref{t.target == node_redis ? node_ref::kind::redis : node_ref::kind::portal, 0};
    return;
  }
  const json* between = r.get("between");
  const json* one = r.get("target");
  if ((one != nullptr) == (between != nullptr))
    fail_msg(p, "expected exactly one of \"target\" (cut one node off) or \"between\" (cut one link)");
  if (one != nullptr) {
    f.target = target(*one);
    return;
  }
  const std::string bp = child(p, "between");
  if (!between->is_array() || between->size() != 2) fail(bp, t.refused, *between);
  const unsigned ends = t.link_end_a | t.link_end_b;
  const auto a = parse_node((*between)[0], ends, ctx);
  const auto b = parse_node((*between)[1], ends, ctx);
  if (!a || !b) fail(bp, t.refused, *between);
  if (*a == *b) fail(child(bp, 1), "a node other than the first", (*between)[1]);
  const bool a_first = (node_bit(*a) & t.link_end_a) && (node_bit(*b) & t.link_end_b);
  const bool b_first = (node_bit(*b) & t.link_end_a) && (node_bit(*a) & t.link_end_b);
  if (!a_first && !b_first) fail(bp, t.refused, *between);
  f.between = std::make_pair(*a, *b);
}

fault_spec read_fault(const json& v, const std::string& p, const node_context& ctx) {
  object_reader r(v, p, "a fault object such as {\"at\": \"10s\", \"kind\": \"crash\", \"target\": \"worker:0\"}");
  static const auto kinds = [] {
    std::array<std::pair<const char*, fault_kind>, fault_kind_count> out{};
    for (std::size_t i = 0; i < fault_kind_count; ++i) out[i] = {fault_kind_table[i].name, fault_kind_table[i].kind};
    return out;
  }();
  fault_spec f;
  f.at_ns = read_duration(r.require("at", "when the fault strikes"), child(p, "at"));
  const json& kind = r.require("kind", "what happens");
  f.kind = read_enum(kind, child(p, "kind"), kinds);
  const fault_kind_info& row = fault_row(f.kind);
  ADMIT_ASSERT(row.kind == f.kind, "a kind's row is at its place in the table");
  // A FIFO scenario is one server process ("worker:0") holding its gates in
  // memory: its world honours what can strike such a process, and the
  // loader refuses the rest rather than let it be ignored.
  const unsigned world = ctx.has_redis ? check::world_lease : check::world_fifo;
  if (!applies(row, world))
    fail(child(p, "kind"),
         std::string("a fault kind a ") + check::world_name(world) + " scenario honours (" + kinds_honoured(world) +
             "; \"" + row.name + "\" is refused: " + row.refused_why + ")",
         kind);
  read_fault_target(r, f, targets_in(row, world), ctx);
  if (const json* x = r.get("node")) {
    // Which of the gate's Redis nodes a fault on "redis" strikes.
    const bool on_redis = (f.target && f.target->k == node_ref::kind::redis) ||
                          (f.between && (f.between->first.k == node_ref::kind::redis ||
                                         f.between->second.k == node_ref::kind::redis));
    if (!on_redis) fail(child(p, "node"), "no \"node\" on a fault whose target (or link) is not \"redis\"", *x);
    const std::string what = "a Redis node index from 0 to " + std::to_string(ctx.redis_nodes - 1) +
                             " (gate.redis_nodes is " + std::to_string(ctx.redis_nodes) + ")";
    if (!x->is_number_integer() || x->get<std::int64_t>() < 0 || x->get<std::int64_t>() >= ctx.redis_nodes)
      fail(child(p, "node"), what, *x);
    f.node = x->get<std::int64_t>();
  }

  if (row.params & param_persistence)
    if (const json* x = r.get("persistence")) {
      static const std::pair<const char*, persistence> ps[] = {{"none", persistence::none},
                                                               {"aof_everysec", persistence::aof_everysec},
                                                               {"aof_always", persistence::aof_always}};
      f.persist = read_enum(*x, child(p, "persistence"), ps);
    }
  if (row.params & param_replication_lag)
    if (const json* x = r.get("replication_lag"))
      f.replication_lag_ns = read_duration(*x, child(p, "replication_lag"), 0, day_ns);
  switch (row.duration) {
    case fault_duration::none:
      break;
    case fault_duration::required:
      f.duration_ns = read_duration(r.require("duration", "how long the fault lasts"), child(p, "duration"), 1, day_ns);
      break;
    case fault_duration::restart_after:
      if (const json* x = r.get("duration")) f.duration_ns = read_duration(*x, child(p, "duration"), 1, day_ns);
      break;
    case fault_duration::downtime:
      f.duration_ns = 0;
      if (const json* x = r.get("duration")) f.duration_ns = read_duration(*x, child(p, "duration"), 0, day_ns);
      break;
  }
  if (row.params & param_client_timeout)
    f.client_timeout_ns = read_duration(r.require("client_timeout", "the clients' read timeout in the burst"),
                                        child(p, "client_timeout"), 1, day_ns);
  if (row.params & param_step) {
    const json& step = r.require("step", "how far the clock jumps, such as \"-2s\"");
    f.step_ns = read_signed_duration(step, child(p, "step"), day_ns);
    if (f.step_ns == 0) fail(child(p, "step"), "a non-zero signed duration such as \"-2s\"", step);
  }
  r.finish();

  // The fault holds exactly what its row allows (positive and negative space).
  const fault_targets& t = targets_in(row, world);
  ADMIT_ASSERT(f.target.has_value() != f.between.has_value(), "a fault names a target or a link, not both");
  if (f.target) {
    ADMIT_ASSERT((node_bit(*f.target) & t.target) != 0, "a fault's target is one its row allows");
  }
  if (f.between) {
    ADMIT_ASSERT(t.rule == target_rule::target_or_link, "only a kind that cuts links has one");
    ADMIT_ASSERT(!(f.between->first == f.between->second), "a link joins two distinct nodes");
  }
  ADMIT_ASSERT(f.duration_ns.has_value() == (row.duration == fault_duration::required ||
                                             row.duration == fault_duration::downtime || r.has("duration")),
               "a fault has a duration exactly when its row gives it one");
  if (f.duration_ns) {
    ADMIT_ASSERT(*f.duration_ns >= (row.duration == fault_duration::downtime ? 0 : 1), "a duration within its row's range");
    ADMIT_ASSERT(*f.duration_ns <= day_ns, "a duration is at most 24h");
  }
  if (!(row.params & param_step)) ADMIT_ASSERT(f.step_ns == 0, "only a kind with a step has one");
  if (row.params & param_step) ADMIT_ASSERT(f.step_ns != 0, "a step is never zero");
  if (!(row.params & param_persistence)) ADMIT_ASSERT(f.persist == persistence::none, "only a restart keeps data");
  if (!(row.params & param_replication_lag)) ADMIT_ASSERT(f.replication_lag_ns == 0, "only a failover has a lag");
  if (!(row.params & param_client_timeout)) ADMIT_ASSERT(f.client_timeout_ns == 0, "only a burst has a timeout");
  if (row.params & param_client_timeout) ADMIT_ASSERT(f.client_timeout_ns >= 1, "a burst's timeout is positive");
  return f;
}

fault_rates read_rates(const json& v) {
  object_reader r(v, "/faults/rates", "a rates object such as {\"crash_per_hour\": 2, \"until\": \"1h\"}");
  fault_rates fr;
  for (const fault_kind k : fault_rates_file_order) {
    const char* key = fault_row(k).rate.key;
    if (const json* x = r.get(key))
      fr.per_hour_of(k) = read_int(*x, child("/faults/rates", key), 0, fault_rate_per_hour_max);
  }
  if (const json* x = r.get("max_step")) fr.max_step_ns = read_duration(*x, "/faults/rates/max_step", 1, day_ns);
  if (const json* x = r.get("max_replication_lag"))
    fr.max_replication_lag_ns = read_duration(*x, "/faults/rates/max_replication_lag", 1, day_ns);
  if (const json* x = r.get("mean_duration"))
    fr.mean_duration_ns = read_duration(*x, "/faults/rates/mean_duration", 1, day_ns);
  if (const json* x = r.get("restart_persistence")) {
    static const std::pair<const char*, persistence> ps[] = {
        {"none", persistence::none}, {"aof_everysec", persistence::aof_everysec}, {"aof_always", persistence::aof_always}};
    const char* what = "a list of 1 to 3 distinct persistences (\"none\", \"aof_everysec\", \"aof_always\")";
    if (!x->is_array() || x->empty() || x->size() > 3) fail("/faults/rates/restart_persistence", what, *x);
    fr.restart_persistence.clear();
    for (std::size_t i = 0; i < x->size(); ++i) {
      const persistence p = read_enum((*x)[i], child("/faults/rates/restart_persistence", i), ps);
      if (std::find(fr.restart_persistence.begin(), fr.restart_persistence.end(), p) != fr.restart_persistence.end())
        fail(child("/faults/rates/restart_persistence", i), what, (*x)[i]);
      fr.restart_persistence.push_back(p);
    }
  }
  if (const json* x = r.get("until")) fr.until_ns = read_duration(*x, "/faults/rates/until", 1);
  else if (fr.any())
    fail_msg("/faults/rates", "missing required key \"until\" (when drawing faults stops; needed once a rate is set)");
  r.finish();
  if (v.contains("restart_persistence") && fr.per_hour_of(fault_kind::redis_restart) == 0)
    fail_msg("/faults/rates/restart_persistence",
             "expected no \"restart_persistence\" without a redis_restart_per_hour above 0 (no drawn restart reads it)");
  for (const auto& row : fault_kind_table)
    if (!drawable(row)) ADMIT_ASSERT(fr.per_hour_of(row.kind) == 0, "no rate for a kind rates cannot draw");
  return fr;
}

faults_spec read_faults(const json& v, const node_context& ctx) {
  object_reader r(v, "/faults", "a faults object with \"schedule\" and/or \"rates\"");
  faults_spec fs;
  if (const json* s = r.get("schedule")) {
    if (!s->is_array() || s->size() > 100'000) fail("/faults/schedule", "a list of at most 100000 faults", *s);
    for (std::size_t i = 0; i < s->size(); ++i)
      fs.schedule.push_back(read_fault((*s)[i], child("/faults/schedule", i), ctx));
  }
  if (const json* x = r.get("rates")) {
    fs.rates = read_rates(*x);
    const unsigned world = ctx.has_redis ? check::world_lease : check::world_fifo;
    for (const auto& row : fault_kind_table)
      if (drawable(row) && !applies(row, world) && fs.rates->per_hour_of(row.kind) > 0)
        fail_msg(child("/faults/rates", row.rate.key), std::string(row.rate_refused_why) + "; expected 0 or no key");
  }
  r.finish();
  return fs;
}

// --- cases --------------------------------------------------------------------

const char* const request_ref_what = "a request id (a name, or \"arrivals/G/N\" for a generated request)";

// "arrivals/G/N" with canonical decimal numbers; nullopt for anything else.
std::optional<std::pair<std::uint64_t, std::uint64_t>> parse_generated_id(std::string_view s) {
  constexpr std::string_view prefix = "arrivals/";
  if (s.substr(0, prefix.size()) != prefix) return std::nullopt;
  s.remove_prefix(prefix.size());
  const auto slash = s.find('/');
  if (slash == std::string_view::npos) return std::nullopt;
  auto number = [](std::string_view d) -> std::optional<std::uint64_t> {
    if (d.empty() || d.size() > 12 || (d.size() > 1 && d[0] == '0')) return std::nullopt;
    std::uint64_t n = 0;
    for (char c : d) {
      if (c < '0' || c > '9') return std::nullopt;
      n = n * 10 + static_cast<std::uint64_t>(c - '0');
    }
    return n;
  };
  const auto g = number(s.substr(0, slash));
  const auto n = number(s.substr(slash + 1));
  if (!g || !n) return std::nullopt;
  return std::make_pair(*g, *n);
}

std::string read_request_ref(const json& v, const std::string& path) {
  if (!v.is_string()) fail(path, request_ref_what, v);
  const std::string& s = v.get_ref<const std::string&>();
  if (parse_generated_id(s)) return s;
  return read_name(v, path);
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
    o.target = read_request_ref(*q, child(path, "response"));
  } else if (const json* c = r.get("client_exception")) {
    o.k = observation::kind::client_exception;
    o.target = read_request_ref(*c, child(path, "client_exception"));
  } else if (const json* obj = r.get("object")) {
    o.k = observation::kind::object;
    const std::string p = child(path, "object");
    if (!obj->is_object() || obj->empty()) fail(p, "an object of named observations", *obj);
    for (auto it = obj->begin(); it != obj->end(); ++it)
      o.children.emplace_back(it.key(), read_observation_value(it.value(), child(p, it.key())));
  }
  return o;
}

// The invariants of `world` as a message lists them: "one of \"a\", \"b\"".
std::string invariant_expectation(unsigned world) {
  std::string expected = "one of";
  bool first = true;
  for (const auto& row : check::invariant_table) {
    if ((row.worlds & world) == 0) continue;
    expected += std::string(first ? " " : ", ") + "\"" + row.name + "\"";
    first = false;
  }
  return expected;
}

// A list of distinct invariant names, each one that `world` checks.
std::vector<std::string> read_invariant_list(const json& v, const std::string& path, unsigned world) {
  if (!v.is_array()) fail(path, "a list of invariant names", v);
  std::vector<std::string> out;
  for (std::size_t i = 0; i < v.size(); ++i) {
    const json& x = v[i];
    if (x.is_string() && x.get_ref<const std::string&>() == "token_granted_once")
      // Retired: a member granted again takes no second permit (the report's lease.regrants counts it), and a
      // grant that does take one shows as gate_inflight_le_cap.
      fail(child(path, i),
           invariant_expectation(world) +
               "; token_granted_once is no longer an invariant (a held token granted again takes no second permit: "
               "the report counts it as lease.regrants)",
           x);
    if (!x.is_string() || check::find_invariant(x.get_ref<const std::string&>()) == nullptr)
      fail(child(path, i), invariant_expectation(world), x);
    if (!check::applies(x.get_ref<const std::string&>(), world))
      fail(child(path, i),
           "an invariant that a " + std::string(check::world_name(world)) + " scenario checks (" +
               invariant_expectation(world) + ")",
           x);
    if (std::find(out.begin(), out.end(), x.get<std::string>()) != out.end())
      fail(child(path, i), "an invariant not listed before", x);
    out.push_back(x.get<std::string>());
  }
  return out;
}

// {"verdict": ..., "violated": [...]}, the body of expect and of each of its variants.
// An expected-violated list may name only invariants the run checks: one
// that checks.invariants switched off could never break, so expecting it to
// would be a verdict no run can give.
void read_verdict(object_reader& r, const checks_spec& checks, unsigned world, std::string& verdict,
                  std::vector<std::string>& violated) {
  static const std::pair<const char*, int> verdicts[] = {{"pass", 0}, {"violation", 1}, {"inconclusive", 2}};
  const int v = read_enum(r.require("verdict", "\"pass\", \"violation\" or \"inconclusive\""),
                          child(r.path(), "verdict"), verdicts);
  verdict = v == 0 ? "pass" : v == 1 ? "violation" : "inconclusive";
  if (const json* inv = r.get("violated")) {
    const std::string p = child(r.path(), "violated");
    violated = read_invariant_list(*inv, p, world);
    if (verdict != "violation" && !violated.empty())
      fail_msg(p, "must be empty when the expected verdict is \"" + verdict + "\"");
    if (!checks.invariants.empty())
      for (std::size_t i = 0; i < violated.size(); ++i)
        if (std::find(checks.invariants.begin(), checks.invariants.end(), violated[i]) == checks.invariants.end())
          fail(child(p, i), "an invariant that checks.invariants enables (it lists only the ones it checks)",
               violated[i]);
  }
}

// Fields that only one world reads are refused in the other, so that no field
// is accepted and then silently ignored (docs/scenarios.md, "Which world
// reads what"; tests/scenario/world_fields_test.cpp holds the table).
void refuse_fields_of_other_world(const json& doc, const scenario& sc) {
  const unsigned world = world_of(sc);
  if (world == check::world_fifo) {
    const char* why = "not read by a FIFO scenario: its gates run in one process (worker:0) with no wall clock; "
                      "fleet is for a lease gate's workers; expected no key";
    if (doc.contains("fleet")) fail_msg("/fleet", why);
    const auto sv = doc.find("service");
    if (sv != doc.end() && sv->is_object() && sv->contains("over_cap"))
      fail_msg("/service/over_cap",
               "not read by a FIFO scenario: its portal serves everything and the monitors count what runs above "
               "its cap; expected no key");
    if (sv != doc.end() && sv->is_object() && sv->contains("on_client_close"))
      fail_msg("/service/on_client_close",
               "not read by a FIFO scenario: its portal's connections are the server process's, which a client's "
               "timeout does not close (the handler holds its lease and its work to the end); expected no key");
    return;
  }
  auto refuse_each = [&](const char* list, const char* const* keys, std::size_t n, const char* why) {
    const auto wl = doc.find("workload");
    if (wl == doc.end()) return;
    const auto items = wl->find(list);
    if (items == wl->end()) return;
    for (std::size_t i = 0; i < items->size(); ++i)
      for (std::size_t k = 0; k < n; ++k)
        if ((*items)[i].contains(keys[k]))
          fail_msg(child(child(child("/workload", list), i), keys[k]), why);
  };
  static const char* const request_keys[] = {"cancel_at", "fail"};
  static const char* const arrival_keys[] = {"cancel_after", "fail_ppm"};
  const char* why = "not read by a lease scenario: a lease worker runs each item to its end (cancellation and "
                    "start-up failure are modelled by the FIFO world); expected no key";
  refuse_each("requests", request_keys, std::size(request_keys), why);
  refuse_each("arrivals", arrival_keys, std::size(arrival_keys), why);
  if (!sc.cases.empty())
    fail_msg("/cases",
             "not read by a lease scenario: cases observe FIFO gate snapshots and HTTP responses; the lease world's "
             "report gives metrics and invariants per variant; expected no key");
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
      const std::string p = child("/gates", i);
      gate_spec g = read_gate((*many)[i], p, true);
      for (const auto& other : sc.gates) {
        if (other.name == g.name) fail(child(p, "name"), "a gate name not used before", g.name);
        if (g.kind == gate_kind::lease && other.kind == gate_kind::lease && g.lease.key == other.lease.key)
          fail(child(p, "key"), "a Redis key that no other lease gate uses (two gates on one key share permits)",
               g.lease.key);
      }
      sc.gates.push_back(std::move(g));
    }
  }
  const bool has_lease = std::any_of(sc.gates.begin(), sc.gates.end(),
                                     [](const gate_spec& g) { return g.kind == gate_kind::lease; });
  // A lease gate runs in the lease world, which simulates that one gate over
  // its fleet; FIFO gates share one process. No world runs a mix.
  if (has_lease && sc.gates.size() != 1) {
    fail_msg("/gates/1",
             "expected a lease gate to be the scenario's only gate (the lease world runs one lease gate; FIFO "
             "gates run together in the FIFO world), got " + std::to_string(sc.gates.size()) + " gates");
  }

  if (const json* f = top.get("fleet")) sc.fleet = read_fleet(*f);
  if (has_lease && sc.gates.front().process && sc.fleet.workers > lease_process_workers_max)
    fail("/fleet/workers",
         "at most " + std::to_string(lease_process_workers_max) +
             " workers in a fleet whose client is a process (one child each: /gate/process)",
         sc.fleet.workers);

  if (const json* sv = top.get("service")) {
    object_reader r(*sv, "/service", "a service object");
    if (const json* c = r.get("portal_cap")) sc.service.portal_cap = read_int(*c, "/service/portal_cap", 1, 100'000'000);
    if (const json* t = r.get("service_time")) sc.service.service_time = read_dist(*t, "/service/service_time");
    if (const json* t = r.get("client_timeout"))
      sc.service.client_timeout_ns = read_duration(*t, "/service/client_timeout", 1);
    if (const json* t = r.get("over_cap")) {
      if (t->is_string() && t->get<std::string>() == "queue")
        fail_msg("/service/over_cap",
                 "a portal that queues connections above its cap is not modelled; expected \"reject_429\" or \"serve\"");
      static const std::pair<const char*, service_spec::over_cap_policy> policies[] = {
          {"reject_429", service_spec::over_cap_policy::reject_429}, {"serve", service_spec::over_cap_policy::serve}};
      sc.service.over_cap = read_enum(*t, "/service/over_cap", policies);
    }
    if (const json* t = r.get("on_client_close")) {
      static const std::pair<const char*, service_spec::client_close_policy> policies[] = {
          {"keep_work", service_spec::client_close_policy::keep_work},
          {"free_slot", service_spec::client_close_policy::free_slot}};
      sc.service.on_client_close = read_enum(*t, "/service/on_client_close", policies);
    }
    r.finish();
  }

  const json& wl = top.require("workload", "what arrives when");
  {
    object_reader r(wl, "/workload", "a workload object");
    if (const json* reqs = r.get("requests")) {
      if (!reqs->is_array() || reqs->size() > explicit_requests_max)
        fail("/workload/requests", "a list of at most " + std::to_string(explicit_requests_max) + " requests", *reqs);
      std::set<std::string> ids;
      for (std::size_t i = 0; i < reqs->size(); ++i) {
        const std::string p = child("/workload/requests", i);
        request_spec rq = read_request((*reqs)[i], p, i, sc.gates);
        if (!ids.insert(rq.id).second) fail(child(p, "id"), "a request id not used before", rq.id);
        sc.requests.push_back(std::move(rq));
      }
    }
    if (const json* gens = r.get("arrivals")) {
      if (!gens->is_array() || gens->size() > arrival_generators_max)
        fail("/workload/arrivals",
             "a list of at most " + std::to_string(arrival_generators_max) + " arrivals generators", *gens);
      for (std::size_t i = 0; i < gens->size(); ++i)
        sc.arrivals.push_back(read_arrival((*gens)[i], child("/workload/arrivals", i), sc.gates));
    }
    if (sc.requests.empty() && sc.arrivals.empty())
      fail_msg("/workload", "expected at least one request: a non-empty \"requests\" or \"arrivals\" list");
    r.finish();
  }
  std::set<std::string> request_ids;
  for (const auto& rq : sc.requests) request_ids.insert(rq.id);
  auto request_exists = [&](const std::string& id) {
    if (const auto g = parse_generated_id(id))
      return g->first < sc.arrivals.size() && g->second < static_cast<std::uint64_t>(sc.arrivals[g->first].count);
    return request_ids.count(id) != 0;
  };

  std::int64_t redis_nodes = 1;
  for (const gate_spec& g : sc.gates)
    if (g.kind == gate_kind::lease) redis_nodes = g.lease.redis_nodes;
  const node_context nodes{sc.fleet.workers, has_lease, redis_nodes};
  if (const json* f = top.get("faults")) sc.faults = read_faults(*f, nodes);

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
        // Not a structured binding: clang 14 cannot capture one in the lambda below.
        const observation* o = stack.back().first;
        const std::string op = stack.back().second;
        stack.pop_back();
        if (o->k == observation::kind::snapshot &&
            std::none_of(sc.gates.begin(), sc.gates.end(), [&](const gate_spec& g) { return g.name == o->target; }))
          fail(child(op, "snapshot"), "the name of a gate of this scenario (" + gate_names(sc.gates) + ")", o->target);
        if ((o->k == observation::kind::response || o->k == observation::kind::client_exception) &&
            !request_exists(o->target))
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
      sc.checks.invariants = read_invariant_list(*inv, "/checks/invariants", world_of(sc));
      if (sc.checks.invariants.empty())
        fail("/checks/invariants",
             "a non-empty list of invariants to check (leave the key out to check all of them)", *inv);
    }
    if (const json* x = r.get("max_events"))
      sc.checks.max_events = static_cast<std::uint64_t>(read_int(*x, "/checks/max_events", 1, 10'000'000'000));
    if (const json* x = r.get("horizon")) sc.checks.horizon_ns = read_duration(*x, "/checks/horizon", 1);
    if (const json* x = r.get("max_wall"))
      sc.checks.max_wall_ns = read_duration(*x, "/checks/max_wall", sim::ms, day_ns);
    if (const json* x = r.get("trace")) sc.checks.trace_capacity = read_int(*x, "/checks/trace", 0, 100'000);
    if (const json* x = r.get("stop_at_first")) sc.checks.stop_at_first = read_bool(*x, "/checks/stop_at_first");
    if (const json* x = r.get("liveness_horizon")) {
      sc.checks.liveness_horizon_ns = read_duration(*x, "/checks/liveness_horizon", 1);
      if (*sc.checks.liveness_horizon_ns > sc.checks.horizon_ns)
        fail("/checks/liveness_horizon",
             "a duration not after checks.horizon (" + format_duration(sc.checks.horizon_ns) + ")", *x);
    }
    r.finish();
  }

  // Faults must heal by the liveness horizon (a crash without a restart never
  // heals: what it leaves behind is what liveness judges).
  if (const auto lh = sc.checks.liveness_horizon_ns) {
    const std::string horizon = "checks.liveness_horizon (" + format_duration(*lh) + ")";
    for (std::size_t i = 0; i < sc.faults.schedule.size(); ++i) {
      const fault_spec& f = sc.faults.schedule[i];
      const std::string p = child("/faults/schedule", i);
      const json& src = doc["faults"]["schedule"][i];
      if (f.at_ns > *lh) fail(child(p, "at"), "a time not after " + horizon, src["at"]);
      if (f.duration_ns && src.contains("duration") && f.at_ns + *f.duration_ns > *lh)
        fail(child(p, "duration"),
             "a duration that ends the fault (at " + format_duration(f.at_ns) + ") by " + horizon, src["duration"]);
    }
    if (sc.faults.rates && sc.faults.rates->any() && sc.faults.rates->until_ns > *lh)
      fail("/faults/rates/until", "a time not after checks.liveness_horizon (" + format_duration(*lh) + ")",
           doc["faults"]["rates"]["until"]);
  }

  if (const json* ex = top.get("expect")) {
    object_reader r(*ex, "/expect", "an expect object");
    read_verdict(r, sc.checks, world_of(sc), sc.expect.verdict, sc.expect.violated);
    if (const json* vs = r.get("variants")) {
      if (!vs->is_object()) fail("/expect/variants", "an object mapping lease variants (or protocols) to verdicts", *vs);
      std::string names;
      for (const auto& g : sc.gates)
        if (g.kind == gate_kind::lease)
          for (const std::string& n : run_names(g.lease)) names += (names.empty() ? "\"" : ", \"") + n + "\"";
      for (auto it = vs->begin(); it != vs->end(); ++it) {
        const std::string p = child("/expect/variants", it.key());
        variant_expect ve;
        ve.variant = it.key();
        const bool runs = std::any_of(sc.gates.begin(), sc.gates.end(), [&](const gate_spec& g) {
          if (g.kind != gate_kind::lease) return false;
          const std::vector<std::string> ns = run_names(g.lease);
          return std::find(ns.begin(), ns.end(), ve.variant) != ns.end();
        });
        if (!runs)
          fail(p, names.empty() ? std::string("no per-variant verdict in a scenario without a lease gate")
                                : "a variant or protocol that a lease gate of this scenario runs (" + names + ")",
               it.key());
        object_reader vr(it.value(), p, "a verdict object such as {\"verdict\": \"pass\"}");
        read_verdict(vr, sc.checks, world_of(sc), ve.verdict, ve.violated);
        vr.finish();
        sc.expect.variants.push_back(std::move(ve));
      }
    }
    r.finish();
  }
  top.finish();
  refuse_fields_of_other_world(doc, sc);
  check_memory_estimate(sc, doc);  // refuses a worst case beyond memory_limit_bytes (memory_estimate.hpp)
  return sc;
}

namespace {
// A process gate's "cwd" is relative to the scenario file's folder: it is
// written into the document as the absolute folder it names, so that the
// document (embedded in reports, written as a counterexample elsewhere) runs
// the child in the same place from anywhere.
void absolute_process_cwd(json& gate, const std::string& base_dir) {
  if (!gate.is_object()) return;
  const auto p = gate.find("process");
  if (p == gate.end() || !p->is_object()) return;
  std::string cwd = ".";
  if (const auto c = p->find("cwd"); c != p->end()) {
    if (!c->is_string()) return;  // refused with its path by read_process
    cwd = c->get<std::string>();
  }
  if (cwd.empty() || cwd.find('\0') != std::string::npos) return;
  std::filesystem::path dir(cwd);
  if (dir.is_relative()) {
    std::error_code ec;
    std::filesystem::path base(base_dir.empty() ? "." : base_dir);
    if (base.is_relative()) base = std::filesystem::current_path(ec) / base;
    dir = base / dir;
  }
  std::string abs = dir.lexically_normal().string();
  if (abs.size() > 1 && abs.back() == '/') abs.pop_back();
  (*p)["cwd"] = abs;
}
}  // namespace

void absolute_process_cwds(json& doc, const std::string& base_dir) {
  if (!doc.is_object()) return;
  if (const auto g = doc.find("gate"); g != doc.end()) absolute_process_cwd(*g, base_dir);
  if (const auto gs = doc.find("gates"); gs != doc.end() && gs->is_array())
    for (json& g : *gs) absolute_process_cwd(g, base_dir);
}

scenario load_scenario_text(std::string_view text, json& doc) { return load_scenario_text(text, doc, load_files{}); }

scenario load_scenario_text(std::string_view text, json& doc, const load_files& files) {
  if (text.empty()) throw scenario_error("/", "expected a JSON object, got an empty file");
  // In time linear in the text; refuses duplicate keys, deep nesting and a
  // NUL byte with their paths (sim/scenario/json_parse.hpp).
  doc = parse_json_text(text);
  if (files.read) {
    inline_protocol_files(doc, files.base_dir, files.read);
    absolute_process_cwds(doc, files.base_dir);
  }
  return load_scenario_json(doc);
}

scenario load_scenario_text(std::string_view text) {
  json doc;
  const json_dismantler teardown{doc};  // frees the document without allocating, also while unwinding a bad_alloc
  return load_scenario_text(text, doc);
}

file_reader plain_file_reader(std::size_t limit) {
  return [limit](const std::string& path) {
    std::error_code ec;
    const auto st = std::filesystem::status(path, ec);
    if (ec || !std::filesystem::is_regular_file(st))
      throw std::runtime_error(path + ": expected a regular file");
    std::ifstream in(path, std::ios::binary);
    if (!in) throw std::runtime_error(path + ": cannot be opened");
    std::string bytes;
    char buf[65536];
    while (in.read(buf, sizeof buf) || in.gcount() > 0) {
      bytes.append(buf, static_cast<std::size_t>(in.gcount()));
      if (bytes.size() > limit) throw std::runtime_error(path + ": larger than " + std::to_string(limit) + " bytes");
    }
    return bytes;
  };
}

scenario load_scenario_file(const std::string& path, json& doc) {
  const file_reader read = plain_file_reader();
  return load_scenario_text(read(path), doc, load_files{directory_of(path), read});
}

scenario load_scenario_file(const std::string& path) {
  json doc;
  const json_dismantler teardown{doc};
  return load_scenario_file(path, doc);
}

std::string printable(std::string_view s) { return printable_bytes(s); }

}  // namespace admit::scenario
