// Every violation says why: for each row of the cause table (sim/check/causes.hpp), a small scenario that
// produces it, and the kind, count and sentence the world names; beside it, where the table names a design that
// addresses the cause, the same scenario under that design holding; a run without a violation names no cause; and
// every violation of the catalogue is explained (none "unexplained").
#include <catch2/catch.hpp>
#include <filesystem>
#include <functional>
#include <set>
#include <string>
#include <vector>

#include "sim/check/causes.hpp"
#include "world_test_support.hpp"

namespace fs = std::filesystem;
using nlohmann::ordered_json;
using json = nlohmann::ordered_json;
using admit::world::invariant_result;
using admit::world::run_record;

using admit::test::run_doc;

namespace {

std::vector<run_record> run_json(const std::string& text, std::uint64_t seed) { return run_doc(json::parse(text), seed); }

const run_record& run_named(const std::vector<run_record>& runs, const std::string& name) {
  for (const auto& r : runs)
    if (r.variant == name) return r;
  FAIL("no run " << name);
  return runs.front();
}

using admit::test::inv;

// `name` broke with exactly one kind of cause: `kind`, counted `count` times, first said as `example`.
void require_cause(const run_record& rec, const std::string& name, const std::string& kind, std::uint64_t count,
                   const std::string& example) {
  const invariant_result& i = inv(rec, name);
  INFO(rec.variant << " " << name);
  REQUIRE_FALSE(i.holds);
  REQUIRE(i.causes.size() == 1);
  CHECK(i.causes[0].kind == kind);
  CHECK(i.causes[0].count == count);
  CHECK(i.causes[0].example == example);
  REQUIRE(admit::check::find_cause(kind) != nullptr);
}

void require_no_violation(const run_record& rec) {
  INFO(rec.variant);
  CHECK_FALSE(rec.any_violation());
  CHECK_FALSE(rec.inconclusive.has_value());
}

// A built-in protocol file as an inline object (its Lua read in), to change its client policy.
json builtin_inline(const std::string& name) {
  json p = json::parse(admit::test::slurp("gate/redis/protocols/" + name + ".json"));
  for (auto& [script, spec] : p["scripts"].items()) {
    const std::string file = spec["file"].get<std::string>();
    spec = json{{"source", admit::test::slurp("gate/redis/protocols/" + file)}, {"origin", file}};
  }
  return p;
}

// A protocol with an inline acquire (the server's clock, the gate's limit) and a plain ZREM release.
json user_protocol(const std::string& name, const std::string& acquire_lua) {
  json p;
  p["format"] = "admitsim-protocol/1";
  p["name"] = name;
  p["scripts"]["acquire"]["source"] = acquire_lua;
  p["scripts"]["acquire"]["origin"] = name + "_acquire.lua";
  p["acquire"] = json{{"script", "acquire"}, {"keys", {"{key}"}}, {"args", {"{lease_ms}", "{limit}", "{token}"}}};
  p["release"] = json{{"command", {"ZREM", "{key}", "{token}"}}};
  return p;
}

const char* const lua_now =
    "local gate, lease_ms, limit, token = KEYS[1], tonumber(ARGV[1]), tonumber(ARGV[2]), ARGV[3]\n"
    "local t = redis.call('TIME')\n"
    "local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)\n";

// Two items on two workers against one permit and a portal of one, the first at work for `service`: the
// second finds the first's permit gone, for the reason each test sets up.
json two_items(const std::string& variant, const std::string& lease, const std::string& service,
               const std::string& second_at) {
  json doc = json::parse(R"({"name": "two_items", "seed": 1,
    "gate": {"kind": "lease", "limit": 1, "acquire_timeout": "30s"},
    "fleet": {"workers": 2},
    "service": {"portal_cap": 1, "client_timeout": "20s"}})");
  doc["gate"]["variant"] = json::parse(variant);
  doc["gate"]["lease"] = lease;
  doc["service"]["service_time"] = service;
  doc["workload"]["requests"] = json::array({json{{"at", "0ms"}}, json{{"at", second_at}}});
  return doc;
}

// two_items under the renewal variant: a 3s lease renewed every 2.4s (at 2.4s and 4.8s) under an 8s request, the
// second item at `second_at`, and one Redis fault.
json renewed_every_2400ms(const std::string& second_at, const json& fault) {
  json doc = two_items(R"("renewal")", "3s", "8s", second_at);
  doc["gate"]["renew_every"] = "2400ms";
  doc["faults"]["schedule"] = json::array({fault});
  return doc;
}

}  // namespace

// --- the lease world: why a connection at the portal had no permit --------------------------------------------

TEST_CASE("a caller's clock ahead reaps a live lease under seed; server_time holds", "[world][causes]") {
  // Goal: caller_clock_skew names the reaper, its offset, the score and its now. Method: worker 1's clock runs 20s
  // ahead; at 1s its acquire reaps worker 0's permit, scored at 0 on a 15s lease.
  json doc = two_items(R"(["seed", "server_time"])", "15s", "10s", "1s");
  doc["fleet"]["clocks"] = json::array({json{{"worker", 1}, {"offset", "+20s"}}});
  const auto runs = run_doc(doc, 1);
  require_cause(run_named(runs, "seed"), "portal_inflight_le_cap", "caller_clock_skew", 1,
                "permit w0-1 reaped by worker 1, whose clock is 20s ahead: score 00:00:00, reaped at its now 00:00:21 "
                "(1s into its 15s lease)");
  require_no_violation(run_named(runs, "server_time"));
}

TEST_CASE("a caller's clock behind scores a permit the server already counts expired", "[world][causes]") {
  // Goal: caller_clock_skew explains expired_leases_reaped too. Method: one worker 20s behind takes one item.
  const auto runs = run_json(R"({"name": "behind", "seed": 1,
    "gate": {"kind": "lease", "variant": ["seed", "server_time"], "limit": 2, "lease": "15s", "acquire_timeout": "30s"},
    "fleet": {"workers": 1, "clocks": [{"worker": 0, "offset": "-20s"}]},
    "service": {"portal_cap": 2, "service_time": "1s", "client_timeout": "20s"},
    "workload": {"requests": [{"at": "0ms"}]}})", 1);
  require_cause(run_named(runs, "seed"), "expired_leases_reaped", "caller_clock_skew", 1,
                "worker 0's acquire scored its own permit w0-1 by its clock, 20s behind: score -00:00:20, which the "
                "server's clock (00:00:00) already counts past its 15s lease");
  require_no_violation(run_named(runs, "server_time"));
}

