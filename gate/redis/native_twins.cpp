#include "gate/redis/native_twins.hpp"

#include <array>
#include <charconv>
#include <limits>
#include <vector>

#include "gate/admit_assert.hpp"
#include "gate/redis/replica.hpp"
#include "gate/redis/sha1.hpp"

namespace admit::redis {

namespace {

struct twin_entry {
  std::string sha;
  native_twin twin;
};

// One variant per file: the differential test holds every variant's body to the file it runs, so
// for a file several variants share (release.lua, server_time_acquire.lua) any of them will do.
std::vector<twin_entry> make_table() {
  constexpr std::array<native_twin, 7> twins{{{variant::seed, script_op::acquire},
                                              {variant::server_time, script_op::acquire},
                                              {variant::fencing, script_op::acquire},
                                              {variant::fair, script_op::acquire},
                                              {variant::seed, script_op::release},
                                              {variant::fair, script_op::release},
                                              {variant::renewal, script_op::renew}}};
  std::vector<twin_entry> table;
  for (const native_twin& t : twins) table.push_back({sha1_hex(lua_source(t.v, t.op)), t});
  ADMIT_ASSERT(table.size() == embedded_lua_files().size(), "every shipped Lua file has its twin");
  return table;
}

// A number ARGV carries: canonical decimal (what std::to_string gives) from 0 to 2^53.
std::optional<std::int64_t> script_number(const std::string& text) {
  std::int64_t v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc{} || end != text.data() + text.size()) return std::nullopt;
  if (v < 0 || v > max_exact_number || std::to_string(v) != text) return std::nullopt;
  return v;
}

// KEYS as lua_*_call gives them for the gate KEYS[1]: the gate, then the keys derived from it by the
// suffixes keys_for adds (read off keys_for("") once). No string is made: this runs before every
// twin call.
bool keys_as_derived(native_twin t, std::span<const std::string> keys) {
  static const lease_keys k = keys_for("");
  std::array<std::string_view, 3> suffixes{};
  std::size_t derived = 0;
  if (t.v == variant::fencing && t.op == script_op::acquire) {
    suffixes = {k.fence};
    derived = 1;
  } else if (t.v == variant::fair && t.op == script_op::acquire) {
    suffixes = {k.queue, k.seen, k.ticket};
    derived = 3;
  } else if (t.v == variant::fair && t.op == script_op::release) {
    suffixes = {k.queue, k.seen};
    derived = 2;
  }
  if (keys.size() != derived + 1) return false;
  const std::string_view gate = keys.front();
  for (std::size_t i = 0; i < derived; ++i) {
    const std::string_view key = keys[i + 1];
    if (key.size() != gate.size() + suffixes[i].size() || !key.starts_with(gate) || !key.ends_with(suffixes[i]))
      return false;
  }
  return true;
}

// Whether `key` is live at `now_us` at all (of any type).
bool live(const replica& r, std::string_view key, std::int64_t now_us) {
  return r.peek<sorted_set>(key, now_us) != nullptr || r.peek<hash_value>(key, now_us) != nullptr ||
         r.peek<std::string>(key, now_us) != nullptr;
}

// Missing, or a sorted set of at most `members_max` members.
bool set_or_nothing(const replica& r, std::string_view key, std::int64_t now_us,
                    std::int64_t members_max = std::numeric_limits<std::int64_t>::max()) {
  if (const sorted_set* s = r.peek<sorted_set>(key, now_us)) return static_cast<std::int64_t>(s->size()) <= members_max;
  return !live(r, key, now_us);
}

// Missing, or a counter INCR can add one to whose next value is exact as a Lua double.
bool counter_or_nothing(const replica& r, std::string_view key, std::int64_t now_us) {
  if (const std::string* text = r.peek<std::string>(key, now_us)) {
    std::int64_t v = 0;
    const auto [end, ec] = std::from_chars(text->data(), text->data() + text->size(), v);
    return ec == std::errc{} && end == text->data() + text->size() && std::to_string(v) == *text &&
           v >= 0 && v < max_exact_number;
  }
  return !live(r, key, now_us);
}

// Every key holds what the script uses (`keys` as keys_as_derived checked them).
bool keys_fit(const replica& r, native_twin t, std::span<const std::string> keys, std::int64_t now_us) {
  if (!set_or_nothing(r, keys[0], now_us)) return false;
  if (t.v == variant::fencing && t.op == script_op::acquire) return counter_or_nothing(r, keys[1], now_us);
  if (t.v != variant::fair) return true;
  if (!set_or_nothing(r, keys[1], now_us) || !set_or_nothing(r, keys[2], now_us, native_set_members_max)) return false;
  return t.op != script_op::acquire || counter_or_nothing(r, keys[3], now_us);
}

}  // namespace

