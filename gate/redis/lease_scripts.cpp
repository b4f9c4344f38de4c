#include "gate/redis/lease_scripts.hpp"

#include <algorithm>
#include <cstring>
#include <limits>
#include <utility>

#include "gate/admit_assert.hpp"

#ifndef ADMITSIM_LUA_DIR
#error "ADMITSIM_LUA_DIR must name gate/redis/lua (set by gate/redis/CMakeLists.txt)"
#endif

namespace admit::redis {
namespace {

constexpr std::string_view fence_suffix = ":fence";
constexpr std::string_view queue_suffix = ":queue";
constexpr std::string_view seen_suffix = ":seen";
constexpr std::string_view ticket_suffix = ":ticket";

// A gate key plus a suffix, built on the stack: the scripts derive keys on
// every call and should not allocate to do it. Long keys fall back to the heap.
class derived_key {
 public:
  derived_key(std::string_view base, std::string_view suffix) : size_(base.size() + suffix.size()) {
    if (size_ <= inline_.size()) {
      std::memcpy(inline_.data(), base.data(), base.size());
      std::memcpy(inline_.data() + base.size(), suffix.data(), suffix.size());
      data_ = inline_.data();
    } else {
      heap_.reserve(size_);
      heap_.append(base).append(suffix);
      data_ = heap_.data();
    }
  }
  derived_key(const derived_key&) = delete;
  derived_key& operator=(const derived_key&) = delete;

  [[nodiscard]] std::string_view view() const noexcept { return {data_, size_}; }

