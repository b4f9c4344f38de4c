// Command semantics of the in-memory Redis replica. Expected replies are the
// ones redis-server 7.0 gives (checked by hand and by tests/integration).
#include <catch2/catch.hpp>

#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "gate/redis/replica.hpp"
#include "tests/redis/redis_test_support.hpp"

using namespace admit::redis;
using namespace admit::redis::test;

TEST_CASE("ZADD counts new members only, and its options behave as in Redis") {
  // Goal: ZADD's reply and option rules. Method: drive execute() and compare replies.
  replica r;
  CHECK(run(r, {"ZADD", "z", "1", "a"}) == integer(1));
  CHECK(run(r, {"ZADD", "z", "2", "a"}) == integer(0));  // update: not new
  CHECK(run(r, {"ZADD", "z", "2", "a", "3", "b"}) == integer(1));
  CHECK(run(r, {"ZSCORE", "z", "a"}) == reply::bulk("2"));
  CHECK(run(r, {"ZADD", "z", "CH", "5", "a", "3", "b", "4", "c"}) == integer(2));
  CHECK(run(r, {"ZADD", "z", "NX", "9", "a"}) == integer(0));
  CHECK(run(r, {"ZSCORE", "z", "a"}) == reply::bulk("5"));
  CHECK(run(r, {"ZADD", "z", "XX", "1", "new"}) == integer(0));
  CHECK(run(r, {"ZSCORE", "z", "new"}) == reply::nil());
  CHECK(run(r, {"ZADD", "z", "GT", "CH", "1", "a"}) == integer(0));
  CHECK(run(r, {"ZADD", "z", "LT", "CH", "1", "a"}) == integer(1));
  CHECK(run(r, {"ZADD", "z", "INCR", "2", "a"}) == reply::bulk("3"));
  CHECK(run(r, {"ZADD", "missing", "XX", "1", "a"}) == integer(0));
  CHECK(run(r, {"EXISTS", "missing"}) == integer(0));

  CHECK(run(r, {"ZADD", "z", "NX", "XX", "1", "a"}) ==
        reply::error("ERR XX and NX options at the same time are not compatible"));
  CHECK(run(r, {"ZADD", "z", "GT", "LT", "1", "a"}) ==
        reply::error("ERR GT, LT, and/or NX options at the same time are not compatible"));
  CHECK(run(r, {"ZADD", "z", "1", "a", "2"}) == reply::error("ERR syntax error"));
  CHECK(run(r, {"ZADD", "z", "XX", "1"}) == reply::error("ERR syntax error"));
  CHECK(run(r, {"ZADD", "z", "1"}) ==
        reply::error("ERR wrong number of arguments for 'zadd' command"));
  CHECK(run(r, {"ZADD", "z", "abc", "a"}) == reply::error("ERR value is not a valid float"));
  // A bad score anywhere refuses the whole command: nothing is added.
  CHECK(run(r, {"ZADD", "z", "1", "fresh", "x", "b"}) ==
        reply::error("ERR value is not a valid float"));
  CHECK(run(r, {"ZSCORE", "z", "fresh"}) == reply::nil());
}

TEST_CASE("Scores parse like Redis's getDoubleFromObject") {
  // Goal: which score strings ZADD accepts. Method: ZADD each string, read it back.
  replica r;
  CHECK(run(r, {"ZADD", "z", "nan", "m"}) == reply::error("ERR value is not a valid float"));
  CHECK(run(r, {"ZADD", "z", " 1", "m"}) == reply::error("ERR value is not a valid float"));
  CHECK(run(r, {"ZADD", "z", "1 ", "m"}) == reply::error("ERR value is not a valid float"));
  CHECK(run(r, {"ZADD", "z", "1e400", "m"}) == reply::error("ERR value is not a valid float"));
  CHECK(run(r, {"ZADD", "z", "", "m"}) == reply::error("ERR value is not a valid float"));
  CHECK(run(r, {"ZADD", "z", "0x10", "hex"}) == integer(1));
  CHECK(run(r, {"ZSCORE", "z", "hex"}) == reply::bulk("16"));
  CHECK(run(r, {"ZADD", "z", "+inf", "top", "-inf", "bottom"}) == integer(2));
  CHECK(run(r, {"ZSCORE", "z", "top"}) == reply::bulk("inf"));
  CHECK(run(r, {"ZSCORE", "z", "bottom"}) == reply::bulk("-inf"));
}

