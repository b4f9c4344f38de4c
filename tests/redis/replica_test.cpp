// Command semantics of the in-memory Redis replica. Expected replies are the
// ones redis-server 7.0 gives (checked by hand and by tests/integration).
#include <catch2/catch.hpp>

#include <cstdint>
#include <limits>
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
  std::int64_t publish(std::string_view channel, std::string_view message, bool sharded) override {
    sent.emplace_back(std::string(channel), std::string(message));
    shard.push_back(sharded);
    return receivers;
  }
  std::vector<std::pair<std::string, std::string>> sent;
  std::vector<bool> shard;
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
  // SPUBLISH goes to the same bus, marked as a shard channel's.
  bus.receivers = 1;
  CHECK(r.execute(std::vector<std::string>{"SPUBLISH", "chan", "s"}, t0_us, &bus) == integer(1));
  REQUIRE(bus.shard.size() == 3);
  CHECK(bus.shard == std::vector<bool>{false, false, true});
  CHECK(run(r, {"SPUBLISH", "chan"}) == reply::error("ERR wrong number of arguments for 'spublish' command"));
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

TEST_CASE("INCRBY, DECRBY and DECR count like INCR, refuse non-integers and overflow") {
  // Goal: the counters' replies and error texts (checked against redis-server 7.0.15). Method:
  // execute() from a missing key to both ends of int64.
  replica r;
  CHECK(run(r, {"DECR", "c"}) == integer(-1));
  CHECK(run(r, {"INCRBY", "c", "10"}) == integer(9));
  CHECK(run(r, {"DECRBY", "c", "-1"}) == integer(10));
  CHECK(run(r, {"INCRBY", "c", "x"}) == reply::error("ERR value is not an integer or out of range"));
  CHECK(run(r, {"INCRBY", "c", "+1"}) == reply::error("ERR value is not an integer or out of range"));
  CHECK(run(r, {"DECRBY", "c", "-9223372036854775808"}) == reply::error("ERR decrement would overflow"));
  CHECK(run(r, {"INCRBY", "c", "9223372036854775797"}) == integer(9223372036854775807));
  CHECK(run(r, {"INCRBY", "c", "1"}) == reply::error("ERR increment or decrement would overflow"));
  CHECK(run(r, {"GET", "c"}) == reply::bulk("9223372036854775807"));
  CHECK(run(r, {"DECRBY", "low", "9223372036854775807"}) == integer(-9223372036854775807));
  CHECK(run(r, {"DECR", "low"}) == integer(std::numeric_limits<std::int64_t>::min()));
  CHECK(run(r, {"DECR", "low"}) == reply::error("ERR increment or decrement would overflow"));
  CHECK(run(r, {"INCRBY", "low", "-1"}) == reply::error("ERR increment or decrement would overflow"));
  // The deadline survives a counter update, as with INCR.
  run(r, {"SET", "t", "5", "PX", "100"});
  CHECK(run(r, {"INCRBY", "t", "2"}) == integer(7));
  CHECK(run(r, {"PTTL", "t"}) == integer(100));
  // The increment is parsed before the key is looked up: a bad one beats WRONGTYPE.
  run(r, {"ZADD", "z", "1", "m"});
  CHECK(run(r, {"INCRBY", "z", "x"}) == reply::error("ERR value is not an integer or out of range"));
  CHECK(run(r, {"INCRBY", "z", "1"}) == reply::error("WRONGTYPE Operation against a key holding the wrong kind of value"));
  CHECK(run(r, {"DECR", "z"}) == reply::error("WRONGTYPE Operation against a key holding the wrong kind of value"));
  run(r, {"SET", "s", "007"});
  CHECK(run(r, {"DECRBY", "s", "1"}) == reply::error("ERR value is not an integer or out of range"));
  CHECK(run(r, {"INCRBY", "s"}) == reply::error("ERR wrong number of arguments for 'incrby' command"));
  CHECK(r.incrby("typed", -3, t0_us) == -3);
  CHECK_THROWS_AS(r.incrby("z", 1, t0_us), command_error);
}