TEST_CASE("the server's clock jumping ahead ages a live lease", "[world][causes]") {
  // Goal: server_clock_jump names the jump. Method: the server's clock steps 20s at 1s, past the 15s lease of the
  // permit granted at 0; the key's expiry takes it at the next command.
  json doc = two_items(R"("server_time")", "15s", "10s", "2s");
  doc["faults"]["schedule"] = json::array({json{{"at", "1s"}, {"kind", "clock_step"}, {"target", "redis"}, {"step", "+20s"}}});
  require_cause(run_doc(doc, 1).front(), "portal_inflight_le_cap", "server_clock_jump", 1,
                "permit w0-1 gone with the gate key's expiry 2s into its 15s lease: the server's clock jumped 20s "
                "ahead since it was granted");
}

TEST_CASE("a request longer than its lease loses the permit under seed; renewal holds", "[world][causes]") {
  // Goal: lease_outlived, and the design the table names for it. Method: an 8s request on a 5s lease.
  json doc = two_items(R"(["seed", "renewal"])", "5s", "8s", "6s");
  doc["gate"]["renew_every"] = "1s";
  const auto runs = run_doc(doc, 1);
  require_cause(run_named(runs, "seed"), "portal_inflight_le_cap", "lease_outlived", 1,
                "permit w0-1 expired: an 8s request on a 5s lease, no renewal");
  require_no_violation(run_named(runs, "renewal"));
}

TEST_CASE("a renewing holder paused past its lease loses the permit", "[world][causes]") {
  // Goal: renewal_missed names the pause. Method: a 4s pause from 0.5s over a 3s lease renewed every second.
  json doc = two_items(R"("renewal")", "3s", "8s", "4200ms");
  doc["gate"]["renew_every"] = "1s";
  doc["faults"]["schedule"] = json::array({json{{"at", "500ms"}, {"kind", "pause"}, {"target", "worker:0"}, {"duration", "4s"}}});
  require_cause(run_doc(doc, 1).front(), "portal_inflight_le_cap", "renewal_missed", 1,
                "permit w0-1 expired 4.2s after its grant, on a 3s lease renewed every 1s: its worker was paused 4s "
                "from 00:00:00.500");
}

TEST_CASE("a renewing holder that crashes leaves its request at the portal under a lease nobody renews", "[world][causes]") {
  // Goal: crashed_holder. Method: the holder crashes at 1.5s with 6.5s of its request left; its lease (renewed at 1s)
  // runs out and the next acquire takes the permit.
  json doc = two_items(R"("renewal")", "3s", "8s", "5s");
  doc["gate"]["renew_every"] = "1s";
  doc["faults"]["schedule"] = json::array({json{{"at", "1500ms"}, {"kind", "crash"}, {"target", "worker:0"}}});
  require_cause(run_doc(doc, 1).front(), "portal_inflight_le_cap", "crashed_holder", 1,
                "permit w0-1 expired 3.5s after its holder crashed at 00:00:01.500 with its 8s request still at the "
                "portal: no one renews a dead holder's lease");
}

TEST_CASE("a client timeout releases the permit while the connection stays open; hold_to_end holds", "[world][causes]") {
  // Goal: client_timeout_release, and the client policy the table names for it. Method: a 1s read timeout on a 5s
  // request, through the server_time protocol releasing at the timeout, then holding to the end.
  json doc = two_items(R"("server_time")", "15s", "5s", "2s");
  doc["service"]["client_timeout"] = "1s";
  require_cause(run_doc(doc, 1).front(), "portal_inflight_le_cap", "client_timeout_release", 1,
                "permit w0-1 released after a client timeout while the connection stayed open: the client gave up "
                "after 1s of a 5s request");
  doc["gate"].erase("variant");
  json p = builtin_inline("server_time");
  p["client"]["on_client_timeout"] = "hold_to_end";
  doc["gate"]["protocol"] = p;
  const auto hold = run_doc(doc, 1);
  CHECK(hold.front().metrics.client_timeouts == 2);  // both clients give up; neither permit goes early
  require_no_violation(hold.front());
}

TEST_CASE("a Redis restart forgets permits: without persistence, and in the last AOF second", "[world][causes]") {
  // Goal: restart_forgot and restart_lost_last_second, and AOF keeping a permit written before the last second.
  // Method: a permit granted at 0, a restart at 1s; with aof_everysec the copy of second 0 was taken before that
  // grant. With a script in second 1 (a refused acquire at 1.2s) before a restart at 1.5s, the AOF keeps it.
  json doc = two_items(R"("server_time")", "15s", "10s", "2s");
  doc["faults"]["schedule"] =
      json::array({json{{"at", "1s"}, {"kind", "redis_restart"}, {"persistence", "none"}, {"duration", "100ms"}}});
  require_cause(run_doc(doc, 1).front(), "portal_inflight_le_cap", "restart_forgot", 1,
                "permit w0-1 forgotten by a Redis restart without persistence at 00:00:01 (granted 0.999s before)");
  doc["faults"]["schedule"][0]["persistence"] = "aof_everysec";
  require_cause(run_doc(doc, 1).front(), "portal_inflight_le_cap", "restart_lost_last_second", 1,
                "permit w0-1 forgotten by a Redis restart at 00:00:01: granted 0.999s before, after the last second the "
                "AOF had written");
  json kept = two_items(R"("server_time")", "15s", "10s", "1200ms");
  kept["faults"]["schedule"] =
      json::array({json{{"at", "1500ms"}, {"kind", "redis_restart"}, {"persistence", "aof_everysec"}, {"duration", "100ms"}}});
  require_no_violation(run_doc(kept, 1).front());
}

TEST_CASE("a failover to a lagging replica loses a recent grant", "[world][causes]") {
  // Goal: failover_unreplicated names the grant's age and the lag. Method: a grant at 0, a failover at 1s to a
  // replica 2s behind.
  json doc = two_items(R"("server_time")", "15s", "10s", "2s");
  doc["faults"]["schedule"] = json::array(
      {json{{"at", "1s"}, {"kind", "redis_failover"}, {"replication_lag", "2s"}, {"duration", "100ms"}}});
  require_cause(run_doc(doc, 1).front(), "portal_inflight_le_cap", "failover_unreplicated", 1,
                "permit w0-1 lost in a failover at 00:00:01: granted 0.999s before, not yet replicated (the replica "
                "lagged 2s)");
}