TEST_CASE("Scores print as Redis 7.0 prints them") {
  // Goal: the score text in replies. Method: format_score on chosen doubles.
  CHECK(format_score(1700000000123.0) == "1700000000123");
  CHECK(format_score(0.0) == "0");
  CHECK(format_score(1.5) == "1.5");
  CHECK(format_score(0.1) == "0.10000000000000001");
  CHECK(format_score(1e20) == "1e+20");
  CHECK(format_score(1e-7) == "9.9999999999999995e-08");
  CHECK(format_score(123456789012345678.0) == "1.2345678901234568e+17");
  CHECK(format_score(-2.25) == "-2.25");

  replica r;
  r.zadd("z", -0.0, "m", t0_us);  // a small set shows -0 as 0 in Redis
  CHECK(run(r, {"ZSCORE", "z", "m"}) == reply::bulk("0"));
}

TEST_CASE("ZRANGE orders by score, then by member bytes, with negative indexes") {
  // Goal: Redis's order and index arithmetic. Method: equal scores with members that differ in bytes.
  replica r;
  run(r, {"ZADD", "z", "2", "b", "1", "zz", "2", "ab", "2", "a", "2", "\xff", "2", "B", "3", "c"});
  CHECK(run(r, {"ZRANGE", "z", "0", "-1"}) == bulks({"zz", "B", "a", "ab", "b", "\xff", "c"}));
  CHECK(run(r, {"ZRANGE", "z", "-2", "-1", "WITHSCORES"}) == bulks({"\xff", "2", "c", "3"}));
  CHECK(run(r, {"ZRANGE", "z", "-100", "1"}) == bulks({"zz", "B"}));
  CHECK(run(r, {"ZRANGE", "z", "5", "100"}) == bulks({"\xff", "c"}));
  CHECK(run(r, {"ZRANGE", "z", "3", "2"}) == bulks({}));
  CHECK(run(r, {"ZRANGE", "z", "7", "9"}) == bulks({}));
  CHECK(run(r, {"ZRANGE", "z", "0", "1", "REV"}) == bulks({"c", "\xff"}));
  CHECK(run(r, {"ZRANGE", "missing", "0", "-1"}) == bulks({}));
  CHECK(run(r, {"ZRANGE", "z", "a", "1"}) ==
        reply::error("ERR value is not an integer or out of range"));
  CHECK(run(r, {"ZRANGE", "z", "0", "-1", "LIMIT", "0", "1"}) ==
        reply::error(
            "ERR syntax error, LIMIT is only supported in combination with either BYSCORE or BYLEX"));
  CHECK(run(r, {"ZRANGE", "z", "0", "-1", "foo"}) == reply::error("ERR syntax error"));
  CHECK(run(r, {"ZRANK", "z", "zz"}) == integer(0));
  CHECK(run(r, {"ZRANK", "z", "c"}) == integer(6));
  CHECK(run(r, {"ZRANK", "z", "nope"}) == reply::nil());
  CHECK(run(r, {"ZCARD", "z"}) == integer(7));
  CHECK(run(r, {"ZCARD", "missing"}) == integer(0));
}

