#include "sim/scenario/protocol_loader.hpp"

#include <algorithm>
#include <iterator>
#include <set>

#include "gate/redis/sha1.hpp"
#include "sim/scenario/json_parse.hpp"
#include "sim/scenario/json_read.hpp"

namespace admit::scenario {

namespace {

using namespace json_read;
using redis::arg_template;
using redis::placeholder;
using redis::protocol;
using redis::protocol_call;
using redis::reply_rule;

constexpr vtime_ns hour_ns = 3600 * sim::sec;

template <class E, std::size_t N>
E read_named(const json& v, const std::string& path, const char* const (&names)[N]) {
  std::array<std::pair<const char*, E>, N> options{};
  for (std::size_t i = 0; i < N; ++i) options[i] = {names[i], static_cast<E>(i)};
  return read_enum(v, path, options);
}

arg_template read_template(const json& v, const std::string& path) {
  const std::string what = "a string template such as \"{key}\" or \"{key}:fence\" (placeholders {key} {token} "
                           "{limit} {lease_ms} {now_ms} {expiry_ms} {queue_timeout_ms} {permit}), or an integer";
  if (v.is_number_integer()) {
    // A literal number, as the caller would pass it.
    arg_template t;
    t.pieces.push_back(arg_template::piece{v.dump(), std::nullopt});
    return t;
  }
  if (!v.is_string()) fail(path, what, v);
  const std::string& text = v.get_ref<const std::string&>();
  if (text.size() > 512) fail(path, "a template of at most 512 bytes", v);
  std::string why;
  std::optional<arg_template> t = arg_template::parse(text, why);
  if (!t) fail(path, "a template without " + why, v);
  return std::move(*t);
}

std::vector<arg_template> read_templates(const json& v, const std::string& path, std::size_t min_n) {
  const std::string what = "an array of " + std::to_string(min_n) + " to " + std::to_string(protocol_call_args_max) +
                           " templates";
  if (!v.is_array() || v.size() < min_n || v.size() > protocol_call_args_max) fail(path, what, v);
  std::vector<arg_template> out;
  for (std::size_t i = 0; i < v.size(); ++i) out.push_back(read_template(v[i], child(path, i)));
  return out;
}

std::size_t script_index(const protocol& p, const json& v, const std::string& path) {
  std::string names;
  for (const auto& s : p.scripts) names += (names.empty() ? "\"" : ", \"") + s.name + "\"";
  const std::string what = "the name of a script of /scripts (" + names + ")";
  if (!v.is_string()) fail(path, what, v);
  for (std::size_t i = 0; i < p.scripts.size(); ++i)
    if (p.scripts[i].name == v.get_ref<const std::string&>()) return i;
  fail(path, what, v);
}

// A reply rule: a name, or {"element": N, "is": NAME} for the Nth element of an array reply.
redis::reply_read read_rule(const json& v, const std::string& path, bool permit_allowed) {
  std::string names;
  for (const char* n : redis::reply_rule_names)
    if (permit_allowed || std::string_view(n) != "permit_id") names += (names.empty() ? "\"" : ", \"") + std::string(n) + "\"";
  const std::string what = "a reply rule (" + names + "), or {\"element\": N, \"is\": RULE} to read the Nth (from 1) element of an array reply";
  redis::reply_read how;
  const json* name = &v;
  std::string name_path = path;
  if (v.is_object()) {
    object_reader r(v, path, what);
    how.element = static_cast<std::size_t>(read_int(r.require("element", "the element's position, 1 to 16 (as Lua counts)"),
                                                    child(path, "element"), 1, static_cast<std::int64_t>(redis::reply_element_max)));
    name = &r.require("is", "the rule the element is read by");
    name_path = child(path, "is");
    r.finish();
  } else if (!v.is_string()) {
    fail(path, what, v);
  }
  how.rule = read_named<reply_rule>(*name, name_path, redis::reply_rule_names);
  if (how.rule == reply_rule::permit_id && !permit_allowed)
    fail(name_path, "a rule other than \"permit_id\" (only the acquire's reply carries a permit id)", *name);
  return how;
}

// What a call is for: what it may pass and how its reply is read.
enum class call_role : std::uint8_t { acquire, release, renew, setup };

// acquire / renew / release / a set-up call: a script call; release and set-up may be a plain command.
// `permits`: the acquire's grant is a permit id, which release and renew may pass as {permit}.
protocol_call read_call(const protocol& p, const json& v, const std::string& path, const char* rule_key,
                        reply_rule default_rule, call_role role, bool permits) {
  const bool command_allowed = role == call_role::release || role == call_role::setup;
  object_reader r(v, path,
                  command_allowed ? "a call object: {\"script\": NAME, \"keys\": [...], \"args\": [...]} or "
                                    "{\"command\": [\"ZREM\", \"{key}\", \"{token}\"]}"
                                  : "a call object: {\"script\": NAME, \"keys\": [...], \"args\": [...]}");
  protocol_call c;
  c.rule.rule = default_rule;
  if (!command_allowed && r.has("command"))
    fail_msg(child(path, "command"), "expected no \"command\" in " + path.substr(path.rfind('/') + 1) +
                                         ": only release and set-up calls may be a plain command (acquire and renew call a script)");
  const json* command = command_allowed ? r.get("command") : nullptr;
  if (command != nullptr) {
    if (r.has("script") || r.has("keys") || r.has("args"))
      fail_msg(child(path, "command"), "a call is a script or a command, not both");
    c.command = read_templates(*command, child(path, "command"), 1);
    if (c.command.front().pieces.size() != 1 || c.command.front().pieces.front().value)
      fail(child(child(path, "command"), std::size_t{0}), "a command name (literal text)", (*command)[0]);
  } else {
    c.script = script_index(p, r.require("script", "the script it runs"), child(path, "script"));
    if (const json* x = r.get("keys")) c.keys = read_templates(*x, child(path, "keys"), 0);
    if (const json* x = r.get("args")) c.args = read_templates(*x, child(path, "args"), 0);
  }
  if (const json* x = r.get(rule_key)) c.rule = read_rule(*x, child(path, rule_key), role == call_role::acquire);
  if (const json* x = r.get("timeout")) {
    if (role == call_role::setup) fail(child(path, "timeout"), "no \"timeout\" in a set-up call (it runs before any client)", *x);
    if (x->is_string() && x->get_ref<const std::string&>() == "none")
      c.timeout_ns = 0;
    else if (x->is_string())
      c.timeout_ns = read_duration(*x, child(path, "timeout"), 1, hour_ns);
    else
      fail(child(path, "timeout"), "\"none\" or a duration from 1ns to 1h", *x);
  }
  r.finish();
  if (role == call_role::setup) {
    if (c.uses(placeholder::token) || c.uses(placeholder::permit))
      fail_msg(path, "expected a set-up call without {token} or {permit} (it runs once for the gate, for no caller)");
    return c;
  }
  if (c.uses(placeholder::permit) && (role == call_role::acquire || !permits))
    fail_msg(path, role == call_role::acquire
                       ? std::string("expected an acquire without {permit} (the permit id is what the acquire answers)")
                       : std::string("expected no {permit}: it is the permit id an acquire answers, and this "
                                     "protocol's acquire reads its grant by a rule other than \"permit_id\""));
  const bool tracked = c.uses(placeholder::token) || (role != call_role::acquire && c.uses(placeholder::permit)) ||
                       (role == call_role::acquire && c.rule.rule == reply_rule::permit_id);
  if (!tracked)
    fail_msg(path, permits ? "expected a call that passes {token} or {permit} in its keys, args or command (each "
                             "permit is tracked by its token or its id)"
                           : "expected a call that passes {token} in its keys, args or command (each permit is tracked "
                             "by its token)");
  return c;
}

redis::retry_policy read_retry(const json& v, const std::string& path) {
  object_reader r(v, path,
                  "a retry object such as {\"kind\": \"fixed\", \"delay\": \"200ms\"} or {\"kind\": "
                  "\"exponential\", \"base\": \"50ms\", \"max\": \"2s\", \"jitter\": \"full\"}");
  static const std::pair<const char*, bool> kinds[] = {{"fixed", false}, {"exponential", true}};
  redis::retry_policy b;
  b.exponential = read_enum(r.require("kind", "\"fixed\" or \"exponential\""), child(path, "kind"), kinds);
  if (!b.exponential) {
    if (const json* x = r.get("delay")) b.delay_ns = read_duration(*x, child(path, "delay"), 1, hour_ns);
  } else {
    if (const json* x = r.get("base")) b.base_ns = read_duration(*x, child(path, "base"), 1, hour_ns);
    if (const json* x = r.get("max")) {
      b.max_ns = read_duration(*x, child(path, "max"), 1, hour_ns);
      if (b.max_ns < b.base_ns) fail(child(path, "max"), "a duration not below base (" + format_duration(b.base_ns) + ")", *x);
    } else if (b.max_ns < b.base_ns) {
      b.max_ns = b.base_ns;
    }
    if (const json* x = r.get("jitter")) {
      static const std::pair<const char*, bool> jit[] = {{"full", true}, {"none", false}};
      b.full_jitter = read_enum(*x, child(path, "jitter"), jit);
    }
  }
  r.finish();
  return b;
}

redis::client_policy read_client(const protocol& p, const json& v, const std::string& path) {
  object_reader r(v, path, "a client policy object");
  redis::client_policy c;
  if (const json* x = r.get("retry")) c.retry = read_retry(*x, child(path, "retry"));
  if (const json* x = r.get("acquire_timeout"))
    c.acquire_timeout_ns = read_duration(*x, child(path, "acquire_timeout"), 0, day_ns);
  if (const json* x = r.get("on_give_up"))
    c.on_give_up = read_named<redis::give_up_action>(*x, child(path, "on_give_up"), redis::give_up_action_names);
  if (const json* x = r.get("on_lost_acquire"))
    c.on_lost_acquire = read_named<redis::lost_call_action>(*x, child(path, "on_lost_acquire"), redis::lost_call_action_names);
  if (const json* x = r.get("renew_every")) {
    const std::string at = child(path, "renew_every");
    if (!p.renew) fail(at, "no \"renew_every\" in a protocol without a \"renew\" call", *x);
    if (x->is_object()) {
      object_reader f(*x, at, "a duration such as \"4s\" or {\"lease_fraction\": 0.8}");
      c.renew_every_lease_fraction =
          read_double(f.require("lease_fraction", "a number above 0 and below 1"), child(at, "lease_fraction"), 0.001, 0.999);
      f.finish();
    } else {
      c.renew_every_ns = read_duration(*x, at, 1, day_ns);
    }
  }
  if (const json* x = r.get("renew_timing")) {
    if (!p.renew) fail(child(path, "renew_timing"), "no \"renew_timing\" in a protocol without a \"renew\" call", *x);
    c.renewal_timing = read_named<redis::renew_timing>(*x, child(path, "renew_timing"), redis::renew_timing_names);
  }
  if (const json* x = r.get("deadline_clock"))
    c.deadline = read_named<redis::deadline_clock>(*x, child(path, "deadline_clock"), redis::deadline_clock_names);
  if (const json* x = r.get("on_renewal_lost")) {
    if (!p.renew) fail(child(path, "on_renewal_lost"), "no \"on_renewal_lost\" in a protocol without a \"renew\" call", *x);
    c.on_renewal_lost = read_named<redis::renewal_loss>(*x, child(path, "on_renewal_lost"), redis::renewal_loss_names);
  }
  if (const json* x = r.get("restart_after")) {
    if (c.on_renewal_lost != redis::renewal_loss::crash_process)
      fail(child(path, "restart_after"), "no \"restart_after\" unless on_renewal_lost is \"crash_process\"", *x);
    c.restart_after_ns = read_duration(*x, child(path, "restart_after"), 1, hour_ns);
  }
  if (const json* x = r.get("wake_on")) {
    const std::string at = child(path, "wake_on");
    if (x->is_object()) {
      object_reader w(*x, at, "a channel template such as \"{key}:released\", or {\"channel\": TEMPLATE, \"sharded\": true}");
      c.wake_on = read_template(w.require("channel", "the channel template"), child(at, "channel"));
      if (const json* sh = w.get("sharded")) {
        if (!sh->is_boolean()) fail(child(at, "sharded"), "true (a shard channel: SSUBSCRIBE) or false (SUBSCRIBE)", *sh);
        c.wake_sharded = sh->get<bool>();
      }
      w.finish();
    } else {
      c.wake_on = read_template(*x, at);
    }
  }
  if (const json* x = r.get("on_client_timeout"))
    c.on_client_timeout = read_named<redis::timeout_permit>(*x, child(path, "on_client_timeout"), redis::timeout_permit_names);
  if (const json* x = r.get("acknowledge")) {
    const std::string at = child(path, "acknowledge");
    object_reader a(*x, at, "an acknowledge object such as {\"replicas\": 1, \"timeout\": \"50ms\"}");
    redis::acknowledge_policy ack;
    const json& n = a.require("replicas", "the number of replicas that must acknowledge a grant (an integer, 1 to 16)");
    ack.replicas = read_int(n, child(at, "replicas"), 1, acknowledge_replicas_max);
    const json& t = a.require("timeout", "how long WAIT waits for them (a duration of whole milliseconds, 1ms to 60s)");
    const vtime_ns timeout_ns = read_duration(t, child(at, "timeout"), sim::ms, 60 * sim::sec);
    if (timeout_ns % sim::ms != 0) fail(child(at, "timeout"), "a duration of whole milliseconds (WAIT takes milliseconds)", t);
    ack.timeout_ms = timeout_ns / sim::ms;
    a.finish();
    c.acknowledge = ack;
  }
  if (const json* x = r.get("quorum")) {
    c.quorum = read_named<redis::quorum_rule>(*x, child(path, "quorum"), redis::quorum_rule_names);
    // Not built: a renewal kept by a majority, and a wake-up over several nodes' channels.
    if (c.quorum != redis::quorum_rule::single && p.renew)
      fail(child(path, "quorum"), "\"single\" in a protocol with a \"renew\" call (a quorum client does not renew)", *x);
    if (c.quorum != redis::quorum_rule::single && c.wake_on)
      fail(child(path, "quorum"), "\"single\" in a protocol with \"wake_on\" (a quorum client does not listen)", *x);
    if (c.quorum != redis::quorum_rule::single && c.acknowledge)
      fail(child(path, "quorum"), "\"single\" in a protocol with \"acknowledge\" (a quorum client waits for no replica)", *x);
    if (c.quorum != redis::quorum_rule::single && c.on_lost_acquire != redis::lost_call_action::retry)
      fail(child(path, "quorum"), "\"single\" in a protocol with on_lost_acquire \"" +
                                      std::string(redis::lost_call_action_names[static_cast<std::size_t>(c.on_lost_acquire)]) +
                                      "\" (a quorum round counts its lost calls itself)", *x);
    if (c.quorum != redis::quorum_rule::single && p.grants_permit_ids())
      fail(child(path, "quorum"), "\"single\" in a protocol whose acquire answers permit ids (each node would answer its own)", *x);
    if (c.quorum != redis::quorum_rule::single && !p.setup.calls.empty())
      fail(child(path, "quorum"), "\"single\" in a protocol with set-up calls (not built for several nodes)", *x);
  }
  r.finish();
  return c;
}

void read_scripts(protocol& p, const json& v, const std::string& path) {
  const std::string what = "an object of 1 to " + std::to_string(protocol_scripts_max) +
                           " scripts by name, each {\"source\": LUA} (or {\"file\": PATH} in a protocol file)";
  if (!v.is_object() || v.empty() || v.size() > protocol_scripts_max) fail(path, what, v);
  for (auto it = v.begin(); it != v.end(); ++it) {
    const std::string at = child(path, it.key());
    (void)read_name(json(it.key()), at);
    object_reader r(it.value(), at, "a script object: {\"source\": LUA, \"origin\": FILE} or {\"file\": PATH}");
    if (r.has("file"))
      fail_msg(child(at, "file"), "a script file is read only where the protocol itself comes from a file (name the "
                                  "protocol file by path, or give the script's \"source\")");
    redis::protocol_script s;
    s.name = it.key();
    const json& src = r.require("source", "the script's Lua text");
    s.source = read_string(src, child(at, "source"), "the script's Lua text");
    if (s.source.empty() || s.source.size() > protocol_script_bytes_max)
      fail(child(at, "source"), "Lua text of 1 byte to 1 MiB", src);
    if (s.source.find('\0') != std::string::npos) fail(child(at, "source"), "Lua text without a NUL byte", src);
    s.sha = redis::sha1_hex(s.source);
    s.origin = "inline";
    if (const json* o = r.get("origin")) s.origin = read_string(*o, child(at, "origin"), "the file the source came from");
    r.finish();
    p.scripts.push_back(std::move(s));
  }
}

}  // namespace

redis::protocol read_protocol(const json& v, const std::string& path) {
  object_reader r(v, path, "a lease protocol object (docs/protocols.md)");
  const json& format = r.require("format", std::string("\"") + protocol_format + "\"");
  if (!format.is_string() || format.get_ref<const std::string&>() != protocol_format)
    fail(child(path, "format"), std::string("\"") + protocol_format + "\"", format);
  protocol p;
  p.name = read_name(r.require("name", "the protocol's name (names its runs in a report)"), child(path, "name"));
  if (const json* x = r.get("description")) p.description = read_string(*x, child(path, "description"), "a string");
  read_scripts(p, r.require("scripts", "the Lua scripts by name"), child(path, "scripts"));
  if (const json* x = r.get("setup")) {
    const std::string at = child(path, "setup");
    object_reader st(*x, at, "a set-up object: {\"calls\": [CALL, ...], \"again_after_restart\": false}");
    const json& calls = st.require("calls", "the set-up calls, in order (1 to 8)");
    if (!calls.is_array() || calls.empty() || calls.size() > protocol_setup_calls_max)
      fail(child(at, "calls"), "an array of 1 to " + std::to_string(protocol_setup_calls_max) + " calls", calls);
    for (std::size_t i = 0; i < calls.size(); ++i)
      p.setup.calls.push_back(read_call(p, calls[i], child(child(at, "calls"), i), "done_when", reply_rule::any,
                                        call_role::setup, false));
    if (const json* a = st.get("again_after_restart")) {
      if (!a->is_boolean())
        fail(child(at, "again_after_restart"), "true (run it again each time a node comes back from a restart or failover) or false", *a);
      p.setup.again_after_restart = a->get<bool>();
    }
    st.finish();
  }
  p.acquire = read_call(p, r.require("acquire", "the acquire call"), child(path, "acquire"), "granted_when",
                        reply_rule::equals_one, call_role::acquire, false);
  const bool permits = p.grants_permit_ids();
  p.release = read_call(p, r.require("release", "the release call"), child(path, "release"), "released_when",
                        reply_rule::any, call_role::release, permits);
  if (const json* x = r.get("renew"))
    p.renew = read_call(p, *x, child(path, "renew"), "kept_when", reply_rule::equals_one, call_role::renew, permits);
  if (const json* x = r.get("client")) p.client = read_client(p, *x, child(path, "client"));
  p.holders.key.pieces.push_back(arg_template::piece{{}, placeholder::key});
  if (const json* x = r.get("holders")) {
    const std::string at = child(path, "holders");
    object_reader h(*x, at,
                    "a holders object: {\"key\": \"{key}\", \"kind\": \"sorted_set\" or \"hash\", \"scores\": "
                    "\"acquired_at\" or \"expires_at\", \"free\": \"{key}:free\"}");
    // The holders' keys are the same for every caller: they are where the checkers look, not a caller's own.
    const auto read_shared_key = [&](const json& k, const std::string& kp) {
      arg_template t = read_template(k, kp);
      if (t.uses(placeholder::token) || t.uses(placeholder::now_ms) || t.uses(placeholder::expiry_ms) ||
          t.uses(placeholder::permit))
        fail(kp, "a key template over {key}, {limit}, {lease_ms}, {queue_timeout_ms} or literal text (the same key "
                 "for every caller)", k);
      return t;
    };
    if (const json* k = h.get("key")) p.holders.key = read_shared_key(*k, child(at, "key"));
    if (const json* k = h.get("kind"))
      p.holders.shape = read_named<redis::holders_shape>(*k, child(at, "kind"), redis::holders_shape_names);
    if (const json* k = h.get("free")) {
      p.holders.free = read_shared_key(*k, child(at, "free"));
      if (*p.holders.free == p.holders.key)
        fail(child(at, "free"), "a key other than holders.key (the counter of free permits is a string of its own)", *k);
    }
    if (const json* s = h.get("scores"))
      p.holders.scores = read_named<redis::score_meaning>(*s, child(at, "scores"), redis::score_meaning_names);
    h.finish();
  }
  r.finish();
  // Every script is called by an operation: a script nothing runs is a mistake, never a silent no-op.
  for (std::size_t i = 0; i < p.scripts.size(); ++i) {
    bool called = p.acquire.script == i || (!p.release.is_command() && p.release.script == i) ||
                  (p.renew && p.renew->script == i);
    for (const protocol_call& c : p.setup.calls) called = called || (!c.is_command() && c.script == i);
    if (!called)
      fail_msg(child(child(path, "scripts"), p.scripts[i].name),
               "expected a script that acquire, release, renew or a set-up call calls");
  }
  return p;
}

std::string directory_of(const std::string& file) {
  const std::size_t slash = file.rfind('/');
  if (slash == std::string::npos) return "";
  return slash == 0 ? "/" : file.substr(0, slash);
}

namespace {

std::string joined(const std::string& dir, const std::string& path) {
  if (path.empty() || path.front() == '/' || dir.empty()) return path;
  return dir == "/" ? "/" + path : dir + "/" + path;
}

json protocol_from_file(const std::string& file, const std::string& at, const file_reader& read) {
  std::string bytes;
  try {
    bytes = read(file);
  } catch (const scenario_error&) {
    throw;
  } catch (const std::exception& e) {
    fail_msg(at, std::string("expected a readable protocol file: ") + e.what());
  }
  json p;
  try {
    p = parse_json_text(bytes);
  } catch (const scenario_error& e) {
    fail_msg(at, "expected a protocol file of JSON text: " + file + ": " + e.what());
  }
  if (!p.is_object()) fail_msg(at, "expected a protocol file holding a JSON object: " + file);
  const auto scripts = p.find("scripts");
  if (scripts == p.end() || !scripts->is_object()) return p;  // read_protocol names what is wrong
  const std::string dir = directory_of(file);
  for (auto it = scripts->begin(); it != scripts->end(); ++it) {
    json& s = it.value();
    if (!s.is_object()) continue;
    const auto f = s.find("file");
    if (f == s.end()) continue;
    // The error's path stays a JSON Pointer into the scenario (the protocol's reference); the message names the
    // protocol file and the pointer into it, as the CLI names a scenario file.
    const std::string in_file = file + ": " + child("/scripts", it.key());
    if (!f->is_string()) fail_msg(at, in_file + "/file: expected a path to a Lua file, got " + shown(*f));
    // The origin of a script read from a file is that file's path; an "origin" beside it would name another.
    if (s.contains("source") || s.contains("origin"))
      fail_msg(at, in_file + ": expected a script given by \"file\" or by \"source\" (with its \"origin\"), not both");
    const std::string lua_path = joined(dir, f->get<std::string>());
    std::string source;
    try {
      source = read(lua_path);
    } catch (const std::exception& e) {
      fail_msg(at, in_file + "/file: expected a readable Lua file: " + e.what());
    }
    json inline_script = json::object();
    inline_script["source"] = std::move(source);
    inline_script["origin"] = f->get<std::string>();
    for (auto k = s.begin(); k != s.end(); ++k)
      if (k.key() != "file") inline_script[k.key()] = k.value();  // unknown keys stay, for read_protocol to refuse
    s = std::move(inline_script);
  }
  return p;
}

void inline_gate(json& gate, const std::string& at, const std::string& base_dir, const file_reader& read) {
  if (!gate.is_object()) return;
  const auto it = gate.find("protocol");
  if (it == gate.end()) return;
  const std::string here = child(at, "protocol");
  auto one = [&](json& ref, const std::string& p) {
    if (ref.is_string()) ref = protocol_from_file(joined(base_dir, ref.get<std::string>()), p, read);
  };
  if (it->is_array()) {
    for (std::size_t i = 0; i < it->size(); ++i) one((*it)[i], child(here, i));
  } else {
    one(*it, here);
  }
}

}  // namespace

void inline_protocol_files(json& doc, const std::string& base_dir, const file_reader& read) {
  if (!doc.is_object()) return;
  if (const auto g = doc.find("gate"); g != doc.end()) inline_gate(*g, "/gate", base_dir, read);
  if (const auto gs = doc.find("gates"); gs != doc.end() && gs->is_array())
    for (std::size_t i = 0; i < gs->size(); ++i) inline_gate((*gs)[i], child("/gates", i), base_dir, read);
}

}  // namespace admit::scenario