TEST_CASE("a failover to a lagging replica takes back a renewal, and the permit expires early", "[world][causes]") {
  // Goal: failover_unreplicated for a renewal, not unexplained: the permit survives the failover with the score
  // of the renewal before. Method: a 3s lease renewed every 2.4s (at 2.4s and 4.8s) under an 8s request; a
  // failover at 4.9s to a replica 200ms behind keeps the 2.4s score, which expires at 5.4s; a second item at
  // 5.5s takes the permit.
  const json doc = renewed_every_2400ms("5500ms", json{{"at", "4900ms"}, {"kind", "redis_failover"}, {"replication_lag", "200ms"}});
  require_cause(run_doc(doc, 1).front(), "portal_inflight_le_cap", "failover_unreplicated", 1,
                "permit w0-1 gone with the gate key's expiry 0.698s after its renewal at 00:00:04.802: a failover at "
                "00:00:04.900 promoted a replica that had not received that renewal yet (it lagged 0.2s) and still "
                "held the permit's older score");
}

TEST_CASE("a restart from an AOF written before a renewal brings back the older score", "[world][causes]") {
  // Goal: restart_lost_last_second for a renewal. Method: a 3s lease renewed every 2.4s under an 8s request; a
  // restart at 2.9s under aof_everysec comes back with the state of second 2, where the permit still has its
  // grant's score; it expires at 3s, and a second item at 3.1s takes it.
  const json doc = renewed_every_2400ms("3100ms", json{{"at", "2900ms"}, {"kind", "redis_restart"}, {"persistence", "aof_everysec"}});
  require_cause(run_doc(doc, 1).front(), "portal_inflight_le_cap", "restart_lost_last_second", 1,
                "permit w0-1 gone with the gate key's expiry 0.699s after its renewal at 00:00:02.401: a Redis restart "
                "at 00:00:02.900 came back from an AOF written before that renewal, with the permit's older score");
}

TEST_CASE("a lease limit above the portal's cap", "[world][causes]") {
  // Goal: limit_above_cap, when the connections that hold permits are themselves too many. Method: limit 2, cap 1.
  json doc = two_items(R"("server_time")", "15s", "1s", "0ms");
  doc["gate"]["limit"] = 2;
  require_cause(run_doc(doc, 1).front(), "portal_inflight_le_cap", "limit_above_cap", 1,
                "the lease limit 2 is above the portal's cap 1");
}

TEST_CASE("a fail-open client sends its request without a permit", "[world][causes]") {
  // Goal: failed_open (mutation fail_open). Method: Redis cut off from the start.
  const auto runs = run_json(R"({"name": "dark", "seed": 4,
    "gate": {"kind": "lease", "limit": 1, "lease": "15s", "acquire_timeout": "2s", "mutation": "fail_open"},
    "fleet": {"workers": 3},
    "service": {"portal_cap": 1, "service_time": "5s"},
    "workload": {"arrivals": [{"kind": "constant", "count": 3, "every": "100ms"}]},
    "faults": {"schedule": [{"at": "0ms", "kind": "partition", "target": "redis", "duration": "1h"}]}})", 4);
  require_cause(runs.front(), "portal_inflight_le_cap", "failed_open", 1,
                "worker 0 could not reach Redis and sent item 1 to the portal without a permit");
}

// --- the lease world: the set, grants, reaping, liveness -------------------------------------------------------

TEST_CASE("a non-atomic check-then-add overshoots the limit, in the set and at the portal", "[world][causes]") {
  // Goal: check_then_add names the count its acquire saw. Method: two workers acquire one permit at once.
  const auto runs = run_json(R"({"name": "race", "seed": 5,
    "gate": {"kind": "lease", "variant": "server_time", "limit": 1, "lease": "15s", "acquire_timeout": "30s",
             "backoff": {"kind": "fixed", "delay": "1ms"}, "mutation": "check_then_add"},
    "fleet": {"workers": 2},
    "service": {"portal_cap": 1, "service_time": "50ms"},
    "workload": {"requests": [{"at": "0ms"}, {"at": "0ms"}]}})", 5);
  require_cause(runs.front(), "gate_inflight_le_cap", "check_then_add", 1,
                "worker 1 counted 0 live permits, below the limit 1, then added w1-2 a round trip later, after others "
                "had added theirs: 2 live permits (a non-atomic check-then-add)");
  require_cause(runs.front(), "portal_inflight_le_cap", "check_then_add", 1,
                "2 connections at the portal hold permits in the set, above its cap 1 though the limit is 1: the set "
                "held more permits than its limit (a non-atomic check-then-add)");
}

TEST_CASE("a protocol that admits past its limit; the built-in scripts hold", "[world][causes]") {
  // Goal: protocol_over_limit. Method: an acquire that compares ZCARD > limit (not >=): it grants the limit + 1st.
  json doc = two_items(R"("server_time")", "15s", "1s", "10ms");
  doc["service"]["portal_cap"] = 2;
  require_no_violation(run_doc(doc, 1).front());
  doc["gate"].erase("variant");
  doc["gate"]["protocol"] = user_protocol("greedy", std::string(lua_now) +
                                                        "redis.call('ZREMRANGEBYSCORE', gate, '-inf', now - lease_ms)\n"
                                                        "if redis.call('ZCARD', gate) > limit then return 0 end\n"
                                                        "redis.call('ZADD', gate, now, token)\n"
                                                        "redis.call('PEXPIRE', gate, lease_ms)\n"
                                                        "return 1\n");
  require_cause(run_doc(doc, 1).front(), "gate_inflight_le_cap", "protocol_over_limit", 1,
                "the protocol's acquire for w1-2 (worker 1) left 2 live permits, above the limit 1");
}

