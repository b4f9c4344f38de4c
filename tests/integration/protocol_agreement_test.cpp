// Every shipped lease protocol file, run through the Lua engine and through a
// real redis-server 7.0.15 (label `redis`).
//
// Goal: a protocol's Lua, called the way its file says, answers the same and
// leaves the same keyspace in the simulator's engine as on the server, and
// its reply rule reads both answers alike. Method: the protocol files are
// found by listing gate/redis/protocols/*.json (but schema.json) and
// scenarios/protocols/*/protocol.json, so a new file is covered without
// editing this test, and loaded as a scenario loads them
// (inline_protocol_files + read_protocol). For each file a RapidCheck
// property SCRIPT LOADs its scripts on both sides and then runs a generated
// sequence of operations (acquire, renew where the protocol has it,
// release) by a handful of tokens, with the caller's now_ms mostly moving
// forward and sometimes back, leases, limits and queue timeouts from small
// ranges, and real time passing on the server between operations. Each
// operation is the protocol's call expanded with redis::expand: EVALSHA of
// the script with the KEYS and ARGV (or the plain command), sent unchanged to
// the server and to script_engine::execute. After every operation the reply
// (redis::reply ==), the reply rule's reading of it (redis::read_reply) and
// the whole keyspace are compared.
//
// Time, as in redis_agreement_test.cpp: the server's clock cannot be set, so
// each operation goes out in one pipeline, TIME, the operation, a keyspace
// dump script, TIME, and the engine runs at the millisecond the two readings
// bracket (at each of them when they span several; when none agrees the
// engine's replica is reloaded from the server's dump and the step counted as
// resynchronised, which may happen on at most 1% of the steps).
//
// A protocol with set-up calls runs them (EVAL of a script's body, or the
// command) for each key at the start of a case, and again now and then (as
// after a restart); a protocol whose acquire answers permit ids keeps each
// token's last id and sends it as {permit}, as its client does.
//
// Also: EVALSHA of a script the server never loaded answers NOSCRIPT on both,
// and EVAL of the body then succeeds on both (the client's fallback). The
// guard: the same property with {now_ms} expanded one millisecond late on
// the engine's side only must fail.
//
// The server is 127.0.0.1:$ADMITSIM_REDIS_PORT (default 6390), database 9,
// which the test flushes (and whose script cache it flushes). Run:
//   tests/integration/run_with_redis.sh ctest --test-dir build -L redis
#include <catch2/catch.hpp>
#include <rapidcheck.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <deque>
#include <filesystem>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "gate/redis/lua_engine.hpp"
#include "gate/redis/protocol.hpp"
#include "gate/redis/replica.hpp"
#include "sim/scenario/loader.hpp"
#include "sim/scenario/protocol_loader.hpp"
#include "tests/integration/agreement_support.hpp"
#include "tests/integration/redis_client.hpp"
#include "tests/redis/redis_test_support.hpp"