TEST_CASE("ZRANGEBYSCORE and ZRANGE BYSCORE take inclusive, exclusive and infinite bounds") {
  // Goal: score-range selection and LIMIT. Method: ranges over scores 1..5.
  replica r;
  run(r, {"ZADD", "z", "1", "a", "2", "b", "3", "c", "4", "d", "5", "e"});
  CHECK(run(r, {"ZRANGEBYSCORE", "z", "2", "4"}) == bulks({"b", "c", "d"}));
  CHECK(run(r, {"ZRANGEBYSCORE", "z", "(2", "(4"}) == bulks({"c"}));
  CHECK(run(r, {"ZRANGEBYSCORE", "z", "-inf", "+inf", "LIMIT", "1", "2"}) == bulks({"b", "c"}));
  CHECK(run(r, {"ZRANGEBYSCORE", "z", "-inf", "+inf", "LIMIT", "3", "-1"}) == bulks({"d", "e"}));
  CHECK(run(r, {"ZRANGEBYSCORE", "z", "-inf", "+inf", "LIMIT", "-1", "2"}) == bulks({}));
  CHECK(run(r, {"ZRANGEBYSCORE", "z", "4", "2"}) == bulks({}));
  CHECK(run(r, {"ZRANGEBYSCORE", "z", "(3", "3"}) == bulks({}));
  CHECK(run(r, {"ZRANGEBYSCORE", "z", "4", "inf", "WITHSCORES"}) == bulks({"d", "4", "e", "5"}));
  CHECK(run(r, {"ZRANGE", "z", "4", "2", "BYSCORE", "REV"}) == bulks({"d", "c", "b"}));
  CHECK(run(r, {"ZRANGEBYSCORE", "z", "0", "5", "REV"}) == reply::error("ERR syntax error"));
  CHECK(run(r, {"ZRANGEBYSCORE", "z", "x", "5"}) == reply::error("ERR min or max is not a float"));
}

TEST_CASE("ZREMRANGEBYSCORE removes an inclusive range and deletes an emptied key") {
  // Goal: the reaping command's bounds. Method: remove ranges, inspect what is left.
  replica r;
  run(r, {"ZADD", "z", "10", "a", "20", "b", "30", "c", "40", "d"});
  CHECK(run(r, {"ZREMRANGEBYSCORE", "z", "0", "20"}) == integer(2));  // both ends inclusive
  CHECK(run(r, {"ZRANGE", "z", "0", "-1"}) == bulks({"c", "d"}));
  CHECK(run(r, {"ZREMRANGEBYSCORE", "z", "(30", "40"}) == integer(1));
  CHECK(run(r, {"ZREMRANGEBYSCORE", "z", "0", "-5"}) == integer(0));  // min > max: nothing
  CHECK(run(r, {"ZREMRANGEBYSCORE", "z", "-inf", "+inf"}) == integer(1));
  CHECK(run(r, {"EXISTS", "z"}) == integer(0));  // an empty sorted set does not exist
  CHECK(run(r, {"ZREMRANGEBYSCORE", "z", "0", "1"}) == integer(0));
  CHECK(run(r, {"ZREMRANGEBYSCORE", "z", "0", "x"}) ==
        reply::error("ERR min or max is not a float"));
  // As in Redis, "" reads as 0 and "(" as exclusive 0.
  run(r, {"ZADD", "z", "0", "zero", "1", "one"});
  CHECK(run(r, {"ZREMRANGEBYSCORE", "z", "(", "1"}) == integer(1));
  CHECK(run(r, {"ZREMRANGEBYSCORE", "z", "", ""}) == integer(1));
}

TEST_CASE("ZREM and ZSCORE report membership; removing the last member deletes the key") {
  // Goal: removal replies and key deletion. Method: remove present, absent and repeated members.
  replica r;
  run(r, {"ZADD", "z", "1", "a", "2", "b"});
  CHECK(run(r, {"ZREM", "z", "a", "a", "nope"}) == integer(1));
  CHECK(run(r, {"ZSCORE", "z", "a"}) == reply::nil());
  CHECK(run(r, {"ZSCORE", "z", "b"}) == reply::bulk("2"));
  CHECK(run(r, {"ZREM", "z", "b"}) == integer(1));
  CHECK(run(r, {"TYPE", "z"}) == reply::status("none"));
  CHECK(run(r, {"ZREM", "z", "b"}) == integer(0));
}