TEST_CASE("a retried acquire whose first reply was lost is granted again: an observation, not a violation",
          "[world][causes]") {
  // Goal: a re-grant of a member takes no second permit, so nothing breaks; the report counts it and says what
  // became of the first reply. Method: the link to the worker is cut as the first grant's reply travels; then
  // Redis is paused past the client's socket timeout, so the first acquire runs late.
  json doc = json::parse(R"({"name": "retried", "seed": 1,
    "gate": {"kind": "lease", "variant": "server_time", "limit": 2, "lease": "15s", "acquire_timeout": "30s",
             "backoff": {"kind": "fixed", "delay": "100ms"}},
    "fleet": {"workers": 1},
    "service": {"portal_cap": 2, "service_time": "1s", "client_timeout": "20s"},
    "workload": {"requests": [{"at": "10ms"}]}})");
  doc["faults"]["schedule"] = json::array(
      {json{{"at", "10800us"}, {"kind", "partition"}, {"between", {"worker:0", "redis"}}, {"duration", "100ms"}}});
  const auto regranted = [](const run_record& rec, const std::string& example) {
    require_no_violation(rec);
    REQUIRE(rec.lease.has_value());
    CHECK(rec.lease->regrants == 1);
    CHECK(rec.lease->regrant_example == example);
  };
  regranted(run_doc(doc, 1).front(),
            "token w0-1 was granted at 00:00:00.010, but its reply was lost on the cut link to worker 0; the client "
            "retried under the same token and was granted again at 00:00:01.110");
  doc["faults"]["schedule"] = json::array({json{{"at", "0ms"}, {"kind", "pause"}, {"target", "redis"}, {"duration", "1500ms"}}});
  regranted(run_doc(doc, 1).front(),
            "token w0-1 was granted at 00:00:01.500, but the script ran after the client's 1s socket timeout; the "
            "client retried under the same token and was granted again at 00:00:01.500");
}

TEST_CASE("an acquire that does not reap keeps a dead holder's permit", "[world][causes]") {
  // Goal: acquire_does_not_reap (mutation no_reaping). Method: the mutant test's crashed holder.
  const auto runs = run_json(R"({"name": "noreap", "seed": 6,
    "gate": {"kind": "lease", "variant": "server_time", "limit": 2, "lease": "5s", "acquire_timeout": "60s",
             "mutation": "no_reaping"},
    "fleet": {"workers": 3},
    "service": {"portal_cap": 2, "service_time": "1s"},
    "workload": {"arrivals": [{"kind": "constant", "count": 30, "every": "500ms"}]},
    "faults": {"schedule": [{"at": "300ms", "kind": "crash", "target": "worker:0"}]}})", 6);
  const invariant_result& i = inv(runs.front(), "expired_leases_reaped");
  REQUIRE(i.causes.size() == 1);
  CHECK(i.causes[0].kind == "acquire_does_not_reap");
  CHECK(i.causes[0].count == i.windows);  // one per failed acquire
  CHECK(i.causes[0].example ==
        "permit w0-1 survived worker 2's acquire, 5.02s after it was scored, on a 5s lease: the acquire does not reap "
        "(mutation no_reaping)");
}

TEST_CASE("a protocol that neither reaps nor expires its key leaves a crashed holder's permit for ever", "[world][causes]") {
  // Goal: acquire_does_not_reap for a user's protocol; liveness judges a permit on its expiry, so one past its
  // lease is the reaping's to judge, and permits_never_expire names only a permit still live one lease after the end
  // (scored far ahead); a built-in variant (whose acquire reaps and pushes the key's expiry out) holds. Method: the
  // holder crashes at 100ms.
  json doc = two_items(R"("server_time")", "2s", "1s", "3s");
  doc["gate"]["acquire_timeout"] = "3s";
  doc["faults"]["schedule"] = json::array({json{{"at", "100ms"}, {"kind", "crash"}, {"target", "worker:0"}}});
  require_no_violation(run_doc(doc, 3).front());
  doc["gate"].erase("variant");
  doc["gate"]["protocol"] = user_protocol("leaky", std::string(lua_now) +
                                                       "if redis.call('ZCARD', gate) >= limit then return 0 end\n"
                                                       "redis.call('ZADD', gate, now, token)\n"
                                                       "return 1\n");
  const auto runs = run_doc(doc, 3);
  const invariant_result& reaped = inv(runs.front(), "expired_leases_reaped");
  REQUIRE(reaped.causes.size() == 1);
  CHECK(reaped.causes[0].kind == "acquire_does_not_reap");
  CHECK(reaped.causes[0].example ==
        "the protocol's acquire for worker 1 left permit w0-1 in the set past its expiry by the server's clock");
  CHECK(inv(runs.front(), "liveness").holds);  // w0-1 expired 2s after its grant: free capacity, left unreaped
  // Scored a day ahead, the crashed holder's permit is still live one lease after the end.
  doc["gate"]["protocol"] = user_protocol("leaky_ahead", std::string(lua_now) +
                                                             "if redis.call('ZCARD', gate) >= limit then return 0 end\n"
                                                             "redis.call('ZADD', gate, now + 86400000, token)\n"
                                                             "return 1\n");
  require_cause(run_doc(doc, 3).front(), "liveness", "permits_never_expire", 1,
                "permit w0-1 stays in the set: worker 0 crashed at 00:00:00.100 while holding it, and the holders key "
                "has no expiry");
}

TEST_CASE("an acquire held up behind a paused Redis scores its permit by a stale now; server_time holds",
          "[world][causes]") {
  // Goal: stale_caller_now, not caller_clock_skew, when every clock is right: the seed variant's acquire carries
  // the now its caller took when it sent the call, and a paused Redis runs it later. Method: one worker, one
  // item at 0, Redis paused from 0 for 12s on a 10s lease.
  const auto runs = run_json(R"({"name": "stale", "seed": 1,
    "gate": {"kind": "lease", "variant": ["seed", "server_time"], "limit": 2, "lease": "10s", "acquire_timeout": "60s"},
    "fleet": {"workers": 1},
    "service": {"portal_cap": 2, "service_time": "1s", "client_timeout": "20s"},
    "workload": {"requests": [{"at": "0ms"}]},
    "faults": {"schedule": [{"at": "0ms", "kind": "pause", "target": "redis", "duration": "12s"}]}})", 1);
  const invariant_result& i = inv(run_named(runs, "seed"), "expired_leases_reaped");
  REQUIRE_FALSE(i.holds);
  REQUIRE_FALSE(i.causes.empty());
  CHECK(i.causes[0].kind == "stale_caller_now");
  CHECK(i.causes[0].example ==
        "worker 0's acquire ran at 00:00:12 by the server's clock with the now its caller took 12s earlier, when it "
        "sent the call (00:00:00): by that now its own permit w0-1 (score 00:00:00) was within its 10s lease; by the "
        "server's clock it was past it");
  for (const auto& c : i.causes) CHECK(c.kind != "caller_clock_skew");
  require_no_violation(run_named(runs, "server_time"));
}