TEST_CASE("SETEX and PSETEX set a value with a deadline; MGET reads strings only") {
  // Goal: SETEX/PSETEX validation and MGET's nils. Method: execute() with good and bad TTLs.
  replica r;
  run(r, {"ZADD", "z", "1", "m"});
  CHECK(run(r, {"SETEX", "z", "10", "v"}) == reply::status("OK"));  // replaces any type
  CHECK(run(r, {"TYPE", "z"}) == reply::status("string"));
  CHECK(run(r, {"PEXPIRETIME", "z"}) == integer(t0_ms + 10'000));
  CHECK(run(r, {"PSETEX", "p", "5", "w"}) == reply::status("OK"));
  CHECK(run(r, {"PTTL", "p"}) == integer(5));
  CHECK(run(r, {"GET", "p"}, at_ms(5)) == reply::bulk("w"));
  CHECK(run(r, {"GET", "p"}, at_ms(6)) == reply::nil());
  CHECK(run(r, {"SETEX", "s", "0", "v"}) == reply::error("ERR invalid expire time in 'setex' command"));
  CHECK(run(r, {"SETEX", "s", "x", "v"}) == reply::error("ERR value is not an integer or out of range"));
  CHECK(run(r, {"SETEX", "s", "9223372036854776", "v"}) ==
        reply::error("ERR invalid expire time in 'setex' command"));
  CHECK(run(r, {"PSETEX", "s", "-1", "v"}) == reply::error("ERR invalid expire time in 'psetex' command"));
  CHECK(run(r, {"PSETEX", "s", "9223372036854775807", "v"}) ==
        reply::error("ERR invalid expire time in 'psetex' command"));
  CHECK(run(r, {"SETEX", "s", "1", "2", "3"}) == reply::error("ERR wrong number of arguments for 'setex' command"));
  CHECK(run(r, {"EXISTS", "s"}) == integer(0));

  run(r, {"HSET", "h", "f", "v"});
  std::vector<reply> expected{reply::bulk("v"), reply::nil(), reply::nil(), reply::bulk("v")};
  CHECK(run(r, {"MGET", "z", "h", "missing", "z"}) == reply::array(expected));
  CHECK(run(r, {"MGET"}) == reply::error("ERR wrong number of arguments for 'mget' command"));
}

TEST_CASE("EXPIRE, PEXPIREAT, EXPIREAT, TTL, EXPIRETIME and PERSIST") {
  // Goal: the whole expiry family on the server clock, options and overflow texts included.
  // Method: execute() at chosen instants around a deadline.
  replica r;
  run(r, {"SET", "k", "v"});
  CHECK(run(r, {"TTL", "k"}) == integer(-1));
  CHECK(run(r, {"EXPIRETIME", "k"}) == integer(-1));
  CHECK(run(r, {"EXPIRE", "k", "10"}) == integer(1));
  CHECK(run(r, {"PEXPIRETIME", "k"}) == integer(t0_ms + 10'000));
  CHECK(run(r, {"TTL", "k"}) == integer(10));
  CHECK(run(r, {"TTL", "k"}, at_ms(8'501)) == integer(1));  // 1499 ms left: rounds to 1
  CHECK(run(r, {"TTL", "k"}, at_ms(8'500)) == integer(2));  // 1500 ms left: rounds to 2
  CHECK(run(r, {"TTL", "k"}, at_ms(9'501)) == integer(0));
  CHECK(run(r, {"EXPIRETIME", "k"}) == integer(t0_ms / 1000 + 10));
  CHECK(run(r, {"EXPIRE", "k", "5", "GT"}) == integer(0));
  CHECK(run(r, {"EXPIRE", "k", "5", "LT"}) == integer(1));
  CHECK(run(r, {"EXPIRE", "k", "5", "NX"}) == integer(0));
  CHECK(run(r, {"PERSIST", "k"}) == integer(1));
  CHECK(run(r, {"PERSIST", "k"}) == integer(0));
  CHECK(run(r, {"PERSIST", "missing"}) == integer(0));
  CHECK(run(r, {"EXPIRE", "k", "5", "XX"}) == integer(0));
  CHECK(run(r, {"EXPIRE", "k", "5", "GT"}) == integer(0));  // no deadline is an infinite one
  CHECK(run(r, {"TTL", "k"}) == integer(-1));

  const std::string deadline_ms = std::to_string(t0_ms + 20);
  CHECK(run(r, {"PEXPIREAT", "k", deadline_ms}) == integer(1));
  CHECK(run(r, {"PTTL", "k"}) == integer(20));
  CHECK(run(r, {"GET", "k"}, at_ms(20)) == reply::bulk("v"));
  CHECK(run(r, {"PERSIST", "k"}, at_ms(21)) == integer(0));  // already gone
  CHECK(run(r, {"TTL", "k"}, at_ms(21)) == integer(-2));
  CHECK(run(r, {"EXPIRETIME", "k"}, at_ms(21)) == integer(-2));

  run(r, {"SET", "k", "v"});
  CHECK(run(r, {"EXPIREAT", "k", std::to_string(t0_ms / 1000 + 3)}) == integer(1));
  CHECK(run(r, {"PEXPIRETIME", "k"}) == integer(t0_ms + 3'000));
  CHECK(run(r, {"EXPIREAT", "k", "1"}) == integer(1));  // in the past: deleted
  CHECK(run(r, {"EXISTS", "k"}) == integer(0));
  run(r, {"SET", "k", "v"});
  CHECK(run(r, {"EXPIRE", "k", "0"}) == integer(1));
  CHECK(run(r, {"EXISTS", "k"}) == integer(0));
  run(r, {"SET", "k", "v"});
  CHECK(run(r, {"EXPIRE", "k", "-9223372036854775"}) == integer(1));
  CHECK(run(r, {"EXISTS", "k"}) == integer(0));

  run(r, {"SET", "k", "v"});
  CHECK(run(r, {"EXPIRE", "k", "9223372036854776"}) ==
        reply::error("ERR invalid expire time in 'expire' command"));
  CHECK(run(r, {"EXPIRE", "k", "-9223372036854776"}) ==
        reply::error("ERR invalid expire time in 'expire' command"));
  CHECK(run(r, {"EXPIREAT", "k", "9223372036854775807"}) ==
        reply::error("ERR invalid expire time in 'expireat' command"));
  CHECK(run(r, {"EXPIRE", "k", "10", "FOO"}) == reply::error("ERR Unsupported option FOO"));
  CHECK(run(r, {"EXPIRE", "k", "x", "NX"}) == reply::error("ERR value is not an integer or out of range"));
  CHECK(run(r, {"PEXPIREAT", "k", "1", "NX", "XX"}) ==
        reply::error("ERR NX and XX, GT or LT options at the same time are not compatible"));
  CHECK(run(r, {"EXPIREAT", "k", "1", "GT", "LT"}) ==
        reply::error("ERR GT and LT options at the same time are not compatible"));
  // The largest deadline there is: Redis rounds it to 9223372036854776 s without overflowing.
  CHECK(run(r, {"PEXPIREAT", "k", "9223372036854775807"}) == integer(1));
  CHECK(run(r, {"PEXPIRETIME", "k"}) == integer(9223372036854775807));
  CHECK(run(r, {"EXPIRETIME", "k"}) == integer(9223372036854776));
  CHECK(run(r, {"PEXPIREAT", "missing", "9223372036854775807"}) == integer(0));
  CHECK(r.persist("k", t0_us) == 1);
  CHECK(r.pttl("k", t0_us) == -1);
}

TEST_CASE("ZCOUNT, ZINCRBY, ZREMRANGEBYRANK, ZREVRANK and the reversed ranges") {
  // Goal: the added sorted-set commands answer as redis-server 7.0.15 does. Method: execute()
  // on a three-member set, errors and edge ranges included.
  replica r;
  run(r, {"ZADD", "z", "1", "a", "2", "b", "3", "c"});
  CHECK(run(r, {"ZCOUNT", "z", "(1", "3"}) == integer(2));
  CHECK(run(r, {"ZCOUNT", "z", "-inf", "+inf"}) == integer(3));
  CHECK(run(r, {"ZCOUNT", "z", "3", "1"}) == integer(0));
  CHECK(run(r, {"ZCOUNT", "z", "(1", "(1"}) == integer(0));
  CHECK(run(r, {"ZCOUNT", "missing", "0", "1"}) == integer(0));
  CHECK(run(r, {"ZCOUNT", "z", "x", "1"}) == reply::error("ERR min or max is not a float"));
  CHECK(run(r, {"ZREVRANK", "z", "a"}) == integer(2));
  CHECK(run(r, {"ZREVRANK", "z", "nope"}) == reply::nil());
  CHECK(run(r, {"ZREVRANGE", "z", "0", "1", "WITHSCORES"}) == bulks({"c", "3", "b", "2"}));
  CHECK(run(r, {"ZREVRANGE", "z", "0", "1", "BYSCORE"}) == reply::error("ERR syntax error"));
  CHECK(run(r, {"ZREVRANGEBYSCORE", "z", "+inf", "-inf", "WITHSCORES", "LIMIT", "0", "2"}) ==
        bulks({"c", "3", "b", "2"}));
  CHECK(run(r, {"ZREVRANGEBYSCORE", "z", "(3", "1"}) == bulks({"b", "a"}));
  CHECK(run(r, {"ZREVRANGEBYSCORE", "z", "1", "3"}) == bulks({}));
  CHECK(run(r, {"ZREVRANGEBYSCORE", "z", "3", "1", "LIMIT", "1", "-1"}) == bulks({"b", "a"}));
  CHECK(run(r, {"ZREVRANGEBYSCORE", "z", "1", "0", "REV"}) == reply::error("ERR syntax error"));
  CHECK(run(r, {"ZRANGEBYSCORE", "z", "-inf", "+inf", "WITHSCORES", "LIMIT", "1", "1"}) == bulks({"b", "2"}));
  CHECK(run(r, {"ZRANGE", "z", "0", "-1", "WITHSCORES"}) == bulks({"a", "1", "b", "2", "c", "3"}));

  CHECK(run(r, {"ZINCRBY", "z", "2.5", "a"}) == reply::bulk("3.5"));
  CHECK(run(r, {"ZINCRBY", "z", "1", "new"}) == reply::bulk("1"));
  CHECK(run(r, {"ZINCRBY", "fresh", "-2", "m"}) == reply::bulk("-2"));
  CHECK(run(r, {"ZINCRBY", "z", "x", "a"}) == reply::error("ERR value is not a valid float"));
  // ZADD's parser reads an option word as an option: then ZINCRBY has too few arguments.
  CHECK(run(r, {"ZINCRBY", "z", "nx", "a"}) == reply::error("ERR syntax error"));
  CHECK(run(r, {"ZINCRBY", "z", "Gt", "a"}) == reply::error("ERR syntax error"));
  CHECK(run(r, {"ZINCRBY", "z", "+inf", "a"}) == reply::bulk("inf"));
  CHECK(run(r, {"ZINCRBY", "z", "-inf", "a"}) == reply::error("ERR resulting score is not a number (NaN)"));
  CHECK(run(r, {"ZSCORE", "z", "a"}) == reply::bulk("inf"));
  CHECK(r.zincrby("z", 1, "b", t0_us) == 3.0);
  CHECK(r.zcount("z", score_bound{3.0, false}, score_bound{3.0, false}, t0_us) == 2);

  // z is now new 1, b 3, c 3, a inf.
  CHECK(run(r, {"ZREMRANGEBYRANK", "z", "5", "1"}) == integer(0));
  CHECK(run(r, {"ZREMRANGEBYRANK", "z", "-100", "0"}) == integer(1));
  CHECK(run(r, {"ZRANGE", "z", "0", "-1"}) == bulks({"b", "c", "a"}));
  CHECK(run(r, {"ZREMRANGEBYRANK", "z", "x", "1"}) == reply::error("ERR value is not an integer or out of range"));
  CHECK(run(r, {"ZREMRANGEBYRANK", "z", "-2", "-1"}) == integer(2));
  CHECK(run(r, {"ZREMRANGEBYRANK", "z", "0", "-1"}) == integer(1));
  CHECK(run(r, {"EXISTS", "z"}) == integer(0));  // emptied: deleted

  run(r, {"SET", "s", "1"});
  CHECK(run(r, {"ZCOUNT", "s", "0", "1"}) == reply::error("WRONGTYPE Operation against a key holding the wrong kind of value"));
  CHECK(run(r, {"ZINCRBY", "s", "1", "m"}) == reply::error("WRONGTYPE Operation against a key holding the wrong kind of value"));
  CHECK(run(r, {"ZREMRANGEBYRANK", "s", "0", "1"}) == reply::error("WRONGTYPE Operation against a key holding the wrong kind of value"));
  CHECK(run(r, {"ZREVRANGEBYSCORE", "s", "1", "0"}) == reply::error("WRONGTYPE Operation against a key holding the wrong kind of value"));
}

TEST_CASE("ZPOPMIN and ZPOPMAX pop from either end and delete an emptied set") {
  // Goal: pop replies (flat member/score pairs), count rules and error order. Method: execute().
  replica r;
  run(r, {"ZADD", "z", "1", "a", "2", "b", "3", "c"});
  CHECK(run(r, {"ZPOPMIN", "z", "0"}) == bulks({}));
  CHECK(run(r, {"ZPOPMIN", "z"}) == bulks({"a", "1"}));
  CHECK(run(r, {"ZPOPMAX", "z", "5"}) == bulks({"c", "3", "b", "2"}));
  CHECK(run(r, {"EXISTS", "z"}) == integer(0));
  CHECK(run(r, {"ZPOPMIN", "z"}) == bulks({}));
  CHECK(run(r, {"ZPOPMIN", "z", "-1"}) == reply::error("ERR value is out of range, must be positive"));
  CHECK(run(r, {"ZPOPMIN", "z", "x"}) == reply::error("ERR value is out of range, must be positive"));
  CHECK(run(r, {"ZPOPMIN", "z", "1", "2"}) == reply::error("ERR syntax error"));
  CHECK(run(r, {"ZPOPMIN"}) == reply::error("ERR wrong number of arguments for 'zpopmin' command"));
  run(r, {"SET", "s", "1"});
  CHECK(run(r, {"ZPOPMAX", "s", "0"}) == reply::error("WRONGTYPE Operation against a key holding the wrong kind of value"));
}

TEST_CASE("Hashes: HSET, HGET, HDEL, HINCRBY and the listings, in insertion order") {
  // Goal: hash replies, field order (a small hash's HGETALL order in Redis 7.0: first insertion)
  // and error texts. Method: execute() against values checked on redis-server 7.0.15.
  replica r;
  CHECK(run(r, {"HSET", "h", "f", "v"}) == integer(1));
  CHECK(run(r, {"HSET", "h", "a", "1", "b", "2", "a", "3"}) == integer(2));
  CHECK(run(r, {"HMSET", "h", "a", "4", "q", "5"}) == reply::status("OK"));
  CHECK(run(r, {"HGETALL", "h"}) == bulks({"f", "v", "a", "4", "b", "2", "q", "5"}));
  CHECK(run(r, {"HKEYS", "h"}) == bulks({"f", "a", "b", "q"}));
  CHECK(run(r, {"HVALS", "h"}) == bulks({"v", "4", "2", "5"}));
  CHECK(run(r, {"HLEN", "h"}) == integer(4));
  CHECK(run(r, {"HGET", "h", "a"}) == reply::bulk("4"));
  CHECK(run(r, {"HGET", "h", "nope"}) == reply::nil());
  CHECK(run(r, {"HEXISTS", "h", "q"}) == integer(1));
  CHECK(run(r, {"HEXISTS", "h", "nope"}) == integer(0));
  CHECK(run(r, {"HEXISTS", "missing", "a"}) == integer(0));
  std::vector<reply> mget{reply::bulk("4"), reply::nil(), reply::bulk("5")};
  CHECK(run(r, {"HMGET", "h", "a", "nope", "q"}) == reply::array(mget));
  CHECK(run(r, {"HMGET", "missing", "a", "b"}) == reply::array({reply::nil(), reply::nil()}));
  CHECK(run(r, {"HSETNX", "h", "a", "9"}) == integer(0));
  CHECK(run(r, {"HSETNX", "h", "z", "9"}) == integer(1));
  // A deleted field set again goes to the end.
  CHECK(run(r, {"HDEL", "h", "f"}) == integer(1));
  CHECK(run(r, {"HSET", "h", "f", "w"}) == integer(1));
  CHECK(run(r, {"HKEYS", "h"}) == bulks({"a", "b", "q", "z", "f"}));

  CHECK(run(r, {"HINCRBY", "h", "n", "-5"}) == integer(-5));
  CHECK(run(r, {"HINCRBY", "h", "n", "-9223372036854775804"}) ==
        reply::error("ERR increment or decrement would overflow"));
  CHECK(run(r, {"HINCRBY", "h", "n", "-1"}) == integer(-6));
  CHECK(run(r, {"HINCRBY", "h", "a", "x"}) == reply::error("ERR value is not an integer or out of range"));
  CHECK(run(r, {"HSET", "h", "c", "007"}) == integer(1));
  CHECK(run(r, {"HINCRBY", "h", "c", "1"}) == reply::error("ERR hash value is not an integer"));
  CHECK(run(r, {"HINCRBY", "h", "a", "9223372036854775807"}) ==
        reply::error("ERR increment or decrement would overflow"));

  CHECK(run(r, {"HSET", "h", "a"}) == reply::error("ERR wrong number of arguments for 'hset' command"));
  CHECK(run(r, {"HSET", "h", "a", "1", "b"}) == reply::error("ERR wrong number of arguments for 'hset' command"));
  CHECK(run(r, {"HMSET", "h", "a"}) == reply::error("ERR wrong number of arguments for 'hmset' command"));
  CHECK(run(r, {"HDEL", "h"}) == reply::error("ERR wrong number of arguments for 'hdel' command"));

  // HDEL with many fields counts the removed ones; an emptied hash deletes its key.
  CHECK(run(r, {"HDEL", "h", "a", "b", "nope", "q", "z", "f", "n", "c"}) == integer(7));
  CHECK(run(r, {"EXISTS", "h"}) == integer(0));
  CHECK(run(r, {"HGETALL", "h"}) == bulks({}));
  CHECK(run(r, {"HLEN", "h"}) == integer(0));
  CHECK(run(r, {"HDEL", "h", "a"}) == integer(0));

  // Typed methods, for C++ script bodies.
  CHECK(r.hset("t", "x", "1", t0_us) == 1);
  CHECK(r.hincrby("t", "x", 41, t0_us) == 42);
  CHECK(r.hget("t", "x", t0_us) == "42");
  CHECK(r.hlen("t", t0_us) == 1);
  CHECK(r.hash_view("t", t0_us)->fields().size() == 1);
  CHECK(r.hdel("t", "x", t0_us) == 1);
  CHECK(r.hash_view("t", t0_us) == nullptr);
}

TEST_CASE("A hash is its own type: WRONGTYPE both ways, TYPE hash, and it expires like any key") {
  // Goal: the hash type against the other types and the clock. Method: cross-type commands.
  const reply wrongtype = reply::error("WRONGTYPE Operation against a key holding the wrong kind of value");
  replica r;
  run(r, {"HSET", "h", "f", "1"});
  run(r, {"SET", "s", "1"});
  run(r, {"ZADD", "z", "1", "m"});
  CHECK(run(r, {"TYPE", "h"}) == reply::status("hash"));
  for (const char* key : {"s", "z"}) {
    CHECK(run(r, {"HSET", key, "f", "v"}) == wrongtype);
    CHECK(run(r, {"HMSET", key, "f", "v"}) == wrongtype);
    CHECK(run(r, {"HSETNX", key, "f", "v"}) == wrongtype);
    CHECK(run(r, {"HGET", key, "f"}) == wrongtype);
    CHECK(run(r, {"HMGET", key, "f"}) == wrongtype);
    CHECK(run(r, {"HDEL", key, "f"}) == wrongtype);
    CHECK(run(r, {"HINCRBY", key, "f", "1"}) == wrongtype);
    CHECK(run(r, {"HEXISTS", key, "f"}) == wrongtype);
    CHECK(run(r, {"HLEN", key}) == wrongtype);
    CHECK(run(r, {"HGETALL", key}) == wrongtype);
    CHECK(run(r, {"HKEYS", key}) == wrongtype);
    CHECK(run(r, {"HVALS", key}) == wrongtype);
  }
  CHECK(run(r, {"HINCRBY", "s", "f", "x"}) == reply::error("ERR value is not an integer or out of range"));
  CHECK(run(r, {"GET", "h"}) == wrongtype);
  CHECK(run(r, {"INCR", "h"}) == wrongtype);
  CHECK(run(r, {"ZADD", "h", "1", "m"}) == wrongtype);
  CHECK(run(r, {"ZCARD", "h"}) == wrongtype);
  CHECK_THROWS_AS(r.hget("z", "f", t0_us), command_error);

  CHECK(run(r, {"PEXPIRE", "h", "10"}) == integer(1));
  CHECK(run(r, {"HINCRBY", "h", "f", "1"}, at_ms(10)) == integer(2));  // keeps the deadline
  CHECK(run(r, {"PTTL", "h"}, at_ms(10)) == integer(0));
  CHECK(run(r, {"HGET", "h", "f"}, at_ms(11)) == reply::nil());
  CHECK(run(r, {"HSET", "h", "g", "v"}, at_ms(11)) == integer(1));  // a fresh hash, no deadline
  CHECK(run(r, {"HGETALL", "h"}, at_ms(11)) == bulks({"g", "v"}));
  CHECK(run(r, {"PTTL", "h"}, at_ms(11)) == integer(-1));
  CHECK(run(r, {"SET", "h", "x"}, at_ms(11)) == reply::status("OK"));  // SET replaces a hash
  CHECK(run(r, {"TYPE", "h"}, at_ms(11)) == reply::status("string"));
}

TEST_CASE("Dumps carry hashes in field order, and restore() rebuilds them") {
  // Goal: snapshots and the agreement test's keyspace see hashes. Method: dump, render, restore.
  replica r;
  run(r, {"HSET", "meta", "limit", "5", "holder", "t\"1"});
  run(r, {"PEXPIRE", "meta", "1000"});
  CHECK(r.dump(t0_us) ==
        "key \"meta\" hash pexpireat=1700000001000\n"
        "  \"limit\" \"5\"\n"
        "  \"holder\" \"t\\\"1\"\n");
  const auto keys = r.dump_keys(t0_us);
  REQUIRE(keys.size() == 1);
  CHECK(keys[0].type == value_type::hash);
  CHECK(keys[0].fields == std::vector<hash_value::field>{{"limit", "5"}, {"holder", "t\"1"}});
  replica rebuilt;
  rebuilt.restore(keys);
  CHECK(rebuilt.dump_keys(t0_us) == keys);
  CHECK(run(rebuilt, {"HKEYS", "meta"}) == bulks({"limit", "holder"}));
  const replica snapshot = rebuilt;
  run(rebuilt, {"HDEL", "meta", "limit"});
  CHECK(snapshot.dump_keys(t0_us) == keys);
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
