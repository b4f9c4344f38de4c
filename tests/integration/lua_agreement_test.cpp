// The Lua script engine against a real redis-server 7.0.15 (label `redis`).
//
// Goal: the engine answers every script as Redis does and leaves the same
// keyspace. Method: (1) a fixed list of scripts, one per scripting rule
// (conversions, error texts, globals, the redis table, math.random), each
// EVAL'd on the server and through the engine, replies compared exactly;
// (2) a RapidCheck property over scripts generated from a small grammar
// (redis.call / pcall of ZADD ZREM ZCARD ZRANGE GET SET INCR DEL with
// generated arguments, returns of numbers, strings, booleans, nested tables
// with holes, {ok=}, {err=}, error()), comparing the reply and the whole
// keyspace after each script; (3) the same property with a deliberately
// broken conversion, which must fail (the guard that the property can fail).
//
// The server is 127.0.0.1:$ADMITSIM_REDIS_PORT (default 6390), database 9,
// which the test flushes. Run: tests/integration/run_with_redis.sh ctest --test-dir build -L redis
#include <catch2/catch.hpp>
#include <rapidcheck.h>

#include <algorithm>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "gate/redis/lua_engine.hpp"
#include "tests/integration/agreement_support.hpp"
#include "tests/integration/redis_client.hpp"
#include "tests/redis/redis_test_support.hpp"