TEST_CASE("a renewal held up behind a paused Redis past its client's timeout scores the permit by a stale now",
          "[world][causes]") {
  // Goal: stale_caller_now for a renewal, not unexplained ("no clock moved"): a protocol scored by its caller's
  // clock whose refresh carries the caller's now. Method: a 3s lease refreshed every 2s under an 8s request; Redis
  // paused from 1.9s for 2s holds the refresh sent at 2s (now 2.001) past the client's 1s timeout, and runs it at
  // 3.9s with that now; a second item's acquire at 5.2s reaps the permit, 1.3s after the server ran the refresh.
  json doc = two_items(R"("server_time")", "3s", "8s", "5s");
  doc["gate"].erase("variant");
  doc["gate"]["renew_every"] = "2s";
  json p = user_protocol("caller_refresh",
                         "local gate, lease_ms, limit, token, now = KEYS[1], tonumber(ARGV[1]), tonumber(ARGV[2]), "
                         "ARGV[3], tonumber(ARGV[4])\n"
                         "redis.call('ZREMRANGEBYSCORE', gate, '-inf', now - lease_ms)\n"
                         "if redis.call('ZCARD', gate) >= limit then return 0 end\n"
                         "redis.call('ZADD', gate, now, token)\n"
                         "return 1\n");
  p["acquire"]["args"] = json::array({"{lease_ms}", "{limit}", "{token}", "{now_ms}"});
  p["scripts"]["renew"]["source"] =
      "local gate, token, now = KEYS[1], ARGV[1], tonumber(ARGV[2])\n"
      "if not redis.call('ZSCORE', gate, token) then return 0 end\n"
      "redis.call('ZADD', gate, now, token)\n"
      "return 1\n";
  p["scripts"]["renew"]["origin"] = "caller_refresh_renew.lua";
  p["renew"] = json{{"script", "renew"}, {"keys", {"{key}"}}, {"args", {"{token}", "{now_ms}"}}, {"kept_when", "equals_1"}};
  doc["gate"]["protocol"] = p;
  doc["faults"]["schedule"] = json::array({json{{"at", "1900ms"}, {"kind", "pause"}, {"target", "redis"}, {"duration", "2s"}}});
  require_cause(run_doc(doc, 1).front(), "portal_inflight_le_cap", "stale_caller_now", 1,
                "permit w0-1 was scored 00:00:02.001 by the now its renewal carried, but the server ran that renewal "
                "1.899s later, at 00:00:03.900 (the call was held up on its way: a paused Redis, a slow link); worker "
                "1's acquire reaped it at its now 00:00:05.201 (1.301s into its 3s lease)");
}

TEST_CASE("a protocol that reaps one expired permit per acquire leaves the others, by its caller's own now",
          "[world][causes]") {
  // Goal: acquire_does_not_reap, not caller_clock_skew, for a protocol scored by its caller's clock whose acquire
  // removes only the oldest expired permit: the permits it leaves are past their lease by the very now the caller
  // passed. Method: three holders of a limit of 3 crash at 100ms; a fourth worker's acquire at 15s reaps one of
  // the three on a 10s lease.
  json doc = json::parse(R"({"name": "reap_one", "seed": 1,
    "gate": {"kind": "lease", "limit": 3, "lease": "10s", "acquire_timeout": "5s"},
    "fleet": {"workers": 4},
    "service": {"portal_cap": 3, "service_time": "1s", "client_timeout": "20s"},
    "workload": {"requests": [{"at": "0ms"}, {"at": "1ms"}, {"at": "2ms"}, {"at": "15s"}]},
    "faults": {"schedule": [{"at": "100ms", "kind": "crash", "target": "worker:0"},
                           {"at": "100ms", "kind": "crash", "target": "worker:1"},
                           {"at": "100ms", "kind": "crash", "target": "worker:2"}]}})");
  json p = user_protocol("reap_one",
                         "local gate, lease_ms, limit, token, now = KEYS[1], tonumber(ARGV[1]), tonumber(ARGV[2]), "
                         "ARGV[3], tonumber(ARGV[4])\n"
                         "local oldest = redis.call('ZRANGE', gate, 0, 0, 'WITHSCORES')\n"
                         "if oldest[2] and tonumber(oldest[2]) <= now - lease_ms then redis.call('ZREM', gate, oldest[1]) end\n"
                         "if redis.call('ZCARD', gate) >= limit then return 0 end\n"
                         "redis.call('ZADD', gate, now, token)\n"
                         "return 1\n");
  p["acquire"]["args"] = json::array({"{lease_ms}", "{limit}", "{token}", "{now_ms}"});
  doc["gate"]["protocol"] = p;
  const auto runs = run_doc(doc, 1);
  const invariant_result& i = inv(runs.front(), "expired_leases_reaped");
  REQUIRE_FALSE(i.holds);
  REQUIRE(i.causes.size() == 1);
  CHECK(i.causes[0].kind == "acquire_does_not_reap");
  CHECK(i.causes[0].example ==
        "the protocol's acquire for worker 3 left permit w1-2 (score 00:00:00.001) in the set, though by the now its "
        "caller passed (00:00:15) the permit was past its expiry: the acquire reaps fewer expired permits than there "
        "are");
}

TEST_CASE("a holder paused past its lease, with a request shorter than the lease", "[world][causes]") {
  // Goal: holder_paused, not lease_outlived: the request alone fits the lease, the pause does not. Method: a 1s
  // request on a 3s lease; its worker is paused for 4s from 500us, while its acquire is on its way, so it sends
  // the request only at 4s; a second item at 3.5s takes the permit that expired at 3s, and the woken worker's
  // request finds the portal full.
  json doc = two_items(R"("server_time")", "3s", "1s", "3500ms");
  doc["faults"]["schedule"] = json::array({json{{"at", "500us"}, {"kind", "pause"}, {"target", "worker:0"}, {"duration", "4s"}}});
  const auto runs = run_doc(doc, 1);
  const invariant_result& i = inv(runs.front(), "portal_inflight_le_cap");
  REQUIRE_FALSE(i.holds);
  REQUIRE_FALSE(i.causes.empty());
  CHECK(i.causes[0].kind == "holder_paused");
  CHECK(i.causes[0].example ==
        "permit w0-1 gone with the gate key's expiry 3.5s after its grant at 00:00:00, and its worker was paused 4s "
        "from 00:00:00: the pause, not its 1s request, outlasted the 3s lease (no renewal)");
}