namespace admit::redis::test {
namespace {

namespace fs = std::filesystem;

constexpr int cases_per_protocol = 100;  // ADMITSIM_AGREEMENT_CASES may lower it (agreement_cases)
constexpr int min_steps_per_case = 60;
constexpr int min_protocol_files = 11;
constexpr std::string_view replay_command =
    "tests/integration/run_with_redis.sh build/tests/integration/protocol_agreement_test";

std::string describe_command(const command& c) {
  std::string out;
  for (const std::string& arg : c) {
    if (!out.empty()) out += ' ';
    // A script body (only EVAL sends one) is shown by its length, not its text.
    if (arg.size() > 60) {
      out += "<" + std::to_string(arg.size()) + " bytes>";
    } else {
      out += arg.find_first_of(" \n") == std::string::npos && !arg.empty() ? arg : "\"" + arg + "\"";
    }
  }
  return out;
}

// --- the protocol files -------------------------------------------------------

struct protocol_file {
  std::string path;  // relative to the source tree
  protocol proto;
};

// Loads one protocol file as a scenario naming it by path loads it.
protocol load_protocol_file(const std::string& absolute) {
  nlohmann::ordered_json doc = {{"gate", {{"protocol", fs::path(absolute).filename().string()}}}};
  scenario::inline_protocol_files(doc, scenario::directory_of(absolute), scenario::plain_file_reader());
  return scenario::read_protocol(doc["gate"]["protocol"], "/gate/protocol");
}

// Every shipped protocol file, in path order.
std::vector<protocol_file> shipped_protocols() {
  const fs::path root(ADMITSIM_SOURCE_DIR);
  std::vector<std::string> paths;
  for (const auto& e : fs::directory_iterator(root / "gate/redis/protocols")) {
    if (e.is_regular_file() && e.path().extension() == ".json" && e.path().filename() != "schema.json") {
      paths.push_back(fs::relative(e.path(), root).string());
    }
  }
  for (const auto& e : fs::directory_iterator(root / "scenarios/protocols")) {
    if (e.is_directory() && fs::is_regular_file(e.path() / "protocol.json")) {
      paths.push_back(fs::relative(e.path() / "protocol.json", root).string());
    }
  }
  std::sort(paths.begin(), paths.end());
  std::vector<protocol_file> out;
  for (const std::string& p : paths) out.push_back({p, load_protocol_file((root / p).string())});
  return out;
}

// --- one call, expanded -------------------------------------------------------

enum class op_kind : std::uint8_t { acquire, renew, release };
constexpr const char* op_names[] = {"acquire", "renew", "release"};

// The guard's broken expansion: the engine's side is given {now_ms} one
// millisecond late (and {expiry_ms} with it), the server's side the truth.
struct expansion_fault {
  bool now_ms_off_by_one = false;
};

// The argv the protocol's client sends for `call`: EVALSHA sha numkeys KEYS
// ARGV, or the plain command. `body` instead of EVALSHA gives EVAL.
command call_argv(const protocol& p, const protocol_call& call, const call_values& v, bool eval_body = false) {
  command c;
  if (call.is_command()) {
    for (const arg_template& t : call.command) c.push_back(expand(t, v));
    return c;
  }
  const protocol_script& s = p.scripts.at(call.script);
  c = {eval_body ? "EVAL" : "EVALSHA", eval_body ? s.source : s.sha, std::to_string(call.keys.size())};
  for (const arg_template& t : call.keys) c.push_back(expand(t, v));
  for (const arg_template& t : call.args) c.push_back(expand(t, v));
  return c;
}

// --- the two sides ------------------------------------------------------------

struct agreement_stats {
  int steps = 0;
  int straddled = 0;  // the TIME bracket spanned more than one millisecond
  int resynced = 0;   // ... and no single millisecond reproduced the server
  std::map<std::string, int> by_outcome;  // "acquire yes", "renew no", "release error", ...
};

// The server and an engine over a replica, stepped side by side; the first
// disagreement fails the current RapidCheck case.
class agreement {
 public:
  agreement(redis_client& real, agreement_stats& stats) : real_(real), stats_(stats), engine_(data_) {
    RC_ASSERT(real_.call({"FLUSHDB"}) == reply::status("OK"));
    RC_ASSERT(real_.call({"SCRIPT", "FLUSH"}) == reply::status("OK"));
  }

  // SCRIPT LOAD on both: the same reply, and the SHA the loader computed.
  void load(const protocol_script& s) {
    const reply theirs = real_.call({"SCRIPT", "LOAD", s.source});
    const reply ours = engine_.script_load(s.source);
    RC_ASSERT(theirs == ours);
    RC_ASSERT(theirs == reply::bulk(s.sha));
  }