TEST_CASE("PEXPIRE sets a deadline on the server clock; a non-positive TTL deletes") {
  // Goal: PEXPIRE/PTTL/PEXPIRETIME replies and codes. Method: one key, several clock readings.
  replica r;
  CHECK(run(r, {"PEXPIRE", "k", "100"}) == integer(0));  // missing key
  CHECK(run(r, {"PTTL", "k"}) == integer(-2));
  run(r, {"ZADD", "k", "1", "m"});
  CHECK(run(r, {"PTTL", "k"}) == integer(-1));
  CHECK(run(r, {"PEXPIRETIME", "k"}) == integer(-1));
  CHECK(run(r, {"PEXPIRE", "k", "100"}) == integer(1));
  CHECK(run(r, {"PTTL", "k"}) == integer(100));
  CHECK(run(r, {"PEXPIRETIME", "k"}) == integer(t0_ms + 100));
  CHECK(run(r, {"PTTL", "k"}, at_ms(40)) == integer(60));
  CHECK(run(r, {"PTTL", "k"}, at_ms(40) + 999) == integer(60));  // whole milliseconds
  CHECK(run(r, {"PTTL", "k"}, at_ms(100)) == integer(0));  // at the deadline: still there
  CHECK(run(r, {"PTTL", "k"}, at_ms(101)) == integer(-2));  // past it: gone

  run(r, {"ZADD", "k", "1", "m"});
  CHECK(run(r, {"PEXPIRE", "k", "0"}) == integer(1));
  CHECK(run(r, {"EXISTS", "k"}) == integer(0));
  run(r, {"ZADD", "k", "1", "m"});
  CHECK(run(r, {"PEXPIRE", "k", "-5"}) == integer(1));
  CHECK(run(r, {"EXISTS", "k"}) == integer(0));

  run(r, {"ZADD", "k", "1", "m"});
  CHECK(run(r, {"PEXPIRE", "k", "50", "XX"}) == integer(0));
  CHECK(run(r, {"PEXPIRE", "k", "50", "NX"}) == integer(1));
  CHECK(run(r, {"PEXPIRE", "k", "20", "GT"}) == integer(0));
  CHECK(run(r, {"PEXPIRE", "k", "80", "GT"}) == integer(1));
  CHECK(run(r, {"PEXPIRE", "k", "90", "LT"}) == integer(0));
  CHECK(run(r, {"PEXPIRE", "k", "70", "LT"}) == integer(1));
  CHECK(run(r, {"PTTL", "k"}) == integer(70));
  CHECK(run(r, {"PEXPIRE", "k", "70", "NX", "XX"}) ==
        reply::error("ERR NX and XX, GT or LT options at the same time are not compatible"));
  CHECK(run(r, {"PEXPIRE", "k", "70", "GT", "LT"}) ==
        reply::error("ERR GT and LT options at the same time are not compatible"));
  CHECK(run(r, {"PEXPIRE", "k", "70", "soon"}) == reply::error("ERR Unsupported option soon"));
  CHECK(run(r, {"PEXPIRE", "k", "x"}) ==
        reply::error("ERR value is not an integer or out of range"));
  CHECK(run(r, {"PEXPIRE", "k", "9223372036854775807"}) ==
        reply::error("ERR invalid expire time in 'pexpire' command"));
}

TEST_CASE("Keys expire lazily on the server clock the caller passes") {
  // Goal: expiry follows server_now_us only, lazily. Method: advance the clock past a deadline.
  replica r;
  r.zadd("gate", 1, "t", t0_us);
  r.pexpire("gate", 10, t0_us);
  r.set("plain", "v", t0_us);
  CHECK(r.zcard("gate", at_ms(10)) == 1);  // at the deadline: still live
  // Past the deadline the key is still stored (nothing touched it) but not live.
  CHECK(r.dump_keys(at_ms(11)).size() == 1);
  CHECK(r.key_count() == 2);
  CHECK(r.zcard("gate", at_ms(11)) == 0);  // touching it deletes it
  CHECK(r.key_count() == 1);

  r.zadd("gate", 1, "t", t0_us);
  r.pexpire("gate", 10, t0_us);
  CHECK(r.expire_due(at_ms(10)) == 0);
  CHECK(r.expire_due(at_ms(11)) == 1);
  CHECK(r.key_count() == 1);

  // ZADD to an expired key starts a fresh key without a deadline.
  r.zadd("gate", 1, "old", t0_us);
  r.pexpire("gate", 10, t0_us);
  CHECK(r.zadd("gate", 2, "new", at_ms(20)) == 1);
  CHECK(r.zcard("gate", at_ms(20)) == 1);
  CHECK(r.pttl("gate", at_ms(20)) == -1);

  // The clock may step back (a fault): the replica follows it.
  r.pexpire("gate", 10, at_ms(20));
  CHECK(r.pttl("gate", at_ms(5)) == 25);
}