TEST_CASE("items left in the queue with no worker to take them", "[world][causes]") {
  // Goal: no_worker_left names the workers gone. Method: the only worker crashes for good with two items queued.
  const auto runs = run_json(R"({"name": "noworker", "seed": 1,
    "gate": {"kind": "lease", "variant": "server_time", "limit": 1, "lease": "15s", "acquire_timeout": "30s"},
    "fleet": {"workers": 1},
    "service": {"portal_cap": 1, "service_time": "1s", "client_timeout": "20s"},
    "workload": {"requests": [{"at": "0ms"}, {"at": "10ms"}, {"at": "20ms"}]},
    "faults": {"schedule": [{"at": "100ms", "kind": "crash", "target": "worker:0"}]}})", 1);
  require_cause(runs.front(), "liveness", "no_worker_left", 1,
                "2 items still queued with no worker left to take them: worker 0 crashed at 00:00:00.100, never "
                "restarted");
}

TEST_CASE("a run_fleet fleet whose every worker exited after acquire timeouts", "[world][causes]") {
  // Goal: fleet_exhausted counts the workers gone and the items left, at the end and at the liveness horizon.
  // Method: one worker on one permit, Redis cut off longer than the acquire budget; then the same judged at 3s.
  const std::string doc = R"({"name": "exhausted", "seed": 1,
    "gate": {"kind": "lease", "variant": "server_time", "limit": 1, "lease": "15s", "acquire_timeout": "1s"},
    "fleet": {"workers": 1, "on_acquire_timeout": "requeue_and_exit"},
    "service": {"portal_cap": 1, "service_time": "1s", "client_timeout": "20s"},
    "workload": {"requests": [{"at": "0ms"}, {"at": "10ms"}]},
    "faults": {"schedule": [{"at": "0ms", "kind": "partition", "target": "redis", "duration": "2s"}]})";
  const auto runs = run_json(doc + "}", 1);
  const invariant_result& live = inv(runs.front(), "liveness");
  REQUIRE_FALSE(live.causes.empty());
  CHECK(live.causes[0].kind == "fleet_exhausted");
  // Beside it, only never_granted: in an outage from the start the run granted nothing at all.
  for (std::size_t c = 1; c < live.causes.size(); ++c) CHECK(live.causes[c].kind == "never_granted");
  CHECK(live.causes[0].example.rfind("the only worker exited after acquire timeouts (the last at 00:00:01", 0) == 0);
  CHECK(live.causes[0].example.find("; 2 items left in the queue") != std::string::npos);
  // A third item arrives at 5s, so the run is still going at the 3s horizon.
  json later = json::parse(doc + R"(, "checks": {"liveness_horizon": "3s"}})");
  later["workload"]["requests"].push_back(json{{"at", "5s"}});
  const auto at_horizon = run_doc(later, 1);
  const invariant_result& lh = inv(at_horizon.front(), "liveness");
  // Judged at the horizon (2 items queued) and again at the end (3): one kind, counted twice, the first its example;
  // beside it never_granted (the outage came first: nothing was granted in the whole run).
  REQUIRE(lh.causes.size() == 2);
  CHECK(lh.causes[1].kind == "never_granted");
  CHECK(lh.causes[0].kind == "fleet_exhausted");
  CHECK(lh.causes[0].count == 2);
  CHECK(lh.causes[0].example ==
        "at the liveness horizon (00:00:03) the only worker exited after acquire timeouts (the last at 00:00:01); 2 "
        "items left in the queue");
  // The design the table names: the same run under defer ends both items (deferred: the outage outlasts both
  // acquire budgets, so nothing is granted, which liveness reports as never_granted and nothing else).
  json defer = json::parse(doc + "}");
  defer["fleet"]["on_acquire_timeout"] = "defer";
  const run_record deferred = run_doc(defer, 1).front();
  for (const auto& i : deferred.invariants) {
    INFO(i.name);
    CHECK(i.holds == (i.name != "liveness"));
    for (const auto& c : i.causes) CHECK(c.kind == "never_granted");
  }
  const auto surge = run_doc([] {
    json d = json::parse(admit::test::slurp("scenarios/run_fleet_surge.json"));
    d.erase("expect");
    d["fleet"]["on_acquire_timeout"] = "defer";
    return d;
  }(), 1);
  require_no_violation(surge.front());
}

TEST_CASE("work still outstanding at the liveness horizon", "[world][causes]") {
  // Goal: work_outstanding gives the queue and the work in progress. Method: a 5s request and one behind it, judged at 1s.
  const auto runs = run_json(R"({"name": "horizon", "seed": 1,
    "gate": {"kind": "lease", "variant": "server_time", "limit": 1, "lease": "15s", "acquire_timeout": "30s"},
    "fleet": {"workers": 1},
    "service": {"portal_cap": 1, "service_time": "5s", "client_timeout": "20s"},
    "workload": {"requests": [{"at": "0ms"}, {"at": "10ms"}]},
    "checks": {"liveness_horizon": "1s"}})", 1);
  require_cause(runs.front(), "liveness", "work_outstanding", 1,
                "at the liveness horizon (00:00:01) 1 item waited in the queue (the oldest since 00:00:00.010), 1 item "
                "was at work and 1 worker held a permit");
}

// --- the FIFO world --------------------------------------------------------------------------------------------