  // Runs `real_op` on the server and `engine_op` through the engine and
  // compares the replies, their reading under `rule` and the keyspace.
  // Returns the server's reply.
  reply step(const command& real_op, const command& engine_op, const reply_read& rule, const std::string& what) {
    history_.push_back(what);
    if (history_.size() > 200) history_.pop_front();
    start_of_a_millisecond();
    const auto replies = real_.pipeline({{"TIME"}, real_op, {"EVAL", dump_script, "0"}, {"TIME"}});
    const std::int64_t first_us = parse_time_us(replies[0]);
    const std::int64_t last_us = parse_time_us(replies[3]);
    const reply& theirs = replies[1];
    const std::vector<key_dump> real_dump = parse_dump(replies[2]);
    ++stats_.steps;
    RC_ASSERT(last_us >= first_us);

    const std::int64_t first_ms = first_us / 1000;
    const std::int64_t last_ms = std::min(last_us / 1000, first_ms + 50);
    if (last_ms > first_ms) ++stats_.straddled;
    const replica before = data_;
    std::optional<replica> first_after;
    reply first_reply;
    for (std::int64_t op_ms = first_ms; op_ms <= last_ms; ++op_ms) {
      data_ = before;
      const reply ours = engine_.execute(engine_op, std::max(first_us, op_ms * 1000));
      if (!first_after) {
        first_after = data_;
        first_reply = ours;
      }
      if (ours != theirs) continue;
      if (read_reply(ours, rule) != read_reply(theirs, rule)) continue;
      for (std::int64_t dump_ms = op_ms; dump_ms <= last_ms; ++dump_ms) {
        if (data_.dump_keys(dump_ms * 1000) == real_dump) return theirs;
      }
    }
    if (last_ms > first_ms) {
      ++stats_.resynced;
      data_.restore(real_dump);
      return theirs;
    }
    const script_reply their_reading = read_reply(theirs, rule);
    const script_reply our_reading = read_reply(first_reply, rule);
    std::ostringstream out;
    out << "engine and redis-server disagree at step " << stats_.steps << " of this property\n"
        << "operation: " << what << "\n"
        << "server time: " << first_us << " us .. " << last_us << " us (one millisecond: " << first_ms << ")\n"
        << "redis-server replied: " << to_string(theirs) << " (read as " << their_reading.value << " "
        << their_reading.error << ")\n"
        << "engine replied:       " << to_string(first_reply) << " (read as " << our_reading.value << " "
        << our_reading.error << ")\n"
        << "redis-server keyspace after:\n" << render_dump(real_dump)
        << "engine keyspace after:\n" << first_after->dump(first_ms * 1000)
        << "operations of this case so far (latest last):\n";
    for (const auto& h : history_) out << "  " << h << "\n";
    RC_FAIL(out.str());
  }

