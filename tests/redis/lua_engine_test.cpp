// Unit tests of gate/redis/lua_engine and sha1: each Redis 7.0.15 scripting
// rule the engine reproduces, checked by example against the texts and values
// the real server gives (tests/integration/lua_agreement_test.cpp compares
// them with a live server).
#include <catch2/catch.hpp>

#include <algorithm>
#include <string>
#include <vector>

#include "gate/redis/lua_engine.hpp"
#include "gate/redis/sha1.hpp"
#include "tests/redis/redis_test_support.hpp"

namespace admit::redis::test {
namespace {

struct fixture {
  replica data;
  script_engine engine{data};

  reply eval(const std::string& body, std::vector<std::string> keys = {}, std::vector<std::string> args = {},
             std::int64_t now_us = t0_us) {
    return engine.eval(body, keys, args, now_us);
  }
  reply exec(std::vector<std::string> argv, std::int64_t now_us = t0_us) { return engine.execute(argv, now_us); }
};

std::string sha_of(const std::string& body) { return sha1_hex(body); }

std::string suffix(const std::string& body, int line) {
  return " script: " + sha_of(body) + ", on @user_script:" + std::to_string(line) + ".";
}

}  // namespace

TEST_CASE("sha1: FIPS 180 test vectors and block boundaries", "[lua]") {
  // Goal: the SHA-1 gives the published digests; method: the standard vectors
  // plus lengths around the 55/56/64-byte padding boundaries (checked with sha1sum).
  CHECK(sha1_hex("") == "da39a3ee5e6b4b0d3255bfef95601890afd80709");
  CHECK(sha1_hex("abc") == "a9993e364706816aba3e25717850c26c9cd0d89d");
  CHECK(sha1_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq") ==
        "84983e441c3bd26ebaae4aa1f95129e5e54670f1");
  CHECK(sha1_hex(std::string(1000000, 'a')) == "34aa973cd4c4daa4f61eeb2bdbad27316534016f");
  CHECK(sha1_hex(std::string(55, 'x')) == "cef734ba81a024479e09eb5a75b6ddae62e6abf1");
  CHECK(sha1_hex(std::string(56, 'x')) == "901305367c259952f4e7af8323f480d59f81335b");
  CHECK(sha1_hex(std::string(64, 'x')) == "bb2fa3ee7afb9f54c6dfb5d021f14b1ffe40c163");
  CHECK(sha1_hex("return 1") == "e0e1f9fabfc9d4800c877a703b823ac0578ff8db");  // Redis's SCRIPT LOAD
}

TEST_CASE("lua engine: Lua to RESP conversions", "[lua]") {
  // Goal: a script's return value becomes the reply Redis 7.0.15 gives;
  // method: one script per rule, expected replies taken from the real server.
  fixture f;
  CHECK(f.eval("return 1.9") == integer(1));
  CHECK(f.eval("return -1.9") == integer(-1));
  CHECK(f.eval("return -0.5") == integer(0));
  CHECK(f.eval("return 3.99e20") == integer(INT64_MIN));
  CHECK(f.eval("return 0/0") == integer(INT64_MIN));
  CHECK(f.eval("return 1/0") == integer(INT64_MIN));
  CHECK(f.eval("return -1/0") == integer(INT64_MIN));
  CHECK(f.eval("return 'x'") == reply::bulk("x"));
  CHECK(f.eval("return true") == integer(1));
  CHECK(f.eval("return false") == reply::nil());
  CHECK(f.eval("return nil") == reply::nil());
  CHECK(f.eval("return") == reply::nil());
  CHECK(f.eval("return function() end") == reply::nil());
  CHECK(f.eval("return {1,2,nil,3}") == reply::array({integer(1), integer(2)}));
  CHECK(f.eval("return {1,{2,{3,nil,4}},false,true}") ==
        reply::array({integer(1), reply::array({integer(2), reply::array({integer(3)})}), reply::nil(),
                      integer(1)}));
  CHECK(f.eval("return {ok='fine'}") == reply::status("fine"));
  CHECK(f.eval("return {err='bad thing'}") == reply::error("bad thing"));
  CHECK(f.eval("return {err=''}") == reply::error(""));
  CHECK(f.eval("return {err=5}") == reply::array({}));  // err must be a string
  CHECK(f.eval("return {ok='s', err='e'}") == reply::error("e"));
  CHECK(f.eval("return {ok='s', 1, 2}") == reply::status("s"));
  CHECK(f.eval("return {foo='bar'}") == reply::array({}));
  CHECK(f.eval("return {err='x\\r\\ny'}") == reply::error("x  y"));
  CHECK(f.eval("return {1,2,3,'x',{ok='s'},{err='e'}}") ==
        reply::array({integer(1), integer(2), integer(3), reply::bulk("x"), reply::status("s"),
                      reply::error("e")}));
  CHECK(f.eval("return 1, 2") == integer(1));  // only the first value
}

TEST_CASE("lua engine: RESP to Lua conversions", "[lua]") {
  // Goal: redis.call's replies reach the script as Redis 7.0 gives them;
  // method: scripts that inspect types of each reply shape.
  fixture f;
  CHECK(f.eval("return type(redis.call('GET','nokey'))") == reply::bulk("boolean"));
  CHECK(f.eval("return redis.call('GET','nokey') == false") == integer(1));
  CHECK(f.eval("return type(redis.call('INCR','n'))") == reply::bulk("number"));
  CHECK(f.eval("return redis.call('SET','k','v')['ok']") == reply::bulk("OK"));
  CHECK(f.eval("return redis.call('SET','k','v')") == reply::status("OK"));
  CHECK(f.eval("redis.call('ZADD','z',1,'a',2,'b') return redis.call('ZRANGE','z',0,-1,'WITHSCORES')") ==
        bulks({"a", "1", "b", "2"}));
  CHECK(f.eval("return redis.pcall('ZADD','k',1,'a')['err']") ==
        reply::bulk("WRONGTYPE Operation against a key holding the wrong kind of value"));
  CHECK(f.eval("return redis.pcall('ZADD','k',1,'a')") ==
        reply::error("WRONGTYPE Operation against a key holding the wrong kind of value"));
  CHECK(f.eval("return redis.pcall('nosuch')['err']") ==
        reply::bulk("ERR Unknown Redis command called from script"));
  // Numbers as command arguments are "%.17g".
  CHECK(f.eval("redis.call('SET','k',1.5) return redis.call('GET','k')") == reply::bulk("1.5"));
  CHECK(f.eval("redis.call('SET','k',1e20) return redis.call('GET','k')") == reply::bulk("1e+20"));
  CHECK(f.eval("redis.call('SET','k',123456789012345678) return redis.call('GET','k')") ==
        reply::bulk("1.2345678901234568e+17"));
  CHECK(f.eval("redis.call('SET','k',2^63) return redis.call('GET','k')") ==
        reply::bulk("9.2233720368547758e+18"));
  CHECK(f.eval("redis.call('SET','k',-0.5) return redis.call('GET','k')") == reply::bulk("-0.5"));
}

TEST_CASE("lua engine: error replies as Redis 7.0.15 words them", "[lua]") {
  // Goal: every kind of script failure answers Redis's exact text; method:
  // one script per kind, texts copied from the real server's replies.
  fixture f;
  f.data.set("s", "1", t0_us);
  std::string body = "return redis.call('ZADD', KEYS[1], 1, 'a')";
  CHECK(f.eval(body, {"s"}) ==
        reply::error("WRONGTYPE Operation against a key holding the wrong kind of value" + suffix(body, 1)));
  CHECK(f.engine.last_error().command == "ZADD");
  CHECK(f.engine.last_error().line == 1);
  CHECK(f.engine.last_error().sha == sha_of(body));

  body = "local x = 1\n\nreturn redis.call('zadd', 'z', 'x', 'y')";
  CHECK(f.eval(body) == reply::error("ERR value is not a valid float" + suffix(body, 3)));
  CHECK(f.engine.last_error().line == 3);
  CHECK(f.engine.last_error().command == "ZADD");

  body = "error('boom')";
  CHECK(f.eval(body) == reply::error("ERR user_script:1: boom" + suffix(body, 1)));
  CHECK(f.engine.last_error().command.empty());
  body = "error({err='MY boom'})";
  CHECK(f.eval(body) == reply::error("MY boom" + suffix(body, 1)));
  body = "error(1)";
  CHECK(f.eval(body) == reply::error("ERR user_script:1: 1" + suffix(body, 1)));
  body = "error(nil)";
  CHECK(f.eval(body) == reply::error("ERR nil" + suffix(body, 1)));
  body = "error('x', 0)";
  CHECK(f.eval(body) == reply::error("ERR x" + suffix(body, 1)));
  body = "local t = nil; return t.x";
  CHECK(f.eval(body) == reply::error("ERR user_script:1: attempt to index local 't' (a nil value)" + suffix(body, 1)));
  body = "local function g() error('deep') end\nlocal x = 1\ng()";
  CHECK(f.eval(body) == reply::error("ERR user_script:1: deep" + suffix(body, 1)));
  body = "return string.gsub('x', '.', error)";
  CHECK(f.eval(body) == reply::error("ERR x script: " + sha_of(body) + ", on =[C]:-1."));
  body = "return redis.call('nosuch')";
  CHECK(f.eval(body) == reply::error("ERR Unknown Redis command called from script" + suffix(body, 1)));
  body = "return redis.call()";
  CHECK(f.eval(body) == reply::error("ERR Please specify at least one argument for this redis lib call" + suffix(body, 1)));
  body = "return redis.call({})";
  CHECK(f.eval(body) == reply::error("ERR Lua redis lib command arguments must be strings or integers" + suffix(body, 1)));
  body = "return redis.call('SET', 'k', true)";
  CHECK(f.eval(body) == reply::error("ERR Lua redis lib command arguments must be strings or integers" + suffix(body, 1)));
  body = "return redis.call('GET')";
  CHECK(f.eval(body) == reply::error("ERR Wrong number of args calling Redis command from script" + suffix(body, 1)));
  body = "return redis.call('EVAL', 'return 1', 0)";
  CHECK(f.eval(body) == reply::error("ERR This Redis command is not allowed from script" + suffix(body, 1)));
  body = "local ok, e = pcall(function() redis.call('ZADD','s',1,'a') end) error(e)";
  CHECK(f.eval(body) ==
        reply::error("ERR user_script:1: WRONGTYPE Operation against a key holding the wrong kind of value" +
                     suffix(body, 1)));
  // A command Redis has but the replica does not model.
  body = "return redis.call('LPUSH', 'l', 'a')";
  CHECK(f.eval(body).text.starts_with("ERR admitsim: the replica does not model LPUSH"));

  CHECK(f.eval("return (") ==
        reply::error("ERR Error compiling script (new function): user_script:1: unexpected symbol near '<eof>'"));
  CHECK(f.exec({"SCRIPT", "LOAD", "return ("}) ==
        reply::error("ERR Error compiling script (new function): user_script:1: unexpected symbol near '<eof>'"));
  CHECK(f.exec({"EVAL", "return 1", "2", "a"}) == reply::error("ERR Number of keys can't be greater than number of args"));
  CHECK(f.exec({"EVAL", "return 1", "-1"}) == reply::error("ERR Number of keys can't be negative"));
  CHECK(f.exec({"EVAL", "return 1", "abc"}) == reply::error("ERR value is not an integer or out of range"));
  CHECK(f.exec({"EVAL", "return 1", " 1"}) == reply::error("ERR value is not an integer or out of range"));
  CHECK(f.exec({"EVAL", "return 1"}) == reply::error("ERR wrong number of arguments for 'eval' command"));
  CHECK(f.exec({"EVALSHA", "0123456789012345678901234567890123456789", "0"}) ==
        reply::error("NOSCRIPT No matching script. Please use EVAL."));
  CHECK(f.exec({"EVALSHA", "abc", "0"}) == reply::error("NOSCRIPT No matching script. Please use EVAL."));
  CHECK(f.exec({"SCRIPT", "FLUSH", "X"}) == reply::error("ERR SCRIPT FLUSH only support SYNC|ASYNC option"));
  CHECK(f.exec({"SCRIPT"}) == reply::error("ERR wrong number of arguments for 'script' command"));
  CHECK(f.exec({"SCRIPT", "NOPE"}) == reply::error("ERR unknown subcommand 'NOPE'. Try SCRIPT HELP."));
  CHECK(f.exec({"SCRIPT", "LOAD"}) == reply::error("ERR wrong number of arguments for 'script|load' command"));
}

TEST_CASE("lua engine: globals are read-only and undefined ones raise", "[lua]") {
  // Goal: 7.0's protected globals and libraries, with its messages; method:
  // reads and writes of each kind, texts from the real server.
  fixture f;
  std::string body = "return x";
  CHECK(f.eval(body) ==
        reply::error("ERR user_script:1: Script attempted to access nonexistent global variable 'x'" + suffix(body, 1)));
  body = "x = 5";
  CHECK(f.eval(body) == reply::error("ERR user_script:1: Attempt to modify a readonly table" + suffix(body, 1)));
  body = "redis = nil";
  CHECK(f.eval(body) == reply::error("ERR user_script:1: Attempt to modify a readonly table" + suffix(body, 1)));
  body = "redis.call = 1";
  CHECK(f.eval(body) == reply::error("ERR user_script:1: Attempt to modify a readonly table" + suffix(body, 1)));
  body = "string.x = 1";
  CHECK(f.eval(body) == reply::error("ERR user_script:1: Attempt to modify a readonly table" + suffix(body, 1)));
  body = "math.random = nil";
  CHECK(f.eval(body) == reply::error("ERR user_script:1: Attempt to modify a readonly table" + suffix(body, 1)));
  body = "_G.x = 1";
  CHECK(f.eval(body) == reply::error("ERR user_script:1: Attempt to modify a readonly table" + suffix(body, 1)));
  body = "rawset(_G,'x',1)";
  CHECK(f.eval(body) == reply::error("ERR Attempt to modify a readonly table" + suffix(body, 1)));
  body = "setmetatable(_G, nil)";
  CHECK(f.eval(body) == reply::error("ERR Attempt to modify a readonly table" + suffix(body, 1)));
  CHECK(f.eval("KEYS[1] = 'a'; return KEYS[1]") == reply::bulk("a"));
  CHECK(f.eval("local t = {}; t.x = 1; return t.x") == integer(1));
  CHECK(f.eval("return type(rawget(_G, 'redis'))") == reply::bulk("table"));
  CHECK(f.eval("return rawget(_G, 'nosuch') == nil") == integer(1));
  CHECK(f.eval("return ('abc'):upper()") == reply::bulk("ABC"));
  CHECK(f.eval("return loadstring('return 7')()") == integer(7));
  body = "return loadstring('return x')()";
  CHECK(f.eval(body) == reply::error("ERR [string \"return x\"]:1: Script attempted to access nonexistent global "
                                     "variable 'x' script: " + sha_of(body) + ", on return x:1."));
  CHECK(f.eval("local n = 0 for k in pairs(_G) do n = n + 1 end return n > 20") == integer(1));
  // The libraries Redis loads, and what it removes.
  for (const char* name : {"loadfile", "dofile", "print", "os", "io", "require", "module", "package", "setfenv",
                           "getfenv", "newproxy", "debug"}) {
    const std::string b = std::string("return type(") + name + ")";
    CHECK(f.eval(b).text.find("nonexistent global variable '" + std::string(name) + "'") != std::string::npos);
  }
  for (const char* name : {"string", "table", "math", "cjson", "bit", "coroutine", "redis", "_G"}) {
    CHECK(f.eval(std::string("return type(") + name + ")") == reply::bulk("table"));
  }
  for (const char* name : {"gcinfo", "collectgarbage", "load", "loadstring", "unpack", "select", "xpcall", "pcall"}) {
    CHECK(f.eval(std::string("return type(") + name + ")") == reply::bulk("function"));
  }
  CHECK(f.eval("return _VERSION") == reply::bulk("Lua 5.1"));
  CHECK(f.eval("return cjson.encode({1,2,{a=1}})") == reply::bulk("[1,2,{\"a\":1}]"));
  CHECK(f.eval("return cjson.decode('[1,2,3]')") == reply::array({integer(1), integer(2), integer(3)}));
  CHECK(f.eval("return bit.band(0xff, 0x0f)") == integer(15));
  CHECK(f.eval("return bit.tohex(255)") == reply::bulk("000000ff"));
}

TEST_CASE("lua engine: the redis table", "[lua]") {
  // Goal: redis.* helpers answer as 7.0.15; method: each helper's normal and
  // refused uses.
  fixture f;
  CHECK(f.eval("return redis.status_reply('X')") == reply::status("X"));
  CHECK(f.eval("return redis.error_reply('My Error')") == reply::error("My Error"));
  CHECK(f.eval("return redis.error_reply('-My Error')") == reply::error("My Error"));
  CHECK(f.eval("return redis.error_reply('')") == reply::error("ERR "));
  CHECK(f.eval("return redis.error_reply('NOSPACE')") == reply::error("ERR NOSPACE"));
  CHECK(f.eval("return redis.error_reply()") == reply::error("ERR wrong number or type of arguments"));
  CHECK(f.eval("return redis.error_reply(5)") == reply::error("ERR wrong number or type of arguments"));
  CHECK(f.eval("return redis.status_reply(5)") == reply::error("ERR wrong number or type of arguments"));
  CHECK(f.eval("return redis.sha1hex('')") == reply::bulk("da39a3ee5e6b4b0d3255bfef95601890afd80709"));
  CHECK(f.eval("return redis.sha1hex(12)") == reply::bulk("7b52009b64fd0a2a49e6d8a939753077792b0554"));
  std::string body = "return redis.sha1hex()";
  CHECK(f.eval(body) == reply::error("ERR wrong number of arguments" + suffix(body, 1)));
  CHECK(f.eval("return redis.log(redis.LOG_WARNING, 'hi')") == reply::nil());
  body = "return redis.log(redis.LOG_WARNING)";
  CHECK(f.eval(body) == reply::error("ERR redis.log() requires two arguments or more." + suffix(body, 1)));
  body = "return redis.log(99, 'x')";
  CHECK(f.eval(body) == reply::error("ERR Invalid debug level." + suffix(body, 1)));
  body = "return redis.log('x', 'y')";
  CHECK(f.eval(body) == reply::error("ERR First argument must be a number (log level)." + suffix(body, 1)));
  CHECK(f.eval("return {redis.LOG_DEBUG, redis.LOG_VERBOSE, redis.LOG_NOTICE, redis.LOG_WARNING, redis.REPL_ALL, "
               "redis.REPL_NONE, redis.REPL_AOF, redis.REPL_SLAVE, redis.REPL_REPLICA}") ==
        reply::array({integer(0), integer(1), integer(2), integer(3), integer(3), integer(0), integer(1), integer(2),
                      integer(2)}));
  CHECK(f.eval("return {redis.REDIS_VERSION, redis.REDIS_VERSION_NUM}") ==
        reply::array({reply::bulk("7.0.15"), integer(458767)}));
  CHECK(f.eval("return redis.replicate_commands()") == integer(1));
  CHECK(f.eval("return redis.set_repl(redis.REPL_ALL)") == reply::nil());
  body = "return redis.set_repl(99)";
  CHECK(f.eval(body) ==
        reply::error("ERR Invalid replication flags. Use REPL_AOF, REPL_REPLICA, REPL_ALL or REPL_NONE." +
                     suffix(body, 1)));
  body = "return redis.set_repl()";
  CHECK(f.eval(body) == reply::error("ERR redis.set_repl() requires two arguments." + suffix(body, 1)));
  CHECK(f.eval("return redis.setresp(2)") == reply::nil());
  body = "return redis.setresp(4)";
  CHECK(f.eval(body) == reply::error("ERR RESP version must be 2 or 3." + suffix(body, 1)));
  CHECK(f.eval("return redis.setresp(3)").text.starts_with("ERR admitsim: redis.setresp(3) is not supported"));
  CHECK(f.eval("return redis.acl_check_cmd('GET','x')") == integer(1));
  // pcall sees the error text of an error table, as in 7.0.15.
  CHECK(f.eval("local ok, e = pcall(function() error({err='X y'}) end) return type(e)") == reply::bulk("string"));
  CHECK(f.eval("local ok, e = pcall(function() error({1}) end) return type(e)") == reply::bulk("table"));
  CHECK(f.eval("local ok, e = xpcall(function() error({err='a'}) end, function(m) return m end) return type(e)") ==
        reply::bulk("table"));
  CHECK(f.eval("return {pcall(function() return 1, 2 end)}") == reply::array({integer(1), integer(1), integer(2)}));
}

TEST_CASE("lua engine: math.random is Redis 7.0's generator", "[lua]") {
  // Goal: the same numbers as a Redis server (fresh, and after randomseed);
  // method: values read from a fresh redis-server 7.0.15.
  fixture f;
  CHECK(f.eval("return {tostring(math.random()), tostring(math.random())}") ==
        bulks({"0.39646477363839", "0.84048536971234"}));
  // The generator's state carries over to the next script, as on the server.
  CHECK(f.eval("return tostring(math.random())") == reply::bulk("0.35333609737146"));
  CHECK(f.eval("math.randomseed(42); return {math.random(1000), math.random(1000), tostring(math.random())}") ==
        reply::array({integer(745), integer(343), reply::bulk("0.11108528222474")}));
  CHECK(f.eval("math.randomseed(7.9) return math.random(100000)") == integer(26645));
  CHECK(f.eval("math.randomseed(-1) return math.random(100000)") == integer(30003));
  CHECK(f.eval("math.randomseed(1) return math.random(5, 10) >= 5") == integer(1));
  CHECK(f.eval("return math.random(0)").text.find("interval is empty") != std::string::npos);
  CHECK(f.eval("return math.random(1,2,3)").text.find("wrong number of arguments") != std::string::npos);
}

TEST_CASE("lua engine: numbers print with %.14g in the C locale", "[lua]") {
  // Goal: tostring of numbers as Lua 5.1 in Redis, whatever the process locale;
  // method: a few values, then again under a locale with a decimal comma if
  // the machine has one.
  fixture f;
  auto check_all = [&] {
    CHECK(f.eval("return tostring(0.1)") == reply::bulk("0.1"));
    CHECK(f.eval("return tostring(1/3)") == reply::bulk("0.33333333333333"));
    CHECK(f.eval("return tostring(1e100)") == reply::bulk("1e+100"));
    CHECK(f.eval("return tostring(2^53)") == reply::bulk("9.007199254741e+15"));
    CHECK(f.eval("return tonumber('1.5') * 2") == integer(3));
    CHECK(f.eval("return string.format('%.3f', 1.5)") == reply::bulk("1.500"));
  };
  check_all();
  for (const char* name : {"de_DE.UTF-8", "de_DE.utf8", "fr_FR.UTF-8", "C.UTF-8"}) {
    if (std::setlocale(LC_ALL, name) != nullptr) {
      check_all();
      break;
    }
  }
  std::setlocale(LC_ALL, "C");
}

TEST_CASE("lua engine: KEYS, ARGV, frozen time and atomic failure", "[lua]") {
  // Goal: the call's arguments, one server time for every command of a
  // script, and writes before an error kept; method: scripts that read
  // them back and a script failing halfway.
  fixture f;
  CHECK(f.eval("return {KEYS[1], ARGV[1], #KEYS, #ARGV}", {"a"}, {"b"}) ==
        reply::array({reply::bulk("a"), reply::bulk("b"), integer(1), integer(1)}));
  CHECK(f.exec({"EVAL", "return {KEYS[1], KEYS[2], ARGV[1]}", "2", "k1", "k2", "v"}) == bulks({"k1", "k2", "v"}));
  CHECK(f.eval("return redis.call('TIME')", {}, {}, t0_us + 78868) == bulks({"1700000000", "78868"}));
  CHECK(f.eval("local a = redis.call('TIME') for i = 1, 1000 do redis.call('INCR', 'n') end "
               "local b = redis.call('TIME') return a[2] == b[2]") == integer(1));
  // PEXPIRE inside a script runs on the call's time.
  f.eval("redis.call('SET', 'e', 'v') redis.call('PEXPIRE', 'e', 10)", {}, {}, at_ms(100));
  CHECK(f.data.pexpiretime("e", at_ms(100)) == t0_ms + 110);
  // A failure keeps what was written before it.
  const reply r = f.eval("redis.call('SET', 'before', '1') redis.call('ZADD', 'before', 1, 'a') "
                         "redis.call('SET', 'after', '1')");
  CHECK(r.is_error());
  CHECK(f.data.get("before", t0_us) == std::optional<std::string>("1"));
  CHECK_FALSE(f.data.exists("after", t0_us));
  // Other commands go to the replica.
  CHECK(f.exec({"SET", "plain", "1"}) == reply::status("OK"));
  CHECK(f.exec({"GET", "plain"}) == reply::bulk("1"));
}

TEST_CASE("lua engine: every call sees KEYS and ARGV as given, whatever the last call did to them", "[lua]") {
  // Goal: Redis's new tables per call stay visible although the engine keeps
  // a script's tables between calls; method: a script that reports its KEYS
  // and ARGV, then changes them in one way (value, added, removed, hash key,
  // index 0, metatable), called with the same and with other arguments.
  fixture f;
  const std::string body =
      "local n = 0 for _ in pairs(KEYS) do n = n + 1 end for _ in pairs(ARGV) do n = n + 1 end "
      "local seen = {#KEYS, #ARGV, n, tostring(getmetatable(KEYS)), tostring(getmetatable(ARGV)), "
      "  table.concat(KEYS, ','), table.concat(ARGV, ','), tostring(KEYS[3]), tostring(ARGV[4])} "
      "local how = ARGV[1] "
      "if how == 'set' then KEYS[1] = 'changed' ARGV[2] = 'changed' "
      "elseif how == 'add' then KEYS[#KEYS + 1] = 'more' ARGV.x = 1 "
      "elseif how == 'remove' then table.remove(ARGV) KEYS[1] = nil "
      "elseif how == 'meta' then setmetatable(KEYS, {__index = function() return 'meta' end}) setmetatable(ARGV, {}) "
      "elseif how == 'zero' then ARGV[0] = 'z' KEYS[0] = 'z' "
      "elseif how == 'error' then KEYS[1] = 'changed' error('boom') end "
      "return seen";
  const std::string other = "KEYS[1] = 'other' ARGV[1] = 'other' return {#KEYS, #ARGV}";
  const auto expected = [](const std::vector<std::string>& keys, const std::vector<std::string>& args) {
    std::string k;
    for (const std::string& s : keys) k += (k.empty() ? "" : ",") + s;
    std::string a;
    for (const std::string& s : args) a += (a.empty() ? "" : ",") + s;
    return reply::array({integer(static_cast<std::int64_t>(keys.size())), integer(static_cast<std::int64_t>(args.size())),
                         integer(static_cast<std::int64_t>(keys.size() + args.size())), reply::bulk("nil"),
                         reply::bulk("nil"), reply::bulk(k), reply::bulk(a), reply::bulk("nil"), reply::bulk("nil")});
  };
  for (const char* how : {"none", "set", "set", "add", "add", "remove", "none", "meta", "zero", "error", "none"}) {
    INFO(how);
    const std::vector<std::string> keys{"k1", "k2"};
    const std::vector<std::string> args{how, "a2", "a3"};
    const reply r = f.eval(body, keys, args);
    if (std::string(how) != "error") CHECK(r == expected(keys, args));
    // The same script with fewer and with other arguments, and another script between.
    CHECK(f.eval(body, {"k1"}, {"x"}) == expected({"k1"}, {"x"}));
    CHECK(f.eval(other, {"k1"}, {"x"}) == reply::array({integer(1), integer(1)}));
    if (std::string(how) != "error") CHECK(f.eval(body, {}, {how, "b2"}) == expected({}, {how, "b2"}));
    CHECK(f.exec({"EVALSHA", sha_of(body), "2", "k1", "k2", "none", "a2", "a3"}) ==
          expected(keys, {"none", "a2", "a3"}));
  }
  // A script that keeps KEYS in a shared table it can write (the string
  // metatable, the proxies' metatable) sees that call's values there later.
  for (const char* place : {"getmetatable('')", "getmetatable(string)"}) {
    INFO(place);
    fixture g;
    const std::string stash = std::string("local m = ") + place +
                              " if ARGV[1] == 'keep' then m.kept = KEYS end return tostring(m.kept and m.kept[1])";
    CHECK(g.eval(stash, {"first"}, {"keep"}) == reply::bulk("first"));
    CHECK(g.eval(stash, {"second"}, {"no"}) == reply::bulk("first"));
    CHECK(g.eval(stash, {"third"}, {"no"}) == reply::bulk("first"));
    CHECK(g.eval(body, {"k1"}, {"x"}) == expected({"k1"}, {"x"}));
    CHECK(g.eval(body, {"k1"}, {"set"}) == expected({"k1"}, {"set"}));
    CHECK(g.eval(body, {"k1"}, {"none"}) == expected({"k1"}, {"none"}));
  }
  {
    // The same through a metatable given to the shared table.
    fixture g;
    const std::string stash =
        "local m = getmetatable('') if ARGV[1] == 'keep' then setmetatable(m, {kept = KEYS}) end "
        "local mm = getmetatable(m) return tostring(mm and mm.kept[1])";
    CHECK(g.eval(stash, {"first"}, {"keep"}) == reply::bulk("first"));
    CHECK(g.eval(stash, {"second"}, {"no"}) == reply::bulk("first"));
  }
  // Arguments past the kept size are not kept, and calls after them still see theirs.
  const std::string big(5000, 'b');
  CHECK(f.eval(body, {"k1"}, {"none", big}) == expected({"k1"}, {"none", big}));
  CHECK(f.eval(body, {"k1"}, {"set"}) == expected({"k1"}, {"set"}));
  CHECK(f.eval(body, {"k1"}, {"none"}) == expected({"k1"}, {"none"}));
}

TEST_CASE("lua engine: script cache, SCRIPT commands, EVAL_RO and handles", "[lua]") {
  // Goal: SCRIPT LOAD/EXISTS/FLUSH, EVALSHA (any case), read-only scripts and
  // the handle fast path behave as Redis's cache; method: load, call, flush, call.
  fixture f;
  CHECK(f.exec({"SCRIPT", "LOAD", "return 1"}) == reply::bulk("e0e1f9fabfc9d4800c877a703b823ac0578ff8db"));
  CHECK(f.exec({"SCRIPT", "EXISTS", "e0e1f9fabfc9d4800c877a703b823ac0578ff8db", "abc"}) ==
        reply::array({integer(1), integer(0)}));
  CHECK(f.exec({"EVALSHA", "E0E1F9FABFC9D4800C877A703B823AC0578FF8DB", "0"}) == integer(1));
  CHECK(f.exec({"EVAL_RO", "return 1", "0"}) == integer(1));
  const std::string body = "return redis.call('SET','a','b')";
  CHECK(f.exec({"EVAL_RO", body, "0"}) ==
        reply::error("ERR Write commands are not allowed from read-only scripts." + suffix(body, 1)));
  CHECK_FALSE(f.data.exists("a", t0_us));
  CHECK(f.exec({"EVALSHA_RO", "e0e1f9fabfc9d4800c877a703b823ac0578ff8db", "0"}) == integer(1));

  const script_handle h = f.engine.load_handle("return ARGV[1] .. KEYS[1]");
  REQUIRE(h.valid());
  const std::vector<std::string> keys{"k"};
  const std::vector<std::string> args{"a"};
  CHECK(f.engine.call(h, keys, args, t0_us) == reply::bulk("ak"));
  CHECK_FALSE(f.engine.load_handle("return (").valid());

  CHECK(f.exec({"SCRIPT", "FLUSH"}) == reply::status("OK"));
  CHECK_FALSE(f.engine.script_exists("e0e1f9fabfc9d4800c877a703b823ac0578ff8db"));
  CHECK(f.exec({"EVALSHA", "e0e1f9fabfc9d4800c877a703b823ac0578ff8db", "0"}) ==
        reply::error("NOSCRIPT No matching script. Please use EVAL."));
  CHECK(f.engine.call(h, keys, args, t0_us) == reply::error("NOSCRIPT No matching script. Please use EVAL."));
  CHECK(f.eval("return 2") == integer(2));  // the rebuilt state works
}

TEST_CASE("lua engine: the step limit ends a runaway script and the state stays usable", "[lua]") {
  // Goal: max_steps bounds a call, even one that catches errors in a loop;
  // method: infinite loops (plain, inside pcall, in a coroutine), then a normal call.
  replica data;
  script_engine engine(data, script_limits{.max_steps = 100'000});
  const std::vector<std::string> none;
  for (const char* body : {"while true do end", "while true do pcall(function() while true do end end) end",
                           "local co = coroutine.wrap(function() while true do end end) co()",
                           "redis.call('SET','w','1') while true do end"}) {
    const reply r = engine.eval(body, none, none, t0_us);
    CHECK(r == reply::error("ERR admitsim: script exceeded 100000 Lua steps (a real Redis would be BUSY)"));
    CHECK(engine.last_error().step_limit);
    CHECK_FALSE(engine.last_error().memory_limit);
    CHECK(engine.steps_of_last_call() > 100'000);
    CHECK(engine.eval("return 1", none, none, t0_us) == integer(1));
  }
  CHECK(data.get("w", t0_us) == std::optional<std::string>("1"));  // kept, as Redis keeps it
  CHECK(engine.eval("local n = 0 for i = 1, 10000 do n = n + i end return n", none, none, t0_us) == integer(50005000));
  CHECK(engine.steps_of_last_call() >= 10'000);
}

TEST_CASE("lua engine: the memory limit ends a greedy script and the state stays usable", "[lua]") {
  // Goal: max_memory_bytes bounds the heap; method: a script growing a table
  // without end, then normal calls.
  replica data;
  script_engine engine(data, script_limits{.max_memory_bytes = 8u << 20});
  const std::vector<std::string> none;
  const reply r = engine.eval("local t = {} local i = 0 while true do i = i + 1 t[i] = string.rep('x', 100) .. i end",
                              none, none, t0_us);
  CHECK(r.text.starts_with("ERR admitsim: script exceeded the Lua heap limit of 8388608 bytes"));
  CHECK(engine.last_error().memory_limit);
  CHECK_FALSE(engine.last_error().step_limit);
  CHECK(engine.lua_heap_bytes() <= (8u << 20));
  CHECK(engine.eval("return #string.rep('x', 1000)", none, none, t0_us) == integer(1000));
  // A script that catches the memory error and carries on succeeds.
  CHECK(engine.eval("local ok = pcall(function() local t = {} for i = 1, 1e9 do t[i] = i end end) return ok == false",
                    none, none, t0_us) == integer(1));
}

TEST_CASE("lua engine: deterministic replies", "[lua]") {
  // Goal: same calls give the same replies and keyspace; method: two engines
  // over two replicas fed one script sequence, including pairs() order.
  auto run_all = [] {
    replica data;
    script_engine engine(data);
    std::vector<reply> out;
    const std::vector<std::string> none;
    for (int i = 0; i < 20; ++i) {
      out.push_back(engine.eval("local t = {} for k in pairs(redis) do t[#t+1] = k end "
                                "redis.call('ZADD', 'z', math.random(100), 'm' .. math.random(5)) return t",
                                none, none, at_ms(i)));
    }
    out.push_back(reply::bulk(data.dump(at_ms(20))));
    return out;
  };
  CHECK(run_all() == run_all());
}

TEST_CASE("lua engine: INFO server reports the process's run id and whole-second uptime", "[lua]") {
  // Goal: a script reads what Redis 7.0.15's INFO server gives (its line format and uptime rule) from the
  // process the engine is told of, and nothing is made up without one. Method: a process started 0.9 s
  // before a whole second, read 0.2 s and 60.95 s later; the other sections and no process at all.
  fixture f;
  const std::string up = "return string.match(redis.call('INFO', 'server'), 'uptime_in_seconds:(%d+)')";
  CHECK(f.eval(up).is_error());  // no process
  CHECK(f.eval(up).text.find("needs a server process") != std::string::npos);
  const std::int64_t start_us = t0_us + 100'000;  // t0 is a whole second
  const server_facts facts{make_run_id(0, 0), start_us};
  f.engine.set_server_facts(&facts);
  // Whole seconds of the clock, now less start: 0.2 s later crosses no second; 1.0 s later reads 1.
  CHECK(f.eval(up, {}, {}, start_us + 200'000) == reply::bulk("0"));
  CHECK(f.eval(up, {}, {}, start_us + 900'000) == reply::bulk("1"));
  CHECK(f.eval(up, {}, {}, start_us + 60'950'000) == reply::bulk("61"));
  const reply whole = f.exec({"info", "Server"}, start_us + 86'400'000'000);
  REQUIRE(whole.type == reply::kind::bulk);
  CHECK(whole.text == "# Server\r\nredis_version:7.0.15\r\nredis_mode:standalone\r\nrun_id:" + facts.run_id +
                          "\r\ntcp_port:6379\r\nserver_time_usec:" + std::to_string(start_us + 86'400'000'000) +
                          "\r\nuptime_in_seconds:86400\r\nuptime_in_days:1\r\n");
  CHECK(f.eval("return string.match(redis.call('INFO', 'server'), 'run_id:(%x+)')") == reply::bulk(facts.run_id));
  for (const std::vector<std::string>& argv : std::vector<std::vector<std::string>>{
           {"INFO"}, {"INFO", "replication"}, {"INFO", "server", "clients"}, {"INFO", "all"}}) {
    const reply r = f.exec(argv);
    CHECK(r.is_error());
    CHECK(r.text == "ERR admitsim replica: INFO models only its server section (INFO server)");
  }
  CHECK(f.eval("return redis.pcall('INFO')").is_error());
}

TEST_CASE("lua engine: run ids are 40 hex digits, one per node and process", "[lua]") {
  // Goal: every process of every node gets its own run id, the same in every run. Method: nodes 0..2,
  // processes 0..3: all distinct, each 40 lower-case hex digits, and recomputed equal.
  std::vector<std::string> ids;
  for (std::size_t node = 0; node < 3; ++node)
    for (std::uint64_t process = 0; process < 4; ++process) {
      const std::string id = make_run_id(node, process);
      CHECK(id.size() == 40);
      CHECK(id.find_first_not_of("0123456789abcdef") == std::string::npos);
      CHECK(id == make_run_id(node, process));
      ids.push_back(id);
    }
  std::sort(ids.begin(), ids.end());
  CHECK(std::adjacent_find(ids.begin(), ids.end()) == ids.end());
}

}  // namespace admit::redis::test