TEST_CASE("a crashed process's work at the portal beside what the restarted gate admits; a lease gate holds", "[world][causes]") {
  // Goal: crashed_process_work names each orphaned request, and the design the table names for it (a fleet-wide
  // lease, whose permits outlive the process that took them until their lease ends). Method: the catalogue's
  // fifo_crash_restart; then the same crash of every holder under a lease gate of the same cap.
  const auto r = admit::test::run_file("scenarios/fifo_crash_restart.json", 1);
  require_cause(r.rec, "portal_inflight_le_cap", "crashed_process_work", 2,
                "request a's work, started before the process crashed at 0.5s, still ran at the portal while the "
                "restarted process's gate admitted anew");
  REQUIRE(r.rec.invariants.size() > 0);
  const auto lease = run_json(R"({"name": "lease_crash_restart", "seed": 1,
    "gate": {"kind": "lease", "variant": "server_time", "limit": 2, "lease": "15s", "acquire_timeout": "30s"},
    "fleet": {"workers": 4},
    "service": {"portal_cap": 2, "service_time": "1s", "client_timeout": "20s"},
    "workload": {"requests": [{"at": "0ms"}, {"at": "0ms"}, {"at": "100ms"}, {"at": "200ms"}, {"at": "600ms"},
                              {"at": "800ms"}, {"at": "800ms"}]},
    "faults": {"schedule": [{"at": "500ms", "kind": "crash", "target": "worker:0", "duration": "200ms"},
                            {"at": "500ms", "kind": "crash", "target": "worker:1", "duration": "200ms"}]}})", 1);
  require_no_violation(lease.front());
}

TEST_CASE("several gates whose caps add up above the portal's", "[world][causes]") {
  // Goal: gate_caps_above_portal. Method: two gates of 1 before a portal of 1, one request each.
  const auto r = admit::test::run_text(R"({"name": "caps", "seed": 1,
    "gates": [{"name": "a", "kind": "fifo", "max_active": 1, "max_waiting": 1, "wait_deadline": "1s"},
              {"name": "b", "kind": "fifo", "max_active": 1, "max_waiting": 1, "wait_deadline": "1s"}],
    "service": {"portal_cap": 1, "service_time": "100ms"},
    "workload": {"requests": [{"gate": "a", "at": "0ms"}, {"gate": "b", "at": "0ms"}]}})", 1);
  require_cause(r.rec, "portal_inflight_le_cap", "gate_caps_above_portal", 1,
                "the gates' caps add up to 2 (a 1, b 1), above the portal's cap 1");
}

TEST_CASE("a handler that frees its lease as the work begins", "[world][causes]") {
  // Goal: mutant_release_before_work_ends names the request. Method: two overlapping requests on one slot.
  const auto r = admit::test::run_text(R"({"name": "early_release",
    "gate": {"kind": "fifo", "max_active": 1, "max_waiting": 1, "wait_deadline": "1s", "mutation": "release_before_work_ends"},
    "service": {"service_time": "100ms"},
    "workload": {"requests": [{"at": "0ms"}, {"at": "10ms"}]}})", 1);
  require_cause(r.rec, "portal_inflight_le_cap", "mutant_release_before_work_ends", 1,
                "request r1's lease was freed as its work began (mutation release_before_work_ends), and the work "
                "still ran");
}

TEST_CASE("a gate that admits at its cap", "[world][causes]") {
  // Goal: mutant_admit_off_by_one, for the gate's own count and at the portal. Method: two requests on a gate of 1.
  const auto r = admit::test::run_text(R"({"name": "offbyone", "seed": 1,
    "gate": {"kind": "fifo", "max_active": 1, "max_waiting": 1, "wait_deadline": "1s", "mutation": "admit_off_by_one"},
    "service": {"service_time": "100ms"},
    "workload": {"requests": [{"at": "0ms"}, {"at": "10ms"}]}})", 1);
  require_cause(r.rec, "gate_inflight_le_cap", "mutant_admit_off_by_one", 1,
                "gate: admitted ticket 2 made 2 leases active, above max_active 1: gate admits while active <= "
                "max_active (mutation admit_off_by_one)");
  require_cause(r.rec, "portal_inflight_le_cap", "mutant_admit_off_by_one", 1,
                "gate's requests hold 2 leases at the portal, above its max_active 1: gate admits while active <= "
                "max_active (mutation admit_off_by_one)");
}

TEST_CASE("a newcomer that takes the slot past a waiter", "[world][causes]") {
  // Goal: mutant_newcomers_jump_queue. Method: a release leaves the slot free; a request at 150ms takes it.
  const auto r = admit::test::run_text(R"({"name": "jumpq", "seed": 1,
    "gate": {"kind": "fifo", "max_active": 1, "max_waiting": 2, "wait_deadline": "1s", "mutation": "newcomers_jump_queue"},
    "service": {"service_time": "100ms"},
    "workload": {"requests": [{"at": "0ms"}, {"at": "10ms"}, {"at": "150ms"}]}})", 1);
  require_cause(r.rec, "fifo_order", "mutant_newcomers_jump_queue", 1,
                "gate: admitted newcomer ticket 3 while ticket 2 was waiting: gate's release leaves the slot free, and a "
                "newcomer takes it past older waiters (mutation newcomers_jump_queue)");
}

TEST_CASE("a lease handed to a cancelled waiter, never released", "[world][causes]") {
  // Goal: mutant_leak_handover_on_cancel, for lease_released_once and liveness. Method: the mutant's bounds file
  // (tests/explore/mutants/) at seed 2, where a cancellation lands on its waiter's promotion (docs/mutants.md).
  const auto r = admit::test::run_file("tests/explore/mutants/leak_handover_on_cancel.json", 2);
  require_cause(r.rec, "lease_released_once", "mutant_leak_handover_on_cancel", 1,
                "gate: 2 leases granted but 1 released after every request ended: gate never releases a lease handed "
                "to a waiter cancelled before it resumed (mutation leak_handover_on_cancel)");
  require_cause(r.rec, "liveness", "mutant_leak_handover_on_cancel", 1,
                "gate is not idle at the end: active 1, waiting 0: gate never releases a lease handed to a waiter "
                "cancelled before it resumed (mutation leak_handover_on_cancel)");
}

TEST_CASE("a lease released twice when its waiter's deadline passes", "[world][causes]") {
  // Goal: mutant_double_release_on_timeout, at the portal (a lease counted out while its work runs) and for
  // lease_released_once. Method: the mutant's bounds file at seed 5.
  const auto r = admit::test::run_file("tests/explore/mutants/double_release_on_timeout.json", 5);
  require_cause(r.rec, "portal_inflight_le_cap", "mutant_double_release_on_timeout", 4,
                "gate counts 1 lease active while 2 of its requests hold one at the portal: gate releases twice a lease "
                "handed to a waiter whose deadline passed before it resumed (mutation double_release_on_timeout)");
  const invariant_result& once = inv(r.rec, "lease_released_once");
  REQUIRE(once.causes.size() == 1);
  CHECK(once.causes[0].kind == "mutant_double_release_on_timeout");
  CHECK(once.causes[0].count == once.windows);
}