 private:
  std::array<char, 128> inline_{};
  std::string heap_;
  const char* data_ = nullptr;
  std::size_t size_ = 0;
};

// A script argument as Lua sees it: a double, exact within +-2^53.
double lua_number(std::int64_t v) {
  ADMIT_ASSERT(v <= max_exact_number, "script numbers stay exact as Lua doubles");
  ADMIT_ASSERT(v >= -max_exact_number, "script numbers stay exact as Lua doubles");
  return static_cast<double>(v);
}

// What the scripts compute from TIME: seconds * 1000 + floor(micros / 1000).
double server_ms(std::int64_t server_now_us) {
  ADMIT_ASSERT(server_now_us >= 0, "the server clock counts from the Unix epoch");
  return lua_number(server_now_us / 1000);
}

constexpr score_bound from_zero{0.0, false};
constexpr score_bound from_minus_inf{-std::numeric_limits<double>::infinity(), false};
score_bound up_to(double value) { return score_bound{value, false}; }

// Runs a script body; a command error ends the script with that error and
// keeps whatever the body had already written, as Redis does.
template <typename Body>
script_reply guarded(Body&& body) {
  try {
    return body();
  } catch (const command_error& e) {
    return script_reply{0, e.what()};
  }
}

// The reap-count-grant core shared by seed, server_time, renewal and fencing
// (seed_acquire.lua, server_time_acquire.lua, fencing_acquire.lua).
// Returns whether the token was granted.
bool reap_and_grant(replica& r, std::string_view gate, std::string_view token, double now_ms,
                    std::int64_t lease_ms, std::int64_t limit, std::int64_t now_us) {
  r.zremrangebyscore(gate, from_zero, up_to(now_ms - lua_number(lease_ms)), now_us);
  if (r.zcard(gate, now_us) >= limit) return false;
  r.zadd(gate, now_ms, token, now_us);
  r.pexpire(gate, lease_ms, now_us);
  return true;
}

script_reply fair_acquire(replica& r, const acquire_args& a, std::int64_t now_us) {
  const derived_key queue(a.key, queue_suffix);
  const derived_key seen(a.key, seen_suffix);
  const derived_key ticket(a.key, ticket_suffix);
  const double now_ms = server_ms(now_us);
  const double lease_ms = lua_number(a.lease_ms);
  const double queue_timeout_ms = lua_number(a.queue_timeout_ms);

  r.zremrangebyscore(a.key, from_zero, up_to(now_ms - lease_ms), now_us);

  const auto stale =
      r.zrangebyscore(seen.view(), from_minus_inf, up_to(now_ms - queue_timeout_ms), now_us);
  for (const auto& waiter : stale) r.zrem(queue.view(), waiter.member, now_us);
  r.zremrangebyscore(seen.view(), from_minus_inf, up_to(now_ms - queue_timeout_ms), now_us);

  if (r.zscore(a.key, a.token, now_us)) {
    r.zadd(a.key, now_ms, a.token, now_us);
    r.pexpire(a.key, a.lease_ms, now_us);
    return script_reply{1, {}};
  }

  if (!r.zscore(queue.view(), a.token, now_us)) {
    const std::int64_t place = r.incr(ticket.view(), now_us);
    r.zadd(queue.view(), lua_number(place), a.token, now_us);
  }
  r.zadd(seen.view(), now_ms, a.token, now_us);

  const std::int64_t free = a.limit - r.zcard(a.key, now_us);
  const auto rank = r.zrank(queue.view(), a.token, now_us);
  ADMIT_ASSERT(rank.has_value(), "the caller has just joined the queue");
  if (*rank < free) {
    r.zrem(queue.view(), a.token, now_us);
    r.zrem(seen.view(), a.token, now_us);
    r.zadd(a.key, now_ms, a.token, now_us);
    r.pexpire(a.key, a.lease_ms, now_us);
    return script_reply{1, {}};
  }

  r.pexpire(queue.view(), a.queue_timeout_ms, now_us);
  r.pexpire(seen.view(), a.queue_timeout_ms, now_us);
  return script_reply{0, {}};
}

}  // namespace

std::string_view to_string(variant v) noexcept {
  switch (v) {
    case variant::seed:
      return "seed";
    case variant::server_time:
      return "server_time";
    case variant::renewal:
      return "renewal";
    case variant::fencing:
      return "fencing";
    case variant::fair:
      return "fair";
  }
  return "unknown";
}

std::optional<variant> parse_variant(std::string_view name) noexcept {
  for (const variant v : all_variants) {
    if (to_string(v) == name) return v;
  }
  return std::nullopt;
}

reply to_reply(const script_reply& r) {
  return r.ok() ? reply::from_integer(r.value) : reply::error(r.error);
}

script_reply run_acquire(replica& r, variant v, const acquire_args& a, std::int64_t now_us) {
  ADMIT_ASSERT(!a.key.empty(), "a gate has a key");
  static_cast<void>(lua_number(a.limit));
  return guarded([&]() -> script_reply {
    switch (v) {
      case variant::seed:
        return script_reply{
            reap_and_grant(r, a.key, a.token, lua_number(a.now_ms), a.lease_ms, a.limit, now_us) ? 1
                                                                                                : 0,
            {}};
      case variant::server_time:
      case variant::renewal:
        return script_reply{
            reap_and_grant(r, a.key, a.token, server_ms(now_us), a.lease_ms, a.limit, now_us) ? 1
                                                                                             : 0,
            {}};
      case variant::fencing: {
        if (!reap_and_grant(r, a.key, a.token, server_ms(now_us), a.lease_ms, a.limit, now_us)) {
          return script_reply{0, {}};
        }
        const derived_key fence(a.key, fence_suffix);
        return script_reply{r.incr(fence.view(), now_us), {}};
      }
      case variant::fair:
        return fair_acquire(r, a, now_us);
    }
    ADMIT_ASSERT(false, "every variant has an acquire");
    return script_reply{};
  });
}

script_reply run_release(replica& r, variant v, const release_args& a, std::int64_t now_us) {
  ADMIT_ASSERT(!a.key.empty(), "a gate has a key");
  return guarded([&]() -> script_reply {
    const std::int64_t held = r.zrem(a.key, a.token, now_us);
    if (v == variant::fair) {
      const derived_key queue(a.key, queue_suffix);
      const derived_key seen(a.key, seen_suffix);
      r.zrem(queue.view(), a.token, now_us);
      r.zrem(seen.view(), a.token, now_us);
    }
    return script_reply{held, {}};
  });
}

script_reply run_renew(replica& r, variant v, const renew_args& a, std::int64_t now_us) {
  ADMIT_ASSERT(has_renew(v), "only the renewal variant renews");
  ADMIT_ASSERT(!a.key.empty(), "a gate has a key");
  return guarded([&]() -> script_reply {
    const double now_ms = server_ms(now_us);
    r.zremrangebyscore(a.key, from_zero, up_to(now_ms - lua_number(a.lease_ms)), now_us);
    if (!r.zscore(a.key, a.token, now_us)) return script_reply{0, {}};
    zadd_options only_existing;
    only_existing.xx = true;
    r.zadd(a.key, now_ms, a.token, now_us, only_existing);
    r.pexpire(a.key, a.lease_ms, now_us);
    return script_reply{1, {}};
  });
}

lease_keys keys_for(std::string_view gate_key) {
  const std::string gate(gate_key);
  return lease_keys{gate, gate + std::string(fence_suffix), gate + std::string(queue_suffix),
                    gate + std::string(seen_suffix), gate + std::string(ticket_suffix)};
}

// --- Lua ------------------------------------------------------------------

std::string_view lua_file(variant v, script_op op) {
  switch (op) {
    case script_op::acquire:
      switch (v) {
        case variant::seed:
          return "seed_acquire.lua";
        case variant::server_time:
        case variant::renewal:
          return "server_time_acquire.lua";
        case variant::fencing:
          return "fencing_acquire.lua";
        case variant::fair:
          return "fair_acquire.lua";
      }
      break;
    case script_op::release:
      return v == variant::fair ? "fair_release.lua" : "release.lua";
    case script_op::renew:
      ADMIT_ASSERT(has_renew(v), "only the renewal variant renews");
      return "renew.lua";
  }
  ADMIT_ASSERT(false, "every variant and operation has a script");
  return {};
}

std::string_view lua_dir() noexcept { return ADMITSIM_LUA_DIR; }

std::string_view lua_source(variant v, script_op op) {
  const std::string_view file = lua_file(v, op);
  for (const embedded_lua& e : embedded_lua_files()) {
    if (e.file == file) return e.source;
  }
  ADMIT_ASSERT(false, "every script file is embedded (gate/redis/CMakeLists.txt lists them)");
  return {};
}

lua_call lua_acquire_call(variant v, const acquire_args& a) {
  const lease_keys k = keys_for(a.key);
  lua_call call;
  call.file = lua_file(v, script_op::acquire);
  call.keys.push_back(k.gate);
  switch (v) {
    case variant::seed:
      call.argv = {std::to_string(a.now_ms), std::to_string(a.lease_ms), std::to_string(a.limit),
                   std::string(a.token)};
      break;
    case variant::server_time:
    case variant::renewal:
      call.argv = {std::to_string(a.lease_ms), std::to_string(a.limit), std::string(a.token)};
      break;
    case variant::fencing:
      call.keys.push_back(k.fence);
      call.argv = {std::to_string(a.lease_ms), std::to_string(a.limit), std::string(a.token)};
      break;
    case variant::fair:
      call.keys.push_back(k.queue);
      call.keys.push_back(k.seen);
      call.keys.push_back(k.ticket);
      call.argv = {std::to_string(a.lease_ms), std::to_string(a.limit), std::string(a.token),
                   std::to_string(a.queue_timeout_ms)};
      break;
  }
  return call;
}

lua_call lua_release_call(variant v, const release_args& a) {
  const lease_keys k = keys_for(a.key);
  lua_call call;
  call.file = lua_file(v, script_op::release);
  call.keys.push_back(k.gate);
  if (v == variant::fair) {
    call.keys.push_back(k.queue);
    call.keys.push_back(k.seen);
  }
  call.argv = {std::string(a.token)};
  return call;
}

lua_call lua_renew_call(variant v, const renew_args& a) {
  lua_call call;
  call.file = lua_file(v, script_op::renew);
  call.keys.push_back(std::string(a.key));
  call.argv = {std::to_string(a.lease_ms), std::string(a.token)};
  return call;
}

}  // namespace admit::redis