TEST_CASE("Commands on a key of the wrong type answer WRONGTYPE") {
  // Goal: type checks in execute() and the typed methods. Method: a string key and a zset key.
  replica r;
  run(r, {"SET", "s", "1"});
  run(r, {"ZADD", "z", "1", "m"});
  const reply wrongtype =
      reply::error("WRONGTYPE Operation against a key holding the wrong kind of value");
  CHECK(run(r, {"ZADD", "s", "1", "m"}) == wrongtype);
  CHECK(run(r, {"ZREM", "s", "m"}) == wrongtype);
  CHECK(run(r, {"ZCARD", "s"}) == wrongtype);
  CHECK(run(r, {"ZSCORE", "s", "m"}) == wrongtype);
  CHECK(run(r, {"ZRANK", "s", "m"}) == wrongtype);
  CHECK(run(r, {"ZRANGE", "s", "0", "-1"}) == wrongtype);
  CHECK(run(r, {"ZREMRANGEBYSCORE", "s", "0", "1"}) == wrongtype);
  CHECK(run(r, {"INCR", "z"}) == wrongtype);
  CHECK(run(r, {"GET", "z"}) == wrongtype);
  CHECK(run(r, {"SET", "z", "v", "GET"}) == wrongtype);
  CHECK(run(r, {"PEXPIRE", "s", "100"}) == integer(1));  // key commands take any type
  CHECK_THROWS_AS(r.zadd("s", 1, "m", t0_us), command_error);
  CHECK_THROWS_AS(r.zcard("s", t0_us), command_error);
  CHECK_THROWS_AS(r.incr("z", t0_us), command_error);
  CHECK_THROWS_WITH(r.get("z", t0_us),
                    "WRONGTYPE Operation against a key holding the wrong kind of value");
}

TEST_CASE("INCR counts from a missing key, keeps the deadline and refuses non-integers") {
  // Goal: INCR's parsing and overflow, SET's options. Method: execute() against chosen values.
  replica r;
  CHECK(run(r, {"INCR", "n"}) == integer(1));
  CHECK(run(r, {"INCR", "n"}) == integer(2));
  CHECK(run(r, {"GET", "n"}) == reply::bulk("2"));
  run(r, {"PEXPIRE", "n", "500"});
  CHECK(run(r, {"INCR", "n"}) == integer(3));
  CHECK(run(r, {"PTTL", "n"}) == integer(500));
  for (const char* bad : {" 1", "+1", "-0", "01", "1.0", "", "9223372036854775808"}) {
    run(r, {"SET", "n", bad});
    CHECK(run(r, {"INCR", "n"}) == reply::error("ERR value is not an integer or out of range"));
  }
  run(r, {"SET", "n", "-9223372036854775808"});
  CHECK(run(r, {"INCR", "n"}) == integer(-9223372036854775807));
  run(r, {"SET", "n", "9223372036854775807"});
  CHECK(run(r, {"INCR", "n"}) == reply::error("ERR increment or decrement would overflow"));

  CHECK(run(r, {"SET", "s", "a", "PX", "100"}) == reply::status("OK"));
  CHECK(run(r, {"PTTL", "s"}) == integer(100));
  CHECK(run(r, {"SET", "s", "b", "KEEPTTL"}) == reply::status("OK"));
  CHECK(run(r, {"PTTL", "s"}) == integer(100));
  CHECK(run(r, {"SET", "s", "c"}) == reply::status("OK"));
  CHECK(run(r, {"PTTL", "s"}) == integer(-1));  // plain SET clears the deadline
  CHECK(run(r, {"SET", "s", "d", "NX"}) == reply::nil());
  CHECK(run(r, {"SET", "t", "d", "XX"}) == reply::nil());
  CHECK(run(r, {"SET", "s", "e", "GET"}) == reply::bulk("c"));
  CHECK(run(r, {"SET", "s", "e", "NX", "XX"}) == reply::error("ERR syntax error"));
  CHECK(run(r, {"SET", "s", "e", "PX", "0"}) ==
        reply::error("ERR invalid expire time in 'set' command"));
  CHECK(run(r, {"SET", "z", "v"}) == reply::status("OK"));
  run(r, {"ZADD", "z2", "1", "m"});
  CHECK(run(r, {"SET", "z2", "v"}) == reply::status("OK"));  // SET replaces any type
  CHECK(run(r, {"TYPE", "z2"}) == reply::status("string"));
}