std::optional<native_twin> native_twin_of(std::string_view sha) {
  static const std::vector<twin_entry> table = make_table();
  for (const twin_entry& e : table)
    if (e.sha == sha) return e.twin;
  return std::nullopt;
}

std::optional<reply> run_native_twin(replica& data, native_twin twin, std::span<const std::string> keys,
                                     std::span<const std::string> args, std::int64_t server_now_us) {
  if (keys.empty() || keys.front().empty()) return std::nullopt;
  if (server_now_us < 0 || server_now_us / 1000 > max_exact_number) return std::nullopt;
  const std::string& gate = keys.front();
  std::optional<script_reply> out;
  switch (twin.op) {
    case script_op::acquire: {
      // The numbers' places in ARGV: seed_acquire.lua (now, lease, limit, token), the others
      // (lease, limit, token[, queue timeout]), as lua_acquire_call lays them out.
      const bool seed = twin.v == variant::seed;
      const std::size_t first = seed ? 1 : 0;
      if (args.size() < first + 3) return std::nullopt;
      acquire_args a;
      a.key = gate;
      const auto lease = script_number(args[first]);
      const auto limit = script_number(args[first + 1]);
      if (!lease || !limit) return std::nullopt;
      a.lease_ms = *lease;
      a.limit = *limit;
      a.token = args[first + 2];
      if (seed) {
        const auto now = script_number(args[0]);
        if (!now) return std::nullopt;
        a.now_ms = *now;
      }
      if (twin.v == variant::fair) {
        if (args.size() < 4) return std::nullopt;
        const auto queue_timeout = script_number(args[3]);
        if (!queue_timeout) return std::nullopt;
        a.queue_timeout_ms = *queue_timeout;
      }
      if (args.size() != (seed || twin.v == variant::fair ? 4u : 3u)) return std::nullopt;
      if (!keys_as_derived(twin, keys) || !keys_fit(data, twin, keys, server_now_us)) return std::nullopt;
      out = run_acquire(data, twin.v, a, server_now_us);
      break;
    }
    case script_op::release: {
      if (args.size() != 1) return std::nullopt;
      const release_args a{gate, args[0]};
      if (!keys_as_derived(twin, keys) || !keys_fit(data, twin, keys, server_now_us)) return std::nullopt;
      out = run_release(data, twin.v, a, server_now_us);
      break;
    }
    case script_op::renew: {
      if (args.size() != 2) return std::nullopt;
      const auto lease = script_number(args[0]);
      if (!lease) return std::nullopt;
      const renew_args a{gate, args[1], *lease};
      if (!keys_as_derived(twin, keys) || !keys_fit(data, twin, keys, server_now_us)) return std::nullopt;
      out = run_renew(data, twin.v, a, server_now_us);
      break;
    }
  }
  ADMIT_ASSERT(out.has_value(), "every operation runs its twin or returned before");
  // The keys held what the script uses, so no command inside it answered an error; were one to,
  // its text is passed on (the Lua's would add the script's line).
  return to_reply(*out);
}

}  // namespace admit::redis
