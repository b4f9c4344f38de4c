// Transitions of each lease-protocol variant's C++ script body, and the
// plumbing that hands the matching Lua scripts to a real Redis.
#include <catch2/catch.hpp>

#include <fstream>
#include <sstream>
#include <string>

#include "gate/admit_assert.hpp"
#include "gate/redis/lease_scripts.hpp"
#include "tests/redis/redis_test_support.hpp"

using namespace admit::redis;
using namespace admit::redis::test;

namespace {

constexpr std::string_view gate = "sos:de:inflight";

acquire_args args(std::string_view token, std::int64_t lease_ms, std::int64_t limit,
                  std::int64_t now_ms = 0, std::int64_t queue_timeout_ms = 0) {
  acquire_args a;
  a.key = gate;
  a.token = token;
  a.now_ms = now_ms;
  a.lease_ms = lease_ms;
  a.limit = limit;
  a.queue_timeout_ms = queue_timeout_ms;
  return a;
}

std::int64_t acquire(replica& r, variant v, const acquire_args& a, std::int64_t now_us) {
  const script_reply reply = run_acquire(r, v, a, now_us);
  REQUIRE(reply.ok());
  return reply.value;
}

std::int64_t release(replica& r, variant v, std::string_view token, std::int64_t now_us) {
  const script_reply reply = run_release(r, v, release_args{gate, token}, now_us);
  REQUIRE(reply.ok());
  return reply.value;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

}  // namespace

TEST_CASE("seed: grants below the limit, refuses at it, scores by the caller's clock") {
  // Goal: the document's acquire/release. Method: limit 2, three callers, then a release.
  replica r;
  const std::int64_t caller_ms = t0_ms + 5;  // the caller's clock, not the server's
  CHECK(acquire(r, variant::seed, args("a", 15'000, 2, caller_ms), t0_us) == 1);
  CHECK(acquire(r, variant::seed, args("b", 15'000, 2, caller_ms), t0_us) == 1);
  CHECK(acquire(r, variant::seed, args("c", 15'000, 2, caller_ms), t0_us) == 0);
  CHECK(r.zscore(gate, "a", t0_us) == static_cast<double>(caller_ms));
  CHECK(r.pttl(gate, t0_us) == 15'000);  // the key's expiry runs on the server clock
  CHECK(release(r, variant::seed, "a", t0_us) == 1);
  CHECK(release(r, variant::seed, "a", t0_us) == 0);  // twice is harmless
  CHECK(acquire(r, variant::seed, args("c", 15'000, 2, caller_ms), t0_us) == 1);
  CHECK(r.zcard(gate, t0_us) == 2);
}

TEST_CASE("seed: reaps leases taken at or before now - lease, by the caller's clock") {
  // Goal: the reaping boundary and the skew flaw. Method: a caller whose clock runs ahead.
  replica r;
  CHECK(acquire(r, variant::seed, args("a", 100, 1, 1000), t0_us) == 1);
  CHECK(acquire(r, variant::seed, args("b", 100, 1, 1099), t0_us) == 0);  // a is 99 ms old
  CHECK(acquire(r, variant::seed, args("b", 100, 1, 1100), t0_us) == 1);  // 100 ms: reaped
  CHECK(r.zscore(gate, "a", t0_us) == std::nullopt);
  // A worker whose clock is 5 s ahead takes b's slot although b's holder is
  // still working: the design's clock-skew flaw.
  CHECK(acquire(r, variant::seed, args("fast", 100, 1, 6100), t0_us) == 1);
  CHECK(r.zscore(gate, "b", t0_us) == std::nullopt);
}

TEST_CASE("seed and server_time: lease 0 and limit 0") {
  // Goal: edge values behave as the scripts say. Method: lease 0 deletes the key on grant;
  // limit 0 refuses all.
  for (const variant v : {variant::seed, variant::server_time}) {
    replica r;
    CHECK(acquire(r, v, args("a", 0, 3, t0_ms), t0_us) == 1);  // granted...
    CHECK(r.exists(gate, t0_us) == false);                     // ...and PEXPIRE 0 deleted the gate
    CHECK(acquire(r, v, args("a", 1000, 0, t0_ms), t0_us) == 0);
    CHECK(r.key_count() == 0);
  }
}

TEST_CASE("server_time: scores and reaping follow the server clock, not the caller's") {
  // Goal: TIME replaces the caller's now. Method: wildly skewed now_ms must change nothing.
  replica r;
  CHECK(acquire(r, variant::server_time, args("a", 100, 1, 999'999'999), t0_us) == 1);
  CHECK(r.zscore(gate, "a", t0_us) == static_cast<double>(t0_ms));
  CHECK(acquire(r, variant::server_time, args("b", 100, 1, 999'999'999), at_ms(99)) == 0);
  CHECK(acquire(r, variant::server_time, args("b", 100, 1, 0), at_ms(100)) == 1);
  CHECK(r.zscore(gate, "b", at_ms(100)) == static_cast<double>(t0_ms + 100));
  CHECK(r.pexpiretime(gate, at_ms(100)) == t0_ms + 200);
  CHECK(release(r, variant::server_time, "b", at_ms(100)) == 1);
  CHECK(r.key_count() == 0);
}

TEST_CASE("renewal: a holder extends its lease, and learns when it has lost it") {
  // Goal: renew's two outcomes. Method: renew inside the lease, then after it ran out.
  replica r;
  const variant v = variant::renewal;
  CHECK(acquire(r, v, args("a", 100, 1), t0_us) == 1);
  CHECK(run_renew(r, v, renew_args{gate, "a", 100}, at_ms(60)).value == 1);
  CHECK(r.zscore(gate, "a", at_ms(60)) == static_cast<double>(t0_ms + 60));
  CHECK(r.pttl(gate, at_ms(60)) == 100);
  // Without the renewal, a would have been reaped at +100; now it holds until +160.
  CHECK(acquire(r, v, args("b", 100, 1), at_ms(150)) == 0);
  CHECK(run_renew(r, v, renew_args{gate, "a", 100}, at_ms(160)).value == 0);  // ran out: lost
  CHECK(r.zscore(gate, "a", at_ms(160)) == std::nullopt);  // and not revived
  CHECK(run_renew(r, v, renew_args{gate, "never", 100}, at_ms(160)).value == 0);
  CHECK(acquire(r, v, args("b", 100, 1), at_ms(160)) == 1);
  CHECK_THROWS_AS(run_renew(r, variant::seed, renew_args{gate, "b", 100}, at_ms(160)),
                  admit::assertion_failure);
}

TEST_CASE("fencing: each grant returns the next number; refusals consume none") {
  // Goal: monotonic fencing numbers. Method: grants, a refusal, a release, more grants.
  replica r;
  const variant v = variant::fencing;
  CHECK(acquire(r, v, args("a", 100, 2), t0_us) == 1);
  CHECK(acquire(r, v, args("b", 100, 2), t0_us) == 2);
  CHECK(acquire(r, v, args("c", 100, 2), t0_us) == 0);
  CHECK(release(r, v, "a", t0_us) == 1);
  CHECK(acquire(r, v, args("c", 100, 2), t0_us) == 3);
  CHECK(r.pttl(std::string(gate) + ":fence", t0_us) == -1);  // the counter never expires
  // Even after every lease has expired and the gate key is gone, numbers keep growing.
  CHECK(acquire(r, v, args("d", 100, 2), at_ms(1000)) == 4);
}

TEST_CASE("A command error inside a script ends it and keeps earlier writes, as in Redis") {
  // Goal: script error semantics. Method: corrupt the fence counter, then acquire.
  replica r;
  r.set(std::string(gate) + ":fence", "not a number", t0_us);
  const script_reply reply = run_acquire(r, variant::fencing, args("a", 100, 2), t0_us);
  CHECK_FALSE(reply.ok());
  CHECK(reply.error == "ERR value is not an integer or out of range");
  CHECK(to_reply(reply) == reply::error("ERR value is not an integer or out of range"));
  CHECK(r.zcard(gate, t0_us) == 1);  // the ZADD before the failed INCR stays

  replica typed;
  typed.set(gate, "a string", t0_us);
  CHECK(run_acquire(typed, variant::seed, args("a", 100, 2), t0_us).error ==
        "WRONGTYPE Operation against a key holding the wrong kind of value");
}

TEST_CASE("fair: a freed permit goes to the earliest live waiter, not the first to poll") {
  // Goal: arrival order. Method: limit 1; a, b wait in that order; the holder leaves; b polls first.
  replica r;
  const variant v = variant::fair;
  const auto poll = [&](std::string_view token, std::int64_t ms) {
    return acquire(r, v, args(token, 10'000, 1, 0, 500), at_ms(ms));
  };
  CHECK(poll("holder", 0) == 1);
  CHECK(poll("a", 1) == 0);
  CHECK(poll("b", 2) == 0);
  CHECK(r.zrank(std::string(gate) + ":queue", "a", at_ms(2)) == 0);
  CHECK(release(r, v, "holder", at_ms(3)) == 1);
  CHECK(poll("b", 4) == 0);  // b polls first but a is ahead
  CHECK(poll("a", 5) == 1);
  CHECK(poll("b", 6) == 0);
  CHECK(release(r, v, "a", at_ms(7)) == 1);
  CHECK(poll("b", 8) == 1);
  CHECK(r.exists(std::string(gate) + ":queue", at_ms(8)) == false);
  CHECK(r.get(std::string(gate) + ":ticket", at_ms(8)) == "3");  // holder, a, b
}

TEST_CASE("fair: with several free permits, the first `free` waiters are admitted") {
  // Goal: admission by rank < free. Method: limit 2 with one holder; the second waiter may enter.
  replica r;
  const variant v = variant::fair;
  const auto poll = [&](std::string_view token, std::int64_t ms) {
    return acquire(r, v, args(token, 10'000, 2, 0, 500), at_ms(ms));
  };
  CHECK(poll("h1", 0) == 1);
  CHECK(poll("h2", 0) == 1);
  CHECK(poll("a", 1) == 0);
  CHECK(poll("b", 2) == 0);
  CHECK(poll("c", 3) == 0);
  release(r, v, "h1", at_ms(4));
  release(r, v, "h2", at_ms(4));
  CHECK(poll("c", 5) == 0);  // rank 2, free 2
  CHECK(poll("b", 6) == 1);  // rank 1 < free 2: a keeps its permit reserved
  CHECK(poll("c", 7) == 0);  // rank 1, free 1
  CHECK(poll("a", 8) == 1);
  CHECK(poll("c", 9) == 0);  // full again
}

TEST_CASE("fair: a waiter that stops polling leaves the line after the queue timeout") {
  // Goal: stale waiters do not block the queue. Method: a waits once and goes silent.
  replica r;
  const variant v = variant::fair;
  const auto poll = [&](std::string_view token, std::int64_t ms) {
    return acquire(r, v, args(token, 10'000, 1, 0, 500), at_ms(ms));
  };
  CHECK(poll("holder", 0) == 1);
  CHECK(poll("a", 10) == 0);
  CHECK(poll("b", 20) == 0);
  release(r, v, "holder", at_ms(30));
  CHECK(poll("b", 400) == 0);  // a polled 390 ms ago: still in line
  CHECK(poll("b", 510) == 1);  // a's last poll is 500 ms old: reaped
  CHECK(r.zscore(std::string(gate) + ":queue", "a", at_ms(510)) == std::nullopt);
  CHECK(r.zscore(std::string(gate) + ":seen", "a", at_ms(510)) == std::nullopt);
  // a comes back: it joins at the end with a new ticket.
  CHECK(poll("a", 520) == 0);
  CHECK(r.zscore(std::string(gate) + ":queue", "a", at_ms(520)) == 4.0);  // holder, a, b, a
  // A line nobody polls any more disappears with its keys.
  CHECK(r.pttl(std::string(gate) + ":queue", at_ms(520)) == 500);
  CHECK(r.exists(std::string(gate) + ":seen", at_ms(1021)) == false);
}

TEST_CASE("fair: release withdraws a waiter, and a holder's retry is granted again") {
  // Goal: the two less common paths. Method: a waiter gives up; a holder re-polls.
  replica r;
  const variant v = variant::fair;
  const auto poll = [&](std::string_view token, std::int64_t ms) {
    return acquire(r, v, args(token, 100, 1, 0, 500), at_ms(ms));
  };
  CHECK(poll("holder", 0) == 1);
  CHECK(poll("a", 1) == 0);
  CHECK(poll("b", 2) == 0);
  CHECK(release(r, v, "a", at_ms(3)) == 0);  // not a holder, but it leaves the line
  CHECK(r.zcard(std::string(gate) + ":queue", at_ms(3)) == 1);
  CHECK(poll("holder", 50) == 1);  // a lost reply retried: still granted, lease restarted
  CHECK(r.zscore(gate, "holder", at_ms(50)) == static_cast<double>(t0_ms + 50));
  CHECK(poll("b", 120) == 0);  // holder's lease now runs to +150
  CHECK(poll("b", 150) == 1);
}

TEST_CASE("Keys derive from the gate key by suffix, also for long keys") {
  // Goal: key naming and the heap fallback of derived keys. Method: a 200-byte gate key.
  const lease_keys k = keys_for("g");
  CHECK(k.gate == "g");
  CHECK(k.fence == "g:fence");
  CHECK(k.queue == "g:queue");
  CHECK(k.seen == "g:seen");
  CHECK(k.ticket == "g:ticket");
  replica r;
  const std::string long_key(200, 'k');
  acquire_args a = args("a", 100, 1);
  a.key = long_key;
  CHECK(run_acquire(r, variant::fencing, a, t0_us).value == 1);
  CHECK(r.get(long_key + ":fence", t0_us) == "1");
}

TEST_CASE("Variant names round-trip") {
  // Goal: scenario files can name variants. Method: to_string then parse_variant.
  for (const variant v : all_variants) CHECK(parse_variant(to_string(v)) == v);
  CHECK(parse_variant("nope") == std::nullopt);
}

TEST_CASE("The Lua files exist, are embedded verbatim, and get the right KEYS and ARGV") {
  // Goal: the Lua side is wired to the same arguments. Method: read each file from lua_dir(),
  // compare with the embedded copy, inspect the EVAL arguments.
  for (const variant v : all_variants) {
    for (const script_op op : {script_op::acquire, script_op::release, script_op::renew}) {
      if (op == script_op::renew && !has_renew(v)) continue;
      const std::string path = std::string(lua_dir()) + "/" + std::string(lua_file(v, op));
      const std::string on_disk = read_file(path);
      INFO(path);
      CHECK_FALSE(on_disk.empty());
      CHECK(lua_source(v, op) == on_disk);
    }
  }
  CHECK(embedded_lua_files().size() == 7);

  const acquire_args a = args("tok", 15000, 8, 1234, 900);
  const lua_call seed = lua_acquire_call(variant::seed, a);
  CHECK(seed.file == "seed_acquire.lua");
  CHECK(seed.keys == std::vector<std::string>{"sos:de:inflight"});
  CHECK(seed.argv == std::vector<std::string>{"1234", "15000", "8", "tok"});
  const lua_call fencing = lua_acquire_call(variant::fencing, a);
  CHECK(fencing.keys == std::vector<std::string>{"sos:de:inflight", "sos:de:inflight:fence"});
  CHECK(fencing.argv == std::vector<std::string>{"15000", "8", "tok"});
  const lua_call fair = lua_acquire_call(variant::fair, a);
  CHECK(fair.keys.size() == 4);
  CHECK(fair.argv == std::vector<std::string>{"15000", "8", "tok", "900"});
  CHECK(lua_release_call(variant::fair, release_args{gate, "tok"}).keys.size() == 3);
  CHECK(lua_release_call(variant::renewal, release_args{gate, "tok"}).file == "release.lua");
  CHECK(lua_renew_call(variant::renewal, renew_args{gate, "tok", 15000}).argv ==
        std::vector<std::string>{"15000", "tok"});
}