TEST_CASE("DEL, EXISTS, TYPE and TIME") {
  // Goal: counting replies and the clock reply. Method: execute() with repeated and missing keys.
  replica r;
  run(r, {"SET", "a", "1"});
  run(r, {"ZADD", "b", "1", "m"});
  CHECK(run(r, {"EXISTS", "a", "a", "b", "c"}) == integer(3));
  CHECK(run(r, {"TYPE", "b"}) == reply::status("zset"));
  CHECK(run(r, {"DEL", "a", "a", "c"}) == integer(1));
  CHECK(run(r, {"TYPE", "a"}) == reply::status("none"));
  CHECK(run(r, {"TIME"}, 1'700'000'123'045'678) == bulks({"1700000123", "45678"}));
}

TEST_CASE("Unknown commands, arity and command-name case") {
  // Goal: protocol-level errors match Redis 7.0's text. Method: malformed calls.
  replica r;
  CHECK(run(r, {"FOO", "a", "b"}) ==
        reply::error("ERR unknown command 'FOO', with args beginning with: 'a' 'b' "));
  CHECK(run(r, {"zcard"}) == reply::error("ERR wrong number of arguments for 'zcard' command"));
  CHECK(run(r, {"ZrAnK", "z", "m", "WITHSCORE"}) ==
        reply::error("ERR wrong number of arguments for 'zrank' command"));
  CHECK(run(r, {"zAdD", "z", "1", "m"}) == integer(1));
  CHECK(run(r, {"ZRANGE", "z", "0", "-1", "BYLEX"}).is_error());
}

namespace {

// A bus that records what PUBLISH hands it and reports a fixed audience.
class recording_bus final : public pubsub {
 public:
  std::int64_t publish(std::string_view channel, std::string_view message) override {
    sent.emplace_back(std::string(channel), std::string(message));
    return receivers;
  }
  std::vector<std::pair<std::string, std::string>> sent;
  std::int64_t receivers = 2;
};

}  // namespace

TEST_CASE("PUBLISH answers the bus's receiver count, 0 without a bus, and leaves the keyspace alone") {
  // Goal: the PUBLISH hook and the string_view entry point. Method: PUBLISH with and without a bus.
  replica r;
  recording_bus bus;
  const std::vector<std::string_view> views{"PUBLISH", "chan", "hello"};
  CHECK(r.execute(views, t0_us, &bus) == integer(2));
  CHECK(r.execute(views, t0_us) == integer(0));
  const std::vector<std::string> owned{"publish", "chan", "bye"};
  bus.receivers = 0;
  CHECK(r.execute(owned, t0_us, &bus) == integer(0));
  REQUIRE(bus.sent.size() == 2);
  CHECK(bus.sent[0] == std::pair<std::string, std::string>{"chan", "hello"});
  CHECK(bus.sent[1] == std::pair<std::string, std::string>{"chan", "bye"});
  CHECK(r.key_count() == 0);
  CHECK(run(r, {"PUBLISH", "chan"}) == reply::error("ERR wrong number of arguments for 'publish' command"));
  // More arguments than the view overload keeps on its stack still parse.
  std::vector<std::string> many{"EXISTS"};
  for (int i = 0; i < 40; ++i) many.push_back(std::string("k").append(std::to_string(i)));
  run(r, {"SET", "k39", "v"});
  CHECK(r.execute(many, t0_us) == integer(1));
}

TEST_CASE("A copy is an independent snapshot, and restore() rebuilds a dump") {
  // Goal: value semantics for snapshots. Method: copy, diverge, compare dumps.
  replica r;
  r.zadd("gate", 5, "t1", t0_us);
  r.zadd("gate", 7, "t2", t0_us);
  r.pexpire("gate", 1000, t0_us);
  r.incr("gate:fence", t0_us);
  const replica snapshot = r;
  r.zrem("gate", "t1", t0_us);
  CHECK(snapshot.dump(t0_us) ==
        "key \"gate\" zset pexpireat=1700000001000\n"
        "  \"t1\" 5\n"
        "  \"t2\" 7\n"
        "key \"gate:fence\" string pexpireat=none \"1\"\n");
  CHECK(r.dump(t0_us) != snapshot.dump(t0_us));

  replica rebuilt;
  rebuilt.set("stale", "x", t0_us);
  const auto keys = snapshot.dump_keys(t0_us);
  rebuilt.restore(keys);
  CHECK(rebuilt.dump_keys(t0_us) == keys);
  CHECK(rebuilt.zrank("gate", "t2", t0_us) == 1);
}

namespace {

// A deliberately simple model of a sorted set: a map from member to score,
// sorted on demand. `reverse_ties` breaks ties the wrong way, to show the
// property below can fail.
struct model_set {
  std::map<std::string, double> scores;
  bool reverse_ties = false;

  std::vector<sorted_set::entry> ordered() const {
    std::vector<sorted_set::entry> out;
    for (const auto& [m, s] : scores) out.push_back({s, m});
    std::stable_sort(out.begin(), out.end(), [&](const auto& a, const auto& b) {
      if (a.score != b.score) return a.score < b.score;
      return reverse_ties ? a.member > b.member : a.member < b.member;
    });
    return out;
  }
};

// Random ZADD / ZREM / ZREMRANGEBYSCORE on one key, checked against the model
// after every step (order, ranks, card).
// With `members` above 32 the set outgrows its scan and builds its index.
void sorted_set_matches_model(bool reverse_ties, int members = 7, int max_steps = 60) {
  replica r;
  model_set model;
  model.reverse_ties = reverse_ties;
  const auto steps = *rc::gen::inRange(1, max_steps);
  for (int i = 0; i < steps; ++i) {
    const int m = uniform_in(0, members - 1);
    std::string member(1, static_cast<char>('a' + m % 26));
    if (members > 26) member.append(std::to_string(m));
    const double score = uniform_in(0, members <= 26 ? 4 : 100);
    int op = 0;
    if (members <= 26) {
      op = uniform_in(0, 3);
    } else {  // many members: mostly ZADD, so that the set grows
      const int pick = uniform_in(0, 10);
      op = pick < 7 ? 0 : pick < 9 ? 1 : 2;
    }
    switch (op) {
      case 0:
        RC_ASSERT(r.zadd("z", score, member, t0_us) == (model.scores.count(member) ? 0 : 1));
        model.scores[member] = score;
        break;
      case 1:
        RC_ASSERT(r.zrem("z", member, t0_us) == static_cast<std::int64_t>(model.scores.erase(member)));
        break;
      default: {
        const double hi = score + uniform_in(0, 2);
        std::int64_t expected = 0;
        for (auto it = model.scores.begin(); it != model.scores.end();) {
          if (it->second >= score && it->second <= hi) {
            it = model.scores.erase(it);
            ++expected;
          } else {
            ++it;
          }
        }
        RC_ASSERT(r.zremrangebyscore("z", {score, false}, {hi, false}, t0_us) == expected);
      }
    }
    const auto want = model.ordered();
    const auto dumped = r.dump_keys(t0_us);
    RC_ASSERT(dumped.size() == (want.empty() ? 0U : 1U));
    if (!want.empty()) RC_ASSERT(dumped[0].members == want);
    for (std::size_t k = 0; k < want.size(); ++k) {
      RC_ASSERT(r.zrank("z", want[k].member, t0_us) == static_cast<std::int64_t>(k));
    }
  }
}

}  // namespace

TEST_CASE("Property: the sorted set agrees with a simple model under random edits") {
  // Goal: order, ranks and removals match a map-based model. Method: RapidCheck, and the same
  // property against a model that breaks ties backwards must fail.
  const auto good = check_property("sorted set matches model", [] { sorted_set_matches_model(false); });
  INFO(describe(good));
  CHECK(passed(good));
  const auto broken =
      check_property("sorted set matches a tie-reversing model", [] { sorted_set_matches_model(true); });
  INFO(describe(broken));
  CHECK(failed(broken));
  // Up to 60 members: the set scans while small and indexes past 32 members.
  const auto large = check_property("a large sorted set matches model", [] { sorted_set_matches_model(false, 60, 200); });
  INFO(describe(large));
  CHECK(passed(large));
}