// --- what every run keeps to ---------------------------------------------------------------------------------

TEST_CASE("a run without a violation names no cause", "[world][causes]") {
  // Goal: causes come only with violations. Method: a passing lease run with faults and a passing FIFO run; every
  // invariant holds with no window and no cause, and the report's invariants carry no "violations".
  for (const char* file : {"scenarios/crashed_holder.json", "scenarios/fifo_poisson.json"}) {
    const auto r = admit::test::run_file(file, json::parse(admit::test::slurp(file)).value("seed", std::uint64_t{0}));
    for (const auto& run : r.runs) {
      INFO(file << " " << run.variant);
      require_no_violation(run);
      for (const auto& i : run.invariants) {
        CHECK(i.causes.empty());
        CHECK(i.window_list.empty());
      }
    }
    CHECK(r.bytes.find("\"causes\"") == std::string::npos);
  }
}

TEST_CASE("the report lists each cause with its title and designs from the table", "[world][causes]") {
  // Goal: the report's per-invariant causes are the table's rows. Method: the clock-skew test's run, rendered.
  json doc = two_items(R"("seed")", "15s", "10s", "1s");
  doc["fleet"]["clocks"] = json::array({json{{"worker", 1}, {"offset", "+20s"}}});
  const auto r = admit::test::run_text(doc.dump(), 1);
  const json& portal = r.report["variants"]["seed"]["invariants"]["portal_inflight_le_cap"];
  const json& causes = portal["violations"]["causes"];
  REQUIRE(causes.size() == 1);
  CHECK(causes[0]["kind"] == "caller_clock_skew");
  CHECK(causes[0]["count"] == 1);
  CHECK(causes[0]["title"] == admit::check::find_cause("caller_clock_skew")->title);
  CHECK(causes[0]["designs"] == json::array({"server_time", "renewal", "fencing", "fair"}));
  const json& window = portal["violations"]["window_list"][0];
  REQUIRE(window["causes"].size() == 1);
  CHECK(window["causes"][0]["kind"] == "caller_clock_skew");
}

TEST_CASE("every violation of the catalogue is explained", "[world][causes]") {
  // Goal: no violation in the shipped scenarios falls back to "unexplained", and each names at least one cause.
  // Method: every catalogue scenario at its own seed; the kinds seen are the table's rows.
  std::set<std::string> seen;
  for (const auto& e : fs::directory_iterator("scenarios")) {
    if (e.path().extension() != ".json" || e.path().filename() == "schema.json") continue;
    const std::string path = e.path().string();
    const json doc = json::parse(admit::test::slurp(path));
    const auto r = admit::test::run_file(path, doc.value("seed", std::uint64_t{0}));
    for (const auto& run : r.runs)
      for (const auto& i : run.invariants) {
        INFO(path << " " << run.variant << " " << i.name);
        if (i.holds) continue;
        CHECK_FALSE(i.causes.empty());
        for (const auto& c : i.causes) {
          CHECK(c.kind != "unexplained");
          CHECK(admit::check::find_cause(c.kind) != nullptr);
          seen.insert(c.kind);
        }
      }
  }
  // The catalogue's violations show these causes (docs/report.md, "Causes").
  for (const char* kind : {"caller_clock_skew", "lease_outlived", "crashed_holder", "client_timeout_release",
                           "restart_forgot", "failover_unreplicated", "renewal_missed", "crashed_process_work",
                           "fleet_exhausted"})
    CHECK(seen.count(kind) == 1);
}

TEST_CASE("the designs the table names remove the cause from the catalogue scenario that shows it", "[world][causes]") {
  // Goal: every design the cause table names for a catalogue cause was seen to remove it (docs/report.md,
  // "Causes"). Method: the scenario showing the cause, run under the design: clock_skew under every variant that
  // reads the server's clock; redis_restart with persistence aof_everysec and aof_always (and
  // redis_restart_aof_everysec under aof_always); client_timeout_overshoot under on_client_close free_slot;
  // lease_shorter_than_request under renewal. (hold_to_end: the client-timeout test above and
  // tests/world/protocol_world_test.cpp; restart_grace, a protocol file: tests/world/designs_test.cpp.)
  const auto under = [](const std::string& file, const std::function<void(json&)>& change) {
    json doc = json::parse(admit::test::slurp(file));
    doc.erase("expect");
    change(doc);
    return run_doc(doc, doc.value("seed", std::uint64_t{0}));
  };
  const auto skew = under("scenarios/clock_skew.json", [](json& d) {
    d["gate"]["variant"] = json::array({"server_time", "renewal", "fencing", "fair"});
  });
  REQUIRE(skew.size() == 4);
  for (const auto& r : skew) require_no_violation(r);
  // The scenarios' protocol files (restart_grace, hold_to_end) are read only from a file: the variants alone here.
  for (const char* persist : {"aof_everysec", "aof_always"}) {
    const auto restart = under("scenarios/redis_restart.json", [persist](json& d) {
      d["gate"].erase("protocol");
      d["faults"]["schedule"][0]["persistence"] = persist;
    });
    REQUIRE(restart.size() == 3);
    for (const auto& r : restart) require_no_violation(r);
  }
  const auto last_second = under("scenarios/redis_restart_aof_everysec.json",
                                 [](json& d) { d["faults"]["schedule"][0]["persistence"] = "aof_always"; });
  REQUIRE(last_second.size() == 2);
  for (const auto& r : last_second) require_no_violation(r);
  const auto freed = under("scenarios/client_timeout_overshoot.json", [](json& d) {
    d["gate"].erase("protocol");
    d["service"]["on_client_close"] = "free_slot";
  });
  REQUIRE(freed.size() == 2);
  for (const auto& r : freed) require_no_violation(r);
  const auto renewal = under("scenarios/lease_shorter_than_request.json", [](json& d) { d["gate"]["variant"] = "renewal"; });
  require_no_violation(renewal.front());
}
