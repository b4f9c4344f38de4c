#include "sim/world/lease/mutant_protocol.hpp"

#include <memory>
#include <string>

#include "gate/admit_assert.hpp"
#include "gate/redis/sha1.hpp"
#include "sim/scenario/builtin_protocols.hpp"

namespace admit::world::lease {

namespace {

// ARGV[1] is the caller's now in ms, or "" for the server's clock.
constexpr const char* now_lines = R"lua(local now_ms = tonumber(ARGV[1])
if not now_ms then
  local t = redis.call('TIME')
  now_ms = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
local lease_ms = tonumber(ARGV[2])
local limit = tonumber(ARGV[3])
local token = ARGV[4]
)lua";

constexpr const char* no_reaping_body = R"lua(if redis.call('ZCARD', KEYS[1]) >= limit then
  return 0
end
redis.call('ZADD', KEYS[1], now_ms, token)
redis.call('PEXPIRE', KEYS[1], lease_ms)
return 1
)lua";

constexpr const char* check_then_add_body = R"lua(redis.call('ZREMRANGEBYSCORE', KEYS[1], 0, now_ms - lease_ms)
if redis.call('ZCARD', KEYS[1]) < limit then
  return 1
end
return 0
)lua";

redis::arg_template tmpl(const char* text) {
  std::string why;
  const auto t = redis::arg_template::parse(text, why);
  ADMIT_ASSERT(t.has_value(), "the mutant's templates parse");
  return *t;
}

}  // namespace

scenario::protocol_ref mutant_protocol(redis::variant v, scenario::world_mutation mut) {
  ADMIT_ASSERT(breaks_acquire(mut), "a mutant that breaks the acquire");
  const scenario::protocol_ref& builtin = scenario::builtin_protocol(v);
  auto p = std::make_shared<redis::protocol>(*builtin.proto);
  const bool no_reaping = mut == scenario::world_mutation::no_reaping;
  redis::protocol_script s;
  s.name = no_reaping ? "no_reaping_acquire" : "check_then_add_count";
  s.origin = std::string("mutation ") + (no_reaping ? "no_reaping" : "check_then_add");
  s.source = std::string("-- Broken on purpose (") + s.origin + ", docs/mutants.md).\n" + now_lines +
             (no_reaping ? no_reaping_body : check_then_add_body);
  s.sha = redis::sha1_hex(s.source);
  p->scripts.push_back(std::move(s));
  redis::protocol_call acquire;
  acquire.script = p->scripts.size() - 1;
  acquire.keys = {tmpl("{key}")};
  const bool callers_clock = builtin.proto->acquire.uses(redis::placeholder::now_ms);
  acquire.args = {tmpl(callers_clock ? "{now_ms}" : ""), tmpl("{lease_ms}"), tmpl("{limit}"), tmpl("{token}")};
  acquire.rule = redis::reply_read{};
  p->acquire = std::move(acquire);
  scenario::protocol_ref ref;
  ref.proto = std::move(p);
  ref.source_json = builtin.source_json;  // the scenario names the variant: a written-back scenario does too
  return ref;
}

}  // namespace admit::world::lease