namespace admit::redis::test {
namespace {

// --- (1) one script per rule ---------------------------------------------------

// Scripts whose replies must match the server's exactly (texts, SHAs and
// line numbers included). None reads the clock or writes a key with a TTL.
const std::vector<std::string> rule_scripts{
    // Lua -> RESP
    "return 1.9", "return -1.9", "return -0.5", "return 3.99e20", "return -3.99e20", "return 0/0", "return 1/0",
    "return 'x'", "return true", "return false", "return nil", "return", "return function() end",
    "return {1,2,nil,3}", "return {1,{2,{3,nil,4}},false,true}", "return {ok='fine'}", "return {err='bad thing'}",
    "return {err=''}", "return {err=5}", "return {ok=5}", "return {ok='s', err='e'}", "return {ok='s', 1, 2}",
    "return {foo='bar'}", "return {[1]=1,[3]=3}", "return {err='x\\r\\ny'}", "return {err='-x y'}",
    "return {1,2,3,'x',{ok='s'},{err='e'}}", "return 1, 2", "return 2^53", "return -2^63", "return 2^63",
    // RESP -> Lua
    "return type(redis.call('GET','nokey'))", "return {redis.call('GET','nokey')}",
    "return redis.call('SET','k','v')", "return redis.call('SET','k','v')['ok']",
    "return type(redis.call('INCR','n'))",
    "redis.call('ZADD','z',1,'a',2.5,'b') return redis.call('ZRANGE','z',0,-1,'WITHSCORES')",
    "redis.call('SET','k',1.5) return redis.call('GET','k')", "redis.call('SET','k',1e20) return redis.call('GET','k')",
    "redis.call('SET','k',-0.5) return redis.call('GET','k')", "redis.call('SET','k',2^63) return redis.call('GET','k')",
    "redis.call('SET','k',0/0) return redis.call('GET','k')",
    "redis.call('SET','k',123456789012345678) return redis.call('GET','k')",
    // errors
    "redis.call('SET','s','1') return redis.call('ZADD','s',1,'a')",
    "redis.call('SET','s','1') return redis.pcall('ZADD','s',1,'a')",
    "redis.call('SET','s','1') return redis.pcall('ZADD','s',1,'a')['err']",
    "local x = 1\n\nreturn redis.call('ZADD', 'z', 'x', 'y')", "return redis.pcall('ZADD', 'z', 'x', 'y')",
    "error('boom')", "error({err='MY boom'})", "error({err='NOCODE'})", "error(1)", "error(nil)", "error(true)",
    "error('x', 0)", "local t = nil; return t.x", "return 1 + {}",
    "local function g() error('deep') end\nlocal x = 1\ng()",
    "local function g() return redis.call('nosuch') end\nlocal x = 1\ng()", "return string.gsub('x', '.', error)",
    "return redis.call('nosuch')", "return redis.pcall('nosuch')", "return redis.call()", "return redis.call({})",
    "return redis.call('SET', 'k', true)", "return redis.call('GET')", "return redis.call('get', 'a', 'b')",
    "return redis.call('EVAL', 'return 1', 0)",
    "local ok, e = pcall(function() redis.call('nosuch') end) return e",
    "local ok, e = pcall(redis.call, 'nosuch') return {tostring(ok), e}",
    "local ok, e = pcall(function() error({err='X y'}) end) return type(e)",
    "local ok, e = pcall(function() error({1}) end) return type(e)",
    "local ok, e = pcall(function() error({err=5}) end) return type(e)",
    "local ok, e = xpcall(function() error({err='a'}) end, function(m) return type(m) end) return e",
    "local ok, e = pcall(function() return x end) return e", "return {pcall(function() return 1, 2 end)}",
    "return (", "return 1 +",
    // globals
    "return x", "x = 5", "redis = nil", "redis.call = 1", "string.x = 1", "math.random = nil", "_G.x = 1",
    "rawset(_G,'x',1)", "setmetatable(_G, nil)", "KEYS[1] = 'a'; return KEYS[1]", "return type(rawget(_G, 'redis'))",
    "return ('abc'):upper()", "return loadstring('return 7')()", "return loadstring('return x')()",
    "return type(loadfile)", "return type(dofile)", "return type(print)", "return type(os)", "return type(io)",
    "return type(debug)", "return type(setfenv)", "return type(getfenv)", "return type(newproxy)",
    "return type(require)", "return type(package)", "return type(module)",
    "return {type(cjson), type(bit), type(coroutine), type(gcinfo), type(load), type(unpack), _VERSION}",
    "return cjson.encode({1,2,{a=1}})", "return cjson.decode('[1,2,3]')", "return bit.band(0xff, 0x0f)",
    "return bit.tohex(255)",
    // the redis table
    "return redis.status_reply('X')", "return redis.error_reply('My Error')", "return redis.error_reply('-My Error')",
    "return redis.error_reply('')", "return redis.error_reply('NOSPACE')", "return redis.error_reply()",
    "return redis.error_reply(5)", "return redis.status_reply(5)", "return redis.sha1hex('')",
    "return redis.sha1hex('abc')", "return redis.sha1hex(12)", "return redis.sha1hex()",
    "return redis.log(redis.LOG_WARNING, 'hi')", "return redis.log(redis.LOG_WARNING)", "return redis.log(99, 'x')",
    "return redis.log('x', 'y')",
    "return {redis.LOG_DEBUG, redis.LOG_VERBOSE, redis.LOG_NOTICE, redis.LOG_WARNING, redis.REPL_ALL, "
    "redis.REPL_NONE, redis.REPL_AOF, redis.REPL_SLAVE, redis.REPL_REPLICA}",
    "return {redis.REDIS_VERSION, redis.REDIS_VERSION_NUM}", "return redis.replicate_commands()",
    "return redis.set_repl(redis.REPL_ALL)", "return redis.set_repl(99)", "return redis.set_repl()",
    "return redis.setresp(2)", "return redis.setresp(4)", "return redis.setresp()",
    "return redis.acl_check_cmd('GET','x')", "return redis.acl_check_cmd('NOSUCH')",
    // numbers
    "return tostring(0.1)", "return tostring(1/3)", "return tostring(1e100)", "return tostring(2^53)",
    "return tostring(-0)", "return string.format('%.3f', 1.5)", "return tonumber('0x10')", "return tonumber(' 12 ')",
    // tonumber's plain-decimal shortcut and its edges (the stock conversion takes the rest)
    "return {tostring(tonumber('-0')), tostring(tonumber('007')), tostring(tonumber('\\t-12\\n'))}",
    "return {tostring(tonumber('123456789012345')), tostring(tonumber('1234567890123456')), "
    "tostring(tonumber('99999999999999999999'))}",
    "local t = {} for _, s in ipairs({'', ' ', '-', '+5', '1 2', '12a', '12\\0', '1e3', '5.', '.5', '- 1'}) do "
    "t[#t + 1] = tostring(tonumber(s)) end return t",
    "return {tostring(tonumber('10', 2)), tostring(tonumber(' ff ', 16)), tostring(tonumber(12))}",
    "return tonumber()", "return tonumber('7', 99)", "return tonumber({})",
    // integer-valued numbers as command arguments ("%.17g"), -0 included
    "redis.call('SET', 'n', -0) return redis.call('GET', 'n')",
    "redis.call('SET', 'n', 2^53 - 1) return redis.call('GET', 'n')",
    "redis.call('SET', 'n', 2^53) return redis.call('GET', 'n')",
    "redis.call('SET', 'n', -123456789) return redis.call('GET', 'n')",
    // math.random after a seed (the server's generator state is shared, so each seeds first)
    "math.randomseed(42); return {math.random(1000), math.random(1000), tostring(math.random())}",
    "math.randomseed(7.9) return math.random(100000)", "math.randomseed(-1) return math.random(100000)",
    "math.randomseed(3) return {math.random(5, 10), math.random(5, 10), math.random(1)}",
    "math.randomseed(0) return math.random(0)", "math.randomseed(0) return math.random(3, 2)",
    "return math.random(1, 2, 3)",
};

// --- (2) generated scripts -------------------------------------------------------

std::string gen_key() { return pick<std::string>({"'k1'", "'k2'", "KEYS[1]"}); }

// An argument as Lua source: a string or a number literal.
std::string gen_value() {
  return pick<std::string>({"'a'", "'b'", "'1'", "'2.5'", "'-3'", "'x y'", "''", "1", "2", "-1", "0", "1.5", "-2.25",
                            "0.1", "1e20", "3.99e15", "ARGV[1]", "ARGV[2]"});
}

std::string gen_score() {
  return pick<std::string>({"1", "2", "-1", "0", "1.5", "-0.25", "'3'", "'x'", "'inf'", "'-inf'", "1e17"});
}

std::string gen_command() {
  switch (uniform_in(0, 8)) {
    case 0: return "'ZADD', " + gen_key() + ", " + gen_score() + ", " + gen_value();
    case 1: return "'ZREM', " + gen_key() + ", " + gen_value();
    case 2: return "'ZCARD', " + gen_key();
    case 3: {
      std::string out = "'ZRANGE', " + gen_key() + ", " + pick<std::string>({"0", "1", "-1", "'x'"}) + ", " +
                        pick<std::string>({"-1", "0", "2", "1.5"});
      if (uniform_in(0, 2) == 0) out += ", 'WITHSCORES'";
      return out;
    }
    case 4: return "'GET', " + gen_key();
    case 5: return "'SET', " + gen_key() + ", " + gen_value();
    case 6: return "'INCR', " + gen_key();
    default: return "'DEL', " + gen_key();
  }
}

std::string gen_literal(int depth) {
  const int choice = uniform_in(0, depth > 1 ? 10 : 13);
  switch (choice) {
    case 0: return pick<std::string>({"0", "1", "-1", "7", "2.5", "-2.5", "2.7", "-0.7", "0.5", "1e3", "123456.999",
                                      "-99.5", "2^40 + 0.5", "1/3"});
    case 1: return pick<std::string>({"'s'", "''", "'with space'", "'1.5'"});
    case 2: return pick<std::string>({"true", "false"});
    case 3: return "nil";
    case 4: return "{ok=" + pick<std::string>({"'fine'", "'OK'", "''"}) + "}";
    case 5: return "{err=" + pick<std::string>({"'ERR bad'", "'MYCODE x'", "'oneword'"}) + "}";
    case 6: return "r" + std::to_string(uniform_in(0, 3));
    case 7: return "redis.pcall(" + gen_command() + ")";
    case 8: return "(r" + std::to_string(uniform_in(0, 3)) + " or {})['err']";
    case 9: return "math.floor(" + pick<std::string>({"2.5", "-2.5", "7"}) + ")";
    default: {
      std::string out = "{";
      const int n = uniform_in(0, 5);
      for (int i = 0; i < n; ++i) {
        if (i > 0) out += ", ";
        out += gen_literal(depth + 1);
      }
      return out + "}";
    }
  }
}

// A script: locals r0..r3 (nil until assigned), 0-6 statements, one ending.
std::string gen_script() {
  std::string out = "local r0, r1, r2, r3\n";
  const int statements = uniform_in(0, 7);
  for (int i = 0; i < statements; ++i) {
    const std::string call = pick<std::string>({"redis.call", "redis.pcall"});
    if (uniform_in(0, 2) == 0) {
      out += call + "(" + gen_command() + ")\n";
    } else {
      out += "r" + std::to_string(uniform_in(0, 4)) + " = " + call + "(" + gen_command() + ")\n";
    }
  }
  switch (uniform_in(0, 8)) {
    case 0: out += "error(" + pick<std::string>({"'boom'", "{err='MY boom'}", "'x', 0", "3"}) + ")\n"; break;
    case 1: out += "return redis.call(" + gen_command() + ")\n"; break;
    case 2: break;  // falls off the end: nil
    default: out += "return " + gen_literal(0) + "\n"; break;
  }
  return out;
}

struct lua_case_stats {
  int scripts = 0;
  int errors = 0;
};

// Runs generated scripts on the server and through the engine; the first
// disagreement in reply or keyspace fails the case.
void generated_scripts_agree(redis_client& real, bool broken, lua_case_stats& stats) {
  RC_ASSERT(real.call({"FLUSHDB"}) == reply::status("OK"));
  replica data;
  script_engine engine(data);
  engine.set_broken_number_conversion_for_tests(broken);
  std::string history;
  const int scripts = uniform_in(1, 6);
  for (int i = 0; i < scripts; ++i) {
    const std::string body = gen_script();
    const std::vector<std::string> keys{pick<std::string>({"k1", "k3"})};
    const std::vector<std::string> args{pick<std::string>({"a", "5", "-1.5"}), pick<std::string>({"b", "10"})};
    command eval{"EVAL", body, "1", keys[0], args[0], args[1]};
    const auto replies = real.pipeline({{"TIME"}, eval, {"EVAL", dump_script, "0"}});
    const std::int64_t now_us = parse_time_us(replies[0]);
    const reply ours = engine.eval(body, keys, args, now_us);
    ++stats.scripts;
    if (ours.is_error()) ++stats.errors;
    history += "--- KEYS " + keys[0] + " ARGV " + args[0] + " " + args[1] + "\n" + body;
    const std::vector<key_dump> real_dump = parse_dump(replies[2]);
    if (ours != replies[1] || data.dump_keys(now_us) != real_dump) {
      RC_FAIL("engine and redis-server disagree\nscripts of this case (latest last):\n" + history +
              "redis-server replied: " + to_string(replies[1]) + "\nengine replied:       " + to_string(ours) +
              "\nredis-server keyspace:\n" + render_dump(real_dump) + "engine keyspace:\n" + data.dump(now_us));
    }
  }
}

}  // namespace

TEST_CASE("lua agreement: one script per scripting rule", "[lua][redis]") {
  auto real = connect_or_fail(needs_a_server("Lua agreement test"));
  REQUIRE(real->call({"FLUSHDB"}) == reply::status("OK"));
  replica data;
  script_engine engine(data);
  for (const std::string& body : rule_scripts) {
    REQUIRE(real->call({"FLUSHDB"}) == reply::status("OK"));
    data.clear();
    const auto replies = real->pipeline({{"TIME"}, {"EVAL", body, "0"}});
    const reply ours = engine.execute(std::vector<std::string>{"EVAL", body, "0"}, parse_time_us(replies[0]));
    INFO("script: " << body);
    CHECK(to_string(ours) == to_string(replies[1]));
    CHECK(ours == replies[1]);
  }
  // The cache commands.
  REQUIRE(real->call({"SCRIPT", "FLUSH"}) == reply::status("OK"));
  engine.script_flush();
  for (const command& c : std::vector<command>{
           {"SCRIPT", "LOAD", "return 1"}, {"SCRIPT", "LOAD", "return ("}, {"SCRIPT", "EXISTS", "e0e1f9fabfc9d4800c877a703b823ac0578ff8db", "abc"},
           {"EVALSHA", "E0E1F9FABFC9D4800C877A703B823AC0578FF8DB", "0"}, {"EVALSHA", "abc", "0"},
           {"EVAL", "return 1", "2", "a"}, {"EVAL", "return 1", "-1"}, {"EVAL", "return 1", "abc"},
           {"EVAL", "return 1", " 1"}, {"EVAL", "return 1"}, {"EVAL_RO", "return 1", "0"},
           {"EVAL_RO", "return redis.call('SET','a','b')", "0"}, {"EVALSHA_RO", "e0e1f9fabfc9d4800c877a703b823ac0578ff8db", "0"},
           {"EVAL", "return {KEYS[1], ARGV[1], #KEYS, #ARGV}", "1", "a", "b"}, {"SCRIPT", "FLUSH", "X"}, {"SCRIPT"},
           {"SCRIPT", "NOPE"}, {"SCRIPT", "LOAD"}, {"SCRIPT", "FLUSH", "ASYNC"},
           {"EVALSHA", "e0e1f9fabfc9d4800c877a703b823ac0578ff8db", "0"}}) {
    const reply theirs = real->call(c);
    const reply ours = engine.execute(c, t0_us);
    INFO("command: " << c[0] << " " << (c.size() > 1 ? c[1] : "") << " " << (c.size() > 2 ? c[2] : ""));
    CHECK(ours == theirs);
  }
}

TEST_CASE("lua agreement: generated scripts give the same replies and keyspace", "[lua][redis]") {
  auto real = connect_or_fail(needs_a_server("Lua agreement test"));
  lua_case_stats stats;
  const auto result = check_property("lua agreement: generated scripts",
                                     [&] { generated_scripts_agree(*real, false, stats); }, 400);
  INFO(describe(result, "tests/integration/run_with_redis.sh build/tests/integration/lua_agreement_test"));
  CHECK(passed(result));
  WARN("generated scripts: " << stats.scripts << ", of which errors: " << stats.errors);
  CHECK(stats.scripts >= 1000);
}

TEST_CASE("lua agreement: the property notices a broken number conversion", "[lua][redis]") {
  // The guard: rounding instead of truncating must be found.
  auto real = connect_or_fail(needs_a_server("Lua agreement test"));
  lua_case_stats stats;
  const auto result = check_property("lua agreement: broken conversion",
                                     [&] { generated_scripts_agree(*real, true, stats); }, 400);
  CHECK(failed(result));
}

}  // namespace admit::redis::test