 private:
  redis_client& real_;
  agreement_stats& stats_;
  replica data_;
  script_engine engine_;
  std::deque<std::string> history_;
};

// One case: a fleet of a few tokens calling one protocol.
void protocol_agrees(const protocol& p, redis_client& real, agreement_stats& stats, expansion_fault fault) {
  agreement both(real, stats);
  for (const protocol_script& s : p.scripts) both.load(s);

  const std::int64_t case_lease_ms = pick<std::int64_t>({0, 1, 2, 5, 10, 20, 50, 1000});
  const std::int64_t case_limit = uniform_in<std::int64_t>(0, 5);
  std::map<std::string, std::string> permits;  // by key and token: the last permit id an acquire answered
  // The set-up for one key, as a deployment (or a client on reconnect) runs it.
  const auto set_up = [&](const std::string& key, std::int64_t now_ms) {
    for (const protocol_call& c : p.setup.calls) {
      call_values v;
      v.key = key;
      v.limit = case_limit;
      v.lease_ms = case_lease_ms;
      v.now_ms = now_ms;
      const command op = call_argv(p, c, v, true);
      const reply answer = both.step(op, op, c.rule, "setup: " + describe_command(op));
      const script_reply reading = read_reply(answer, c.rule);
      ++stats.by_outcome[std::string("setup ") + (!reading.ok() ? "error" : reading.value > 0 ? "done" : "not done")];
    }
  };
  const std::int64_t case_queue_timeout_ms = pick<std::int64_t>({0, 1, 5, 20, 100, 2000});
  const bool uses_queue_timeout = p.uses(placeholder::queue_timeout_ms);
  // The caller's wall clock starts near the server's and may be skewed.
  std::int64_t caller_ms = parse_time_us(real.call({"TIME"})) / 1000 + pick<std::int64_t>({0, 0, -40, 25, -3000});
  for (const char* key : {"gate:a", "gate:b"}) set_up(key, caller_ms);

  const auto steps = *rc::gen::inRange(min_steps_per_case, min_steps_per_case + 40);
  for (int done = 0; done < steps;) {
    // Mostly forward (0: equal timestamps), sometimes back (a clock step).
    if (uniform_in(0, 10) == 0) {
      caller_ms -= pick<std::int64_t>({1, 5, 50, 3000});
    } else {
      caller_ms += pick<std::int64_t>({0, 0, 1, 2, 5, 30});
    }
    const int action = uniform_in(0, 100);
    if (action >= 90) {
      // Real time passes on the server: short leases and queue entries end.
      std::this_thread::sleep_for(std::chrono::milliseconds(pick<int>({1, 2, 3, 6, 12, 25})));
      continue;
    }
    if (action >= 88 && !p.setup.calls.empty()) {
      set_up(uniform_in(0, 8) == 0 ? "gate:b" : "gate:a", caller_ms);  // again, as after a restart
      continue;
    }
    ++done;
    op_kind op = action < 50 ? op_kind::acquire : (action < 70 && p.renew ? op_kind::renew : op_kind::release);
    const protocol_call& call = op == op_kind::acquire ? p.acquire : op == op_kind::renew ? *p.renew : p.release;

    const std::string key = uniform_in(0, 8) == 0 ? "gate:b" : "gate:a";
    const std::string token = "t" + std::to_string(uniform_in(0, 5));
    call_values v;
    v.key = key;
    v.token = token;
    v.limit = uniform_in(0, 10) == 0 ? uniform_in<std::int64_t>(0, 5) : case_limit;
    v.lease_ms = uniform_in(0, 10) == 0 ? pick<std::int64_t>({0, 1, 3, 60000}) : case_lease_ms;
    v.now_ms = caller_ms;
    v.queue_timeout_ms = uses_queue_timeout && uniform_in(0, 10) == 0 ? pick<std::int64_t>({0, 3, 50})
                                                                       : case_queue_timeout_ms;
    const std::string permit_slot = key + "/" + token;
    if (const auto it = permits.find(permit_slot); it != permits.end()) v.permit = it->second;
    call_values engine_v = v;
    if (fault.now_ms_off_by_one) engine_v.now_ms += 1;

    const command real_op = call_argv(p, call, v);
    const command engine_op = call_argv(p, call, engine_v);
    const reply answer = both.step(real_op, engine_op, call.rule,
                                   std::string(op_names[static_cast<int>(op)]) + ": " + describe_command(real_op));
    // A release's rule is usually "any" (always yes), so its outcome is the reply itself.
    const script_reply reading = read_reply(answer, call.rule);
    if (op == op_kind::acquire && p.grants_permit_ids()) {
      if (const std::string_view id = permit_of(answer, call.rule); !id.empty()) permits[permit_slot] = std::string(id);
    } else if (op == op_kind::release) {
      permits.erase(permit_slot);
    }
    const std::string outcome = !reading.ok()                   ? "error"
                                : call.rule.rule == reply_rule::any ? to_string(answer)
                                : reading.value > 0            ? "yes"
                                                               : "no";
    ++stats.by_outcome[std::string(op_names[static_cast<int>(op)]) + " " + outcome];
  }
}

void report(const std::string& name, const agreement_stats& stats) {
  std::cout << name << ": " << stats.steps << " operations agreed with redis-server (";
  bool first = true;
  for (const auto& [outcome, n] : stats.by_outcome) {
    std::cout << (first ? "" : ", ") << outcome << " " << n;
    first = false;
  }
  std::cout << "); " << stats.straddled << " spanned a millisecond boundary, " << stats.resynced
            << " of them resynchronised\n";
}

}  // namespace

TEST_CASE("protocol agreement: every shipped protocol file is found and loads", "[protocol][redis]") {
  // Goal: the listing covers the shipped files. Method: list them as the properties do, load each, count them.
  const auto files = shipped_protocols();
  for (const auto& f : files) std::cout << "protocol file " << f.path << " (" << f.proto.name << ")\n";
  CHECK(files.size() >= static_cast<std::size_t>(min_protocol_files));
  // The guard below needs a protocol that passes the caller's clock.
  CHECK(std::any_of(files.begin(), files.end(), [](const protocol_file& f) { return f.proto.uses(placeholder::now_ms); }));
}

TEST_CASE("protocol agreement: each protocol's calls give the same replies, readings and keyspace", "[protocol][redis]") {
  // Goal: engine == redis-server for every protocol file. Method: one RapidCheck property per file over generated
  // fleets of acquire / renew / release, replies, reply-rule readings and keyspace compared after every call.
  auto real = connect_or_fail(needs_a_server("protocol agreement test"));
  const auto files = shipped_protocols();
  REQUIRE(files.size() >= static_cast<std::size_t>(min_protocol_files));
  for (const protocol_file& f : files) {
    CAPTURE(f.path);
    agreement_stats stats;
    const int cases = agreement_cases(cases_per_protocol);
    const auto result = check_property("protocol agreement: " + f.path,
                                       [&] { protocol_agrees(f.proto, *real, stats, {}); }, cases);
    report(f.path, stats);
    INFO(describe(result, replay_command));
    CHECK(passed(result));
    CHECK(stats.steps >= cases * min_steps_per_case);
    CHECK(stats.resynced * 100 <= stats.steps);
    // The generated fleets reach both answers of every call.
    CHECK(stats.by_outcome["acquire yes"] > 0);
    CHECK(stats.by_outcome["acquire no"] > 0);
    if (f.proto.renew) {
      CHECK(stats.by_outcome["renew yes"] > 0);
      CHECK(stats.by_outcome["renew no"] > 0);
    }
  }
}

TEST_CASE("protocol agreement: EVALSHA of an unloaded script is NOSCRIPT on both, and EVAL of its body then runs",
          "[protocol][redis]") {
  // Goal: the client's NOSCRIPT fallback sees the same answers. Method: for every script call of every protocol file,
  // on a flushed script cache, EVALSHA (NOSCRIPT on both, same reply), then EVAL of the body (no error, same reply and
  // keyspace), then EVALSHA again (cached by the EVAL on both).
  auto real = connect_or_fail(needs_a_server("protocol agreement test"));
  agreement_stats stats;
  const auto result = check_property("protocol agreement: NOSCRIPT", [&] {
    for (const protocol_file& f : shipped_protocols()) {
      agreement both(*real, stats);  // flushes the keyspace and the server's script cache; the engine starts empty
      const std::int64_t now_ms = parse_time_us(real->call({"TIME"})) / 1000;
      call_values v;
      v.key = "gate:a";
      v.token = "t1";
      v.limit = 2;
      v.lease_ms = 1000;
      v.now_ms = now_ms;
      v.queue_timeout_ms = 2000;
      std::vector<const protocol_call*> calls{&f.proto.acquire};
      if (f.proto.renew) calls.push_back(&*f.proto.renew);
      calls.push_back(&f.proto.release);
      for (const protocol_call* call : calls) {
        if (call->is_command()) continue;
        const command by_sha = call_argv(f.proto, *call, v);
        const reply missing = both.step(by_sha, by_sha, call->rule, f.path + " unloaded: " + describe_command(by_sha));
        RC_ASSERT(missing == reply::error("NOSCRIPT No matching script. Please use EVAL."));
        const command by_body = call_argv(f.proto, *call, v, true);
        const reply ran = both.step(by_body, by_body, call->rule, f.path + " EVAL: " + describe_command(by_body));
        RC_ASSERT(!ran.is_error());
        const reply again = both.step(by_sha, by_sha, call->rule, f.path + " cached: " + describe_command(by_sha));
        RC_ASSERT(!again.is_error());
      }
    }
  }, 1);
  INFO(describe(result, replay_command));
  CHECK(passed(result));
  CHECK(stats.steps >= 3 * min_protocol_files);
}

TEST_CASE("protocol agreement: the property notices {now_ms} expanded off by one on the engine's side",
          "[protocol][redis]") {
  // The guard: a deliberately broken expansion must make the property fail, for every protocol that passes
  // the caller's clock.
  auto real = connect_or_fail(needs_a_server("protocol agreement test"));
  int guarded = 0;
  for (const protocol_file& f : shipped_protocols()) {
    if (!f.proto.uses(placeholder::now_ms) && !f.proto.uses(placeholder::expiry_ms)) continue;
    CAPTURE(f.path);
    agreement_stats stats;
    // It fails for the planted reason, a disagreement, not for anything else. Against a real server the
    // shrinking reruns cases whose timing differs (a call that straddles a millisecond is resynchronised,
    // not judged), so a shrunk case may end on another of its checks: up to three searches, each of which
    // must fail, and one of them for the planted reason. Every other reason is printed.
    std::string why;
    for (int attempt = 0; attempt < 3; ++attempt) {
      const auto result = check_property("protocol agreement (broken {now_ms}): " + f.path, [&] {
        protocol_agrees(f.proto, *real, stats, {.now_ms_off_by_one = true});
      }, cases_per_protocol);
      REQUIRE(failed(result));
      why = describe(result, replay_command);
      if (why.find("engine and redis-server disagree") != std::string::npos) break;
      std::cout << f.path << " with {now_ms} one late: search " << attempt + 1
                << " failed, but not on a disagreement:\n" << why << "\n";
    }
    INFO(why);
    CHECK(why.find("engine and redis-server disagree") != std::string::npos);
    std::cout << f.path << " with {now_ms} one late on the engine's side: failed after " << stats.steps
              << " operations (with shrinking), as it must\n";
    ++guarded;
  }
  CHECK(guarded >= 1);
}

}  // namespace admit::redis::test
