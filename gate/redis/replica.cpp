#include "gate/redis/replica.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <initializer_list>
#include <limits>
#include <utility>

#include "gate/admit_assert.hpp"
#include "gate/probe.hpp"
#include "gate/redis/ascii_case.hpp"
#include "gate/redis/write_effects.hpp"

namespace admit::redis {
namespace {

// Redis 7.0's error texts, word for word.
constexpr std::string_view wrongtype_text =
    "WRONGTYPE Operation against a key holding the wrong kind of value";
constexpr std::string_view not_integer_text = "ERR value is not an integer or out of range";
constexpr std::string_view not_float_text = "ERR value is not a valid float";
constexpr std::string_view syntax_error_text = "ERR syntax error";
constexpr std::string_view range_not_float_text = "ERR min or max is not a float";

constexpr std::int64_t int64_max = std::numeric_limits<std::int64_t>::max();

std::int64_t to_ms(std::int64_t server_now_us) {
  ADMIT_ASSERT(server_now_us >= 0, "the server clock counts from the Unix epoch");
  return server_now_us / 1000;
}

bool expired(const std::optional<std::int64_t>& expire_at_ms, std::int64_t now_ms) {
  return expire_at_ms.has_value() && now_ms > *expire_at_ms;
}


// Redis's string2ll: an optional '-', no '+', no spaces, no leading zeros,
// "0" but not "-0", at most 20 characters, no overflow.
std::optional<std::int64_t> parse_int64(std::string_view s) {
  if (s.empty() || s.size() >= 21) return std::nullopt;
  if (s.size() == 1 && s[0] == '0') return 0;
  std::size_t i = 0;
  const bool negative = s[0] == '-';
  if (negative) {
    ++i;
    if (i == s.size()) return std::nullopt;
  }
  if (s[i] < '1' || s[i] > '9') return std::nullopt;
  unsigned long long v = static_cast<unsigned long long>(s[i] - '0');
  ++i;
  constexpr unsigned long long ull_max = std::numeric_limits<unsigned long long>::max();
  for (; i < s.size(); ++i) {
    if (s[i] < '0' || s[i] > '9') return std::nullopt;
    const auto digit = static_cast<unsigned long long>(s[i] - '0');
    if (v > ull_max / 10) return std::nullopt;
    v *= 10;
    if (v > ull_max - digit) return std::nullopt;
    v += digit;
  }
  if (negative) {
    if (v > static_cast<unsigned long long>(int64_max) + 1ULL) return std::nullopt;
    return static_cast<std::int64_t>(0ULL - v);
  }
  if (v > static_cast<unsigned long long>(int64_max)) return std::nullopt;
  return static_cast<std::int64_t>(v);
}

// A score or bound the scripts send most: an optional '-' and 1 to 15
// decimal digits, nothing else. Below 10^15 < 2^53 such an integer is a
// double exactly, so strtod would give this very value ("-0" gives -0.0,
// as strtod does); anything else goes to strtod.
std::optional<double> plain_decimal(std::string_view text) {
  std::size_t i = 0;
  const bool negative = !text.empty() && text[0] == '-';
  if (negative) i = 1;
  const std::size_t digits = text.size() - i;
  if (digits == 0 || digits > 15) return std::nullopt;
  std::int64_t v = 0;
  for (; i < text.size(); ++i) {
    if (text[i] < '0' || text[i] > '9') return std::nullopt;
    v = v * 10 + (text[i] - '0');
  }
  return negative ? -static_cast<double>(v) : static_cast<double>(v);
}

// Redis's getDoubleFromObject, as ZADD parses a score: strtod over the whole
// argument, no leading space, no NaN, no overflow or underflow to zero.
std::optional<double> parse_score(std::string_view text) {
  if (text.empty()) return std::nullopt;
  if (text[0] == ' ' || (text[0] >= '\t' && text[0] <= '\r')) return std::nullopt;
  if (const auto plain = plain_decimal(text)) return plain;
  const std::string s(text);  // strtod needs the terminating NUL
  errno = 0;
  char* end = nullptr;
  const double value = std::strtod(s.c_str(), &end);
  if (static_cast<std::size_t>(end - s.c_str()) != s.size()) return std::nullopt;
  if (errno == ERANGE &&
      (value == HUGE_VAL || value == -HUGE_VAL || std::fpclassify(value) == FP_ZERO)) {
    return std::nullopt;
  }
  if (std::isnan(value)) return std::nullopt;
  return value;
}

// One end of zslParseRange: "(" makes the end exclusive; the rest goes to
// strtod, which must stop at the terminating NUL (so "" reads as 0, as in Redis).
std::optional<score_bound> parse_bound(std::string_view text) {
  {
    const bool exclusive = !text.empty() && text[0] == '(';
    if (const auto plain = plain_decimal(exclusive ? text.substr(1) : text)) return score_bound{*plain, exclusive};
  }
  const std::string s(text);  // strtod needs the terminating NUL
  score_bound bound;
  const char* start = s.c_str();
  if (!s.empty() && s[0] == '(') {
    bound.exclusive = true;
    ++start;
  }
  char* end = nullptr;
  bound.value = std::strtod(start, &end);
  if (*end != '\0' || std::isnan(bound.value)) return std::nullopt;
  return bound;
}

reply integer_reply(std::int64_t v) { return reply::from_integer(v); }
reply error_reply(std::string_view text) { return reply::error(std::string(text)); }

// A score or bound as a command argument that parse_score / parse_bound read back to the same
// double: its 17 significant digits (std::to_chars, so no locale can change it), "inf" or "-inf".
std::string number_text(double v) {
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  ADMIT_ASSERT(!std::isnan(v), "no score or bound is NaN");
  std::array<char, 64> buf{};
  const auto [end, ec] = std::to_chars(buf.data(), buf.data() + buf.size(), v, std::chars_format::general, 17);
  ADMIT_ASSERT(ec == std::errc{}, "a double fits in 64 characters");
  return std::string(buf.data(), end);
}

std::string arity_error(std::string_view name) {
  return "ERR wrong number of arguments for '" + std::string(name) + "' command";
}

}  // namespace

std::string format_score(double score) {
  if (std::isinf(score)) return score > 0 ? "inf" : "-inf";
  std::array<char, 64> buf{};
  const int n = std::snprintf(buf.data(), buf.size(), "%.17g", score);
  ADMIT_ASSERT(n > 0, "a double always formats");
  ADMIT_ASSERT(static_cast<std::size_t>(n) < buf.size(), "%.17g fits in 64 characters");
  return std::string(buf.data(), static_cast<std::size_t>(n));
}

// ---------------------------------------------------------------------------
// Keyspace access

replica::keyspace::iterator replica::find_live_entry(std::string_view key, std::int64_t server_now_us) {
  const auto it = keys_.find(key);
  if (it == keys_.end()) return it;
  if (expired(it->second.expire_at_ms, to_ms(server_now_us))) {
    ADMIT_PROBE(replica_key_expired_on_read);
    keys_.erase(it);
    return keys_.end();
  }
  return it;
}

replica::stored_value* replica::find_live(std::string_view key, std::int64_t server_now_us) {
  const auto it = find_live_entry(key, server_now_us);
  return it == keys_.end() ? nullptr : &it->second;
}

const sorted_set* replica::expired_zset(std::string_view key, std::int64_t server_now_us) const {
  const auto it = keys_.find(key);
  if (it == keys_.end() || !expired(it->second.expire_at_ms, to_ms(server_now_us))) return nullptr;
  return std::get_if<sorted_set>(&it->second.data);
}

const sorted_set* replica::peek_zset(std::string_view key, std::int64_t server_now_us,
                                    std::int64_t* deadline_ms) const {
  const auto it = keys_.find(key);
  if (it == keys_.end() || expired(it->second.expire_at_ms, to_ms(server_now_us))) return nullptr;
  if (deadline_ms != nullptr) *deadline_ms = it->second.expire_at_ms.value_or(-1);
  return std::get_if<sorted_set>(&it->second.data);
}

template <class T>
const T* replica::peek(std::string_view key, std::int64_t server_now_us, std::int64_t* deadline_ms) const {
  const auto it = keys_.find(key);
  if (it == keys_.end() || expired(it->second.expire_at_ms, to_ms(server_now_us))) return nullptr;
  if (deadline_ms != nullptr) *deadline_ms = it->second.expire_at_ms.value_or(-1);
  return std::get_if<T>(&it->second.data);
}

template <class T>
const T* replica::peek_expired(std::string_view key, std::int64_t server_now_us) const {
  const auto it = keys_.find(key);
  if (it == keys_.end() || !expired(it->second.expire_at_ms, to_ms(server_now_us))) return nullptr;
  return std::get_if<T>(&it->second.data);
}

template const sorted_set* replica::peek<sorted_set>(std::string_view, std::int64_t, std::int64_t*) const;
template const hash_value* replica::peek<hash_value>(std::string_view, std::int64_t, std::int64_t*) const;
template const std::string* replica::peek<std::string>(std::string_view, std::int64_t, std::int64_t*) const;
template const sorted_set* replica::peek_expired<sorted_set>(std::string_view, std::int64_t) const;
template const hash_value* replica::peek_expired<hash_value>(std::string_view, std::int64_t) const;

template <detail::collection_value T>
T* replica::find_value(std::string_view key, std::int64_t server_now_us) {
  stored_value* v = find_live(key, server_now_us);
  if (v == nullptr) return nullptr;
  auto* value = std::get_if<T>(&v->data);
  if (value == nullptr) {
    ADMIT_PROBE(replica_wrong_type);
    throw command_error(std::string(wrongtype_text));
  }
  return value;
}

template <detail::collection_value T>
T& replica::value_for_write(std::string_view key, std::int64_t server_now_us) {
  if (T* value = find_value<T>(key, server_now_us)) return *value;
  auto [it, inserted] = keys_.emplace(std::string(key), stored_value{T{}, std::nullopt});
  ADMIT_ASSERT(inserted, "a missing key is inserted");
  return std::get<T>(it->second.data);
}

template <detail::collection_value T>
void replica::drop_if_empty(std::string_view key, const T& value) {
  if (!value.empty()) return;
  const auto it = keys_.find(key);
  ADMIT_ASSERT(it != keys_.end(), "the emptied sorted set or hash belongs to a stored key");
  keys_.erase(it);
}

// ---------------------------------------------------------------------------
// Typed commands

namespace {

// What zsetAdd did to one member. `unchanged` (same score) still counts as
// processed for ZADD INCR's reply; `nop` (an option refused it) does not.
enum class zadd_effect : std::uint8_t { added, updated, unchanged, nop };

// Redis's zsetAdd for one member. `score` is the new score, or the increment
// when `incr`; on return `score` holds the member's resulting score. Returns
// nullopt when an increment makes the score NaN.
std::optional<zadd_effect> zset_add(sorted_set& set, double& score, std::string_view member,
                                    const zadd_options& o, bool incr) {
  ADMIT_ASSERT(!std::isnan(score), "scores are checked for NaN when parsed");
  if (const auto current = set.score(member)) {
    if (o.nx) return zadd_effect::nop;
    if (incr) {
      score += *current;
      if (std::isnan(score)) return std::nullopt;
    }
    if ((o.lt && score >= *current) || (o.gt && score <= *current)) return zadd_effect::nop;
    if (score != *current) {
      set.insert_or_assign(score, member);
      return zadd_effect::updated;
    }
    return zadd_effect::unchanged;
  }
  if (o.xx) return zadd_effect::nop;
  set.insert_or_assign(score, member);
  return zadd_effect::added;
}

void check_zadd_options(const zadd_options& o) {
  ADMIT_ASSERT(!(o.nx && o.xx), "ZADD NX and XX exclude each other");
  ADMIT_ASSERT(!(o.nx && (o.gt || o.lt)), "ZADD NX excludes GT and LT");
  ADMIT_ASSERT(!(o.gt && o.lt), "ZADD GT and LT exclude each other");
}

}  // namespace

std::int64_t replica::zadd(std::string_view key, double score, std::string_view member,
                           std::int64_t server_now_us, zadd_options options) {
  check_zadd_options(options);
  ADMIT_ASSERT(!std::isnan(score), "Redis refuses NaN scores");
  if (options.xx && find_value<sorted_set>(key, server_now_us) == nullptr) return 0;
  sorted_set& set = value_for_write<sorted_set>(key, server_now_us);
  const auto effect = zset_add(set, score, member, options, false);
  ADMIT_ASSERT(effect.has_value(), "only an increment can produce NaN");
  if (typed_effects_ != nullptr) {
    const std::string text = number_text(score);
    std::vector<std::string_view> argv{"ZADD", key};
    for (const auto& [on, name] : {std::pair{options.nx, "NX"}, std::pair{options.xx, "XX"}, std::pair{options.gt, "GT"},
                                   std::pair{options.lt, "LT"}, std::pair{options.ch, "CH"}})
      if (on) argv.emplace_back(name);
    argv.emplace_back(text);
    argv.emplace_back(member);
    typed_effects_->add(argv);
  }
  if (*effect == zadd_effect::added) return 1;
  if (*effect == zadd_effect::updated && options.ch) return 1;
  return 0;
}

std::int64_t replica::zrem(std::string_view key, std::string_view member,
                           std::int64_t server_now_us) {
  sorted_set* set = find_value<sorted_set>(key, server_now_us);
  if (set == nullptr) return 0;
  const bool removed = set->erase(member);
  drop_if_empty(key, *set);
  note_write({"ZREM", key, member});
  return removed ? 1 : 0;
}

std::int64_t replica::zcard(std::string_view key, std::int64_t server_now_us) {
  const sorted_set* set = find_value<sorted_set>(key, server_now_us);
  return set == nullptr ? 0 : static_cast<std::int64_t>(set->size());
}

std::optional<double> replica::zscore(std::string_view key, std::string_view member,
                                      std::int64_t server_now_us) {
  const sorted_set* set = find_value<sorted_set>(key, server_now_us);
  if (set == nullptr) return std::nullopt;
  return set->score(member);
}

std::optional<std::int64_t> replica::zrank(std::string_view key, std::string_view member,
                                           std::int64_t server_now_us) {
  const sorted_set* set = find_value<sorted_set>(key, server_now_us);
  if (set == nullptr) return std::nullopt;
  const auto rank = set->rank(member);
  if (!rank) return std::nullopt;
  return static_cast<std::int64_t>(*rank);
}

std::int64_t replica::zremrangebyscore(std::string_view key, score_bound min, score_bound max,
                                       std::int64_t server_now_us) {
  sorted_set* set = find_value<sorted_set>(key, server_now_us);
  if (set == nullptr) return 0;
  const std::size_t removed = set->erase_score_range(min, max);
  if (removed != 0) ADMIT_PROBE(replica_range_removed);
  drop_if_empty(key, *set);
  if (typed_effects_ != nullptr) {
    const std::string from = (min.exclusive ? "(" : "") + number_text(min.value);
    const std::string to = (max.exclusive ? "(" : "") + number_text(max.value);
    note_write({"ZREMRANGEBYSCORE", key, from, to});
  }
  return static_cast<std::int64_t>(removed);
}

std::int64_t replica::zremrangebyrank(std::string_view key, std::int64_t start, std::int64_t stop,
                                      std::int64_t server_now_us) {
  sorted_set* set = find_value<sorted_set>(key, server_now_us);
  if (set == nullptr) return 0;
  // Redis's index sanitising, step by step.
  const auto length = static_cast<std::int64_t>(set->size());
  if (start < 0) start += length;
  if (stop < 0) stop += length;
  if (start < 0) start = 0;
  if (start > stop || start >= length) return 0;
  if (stop >= length) stop = length - 1;
  set->erase_rank_range(static_cast<std::size_t>(start), static_cast<std::size_t>(stop) + 1);
  drop_if_empty(key, *set);
  return stop - start + 1;
}

std::int64_t replica::zcount(std::string_view key, score_bound min, score_bound max,
                             std::int64_t server_now_us) {
  const sorted_set* set = find_value<sorted_set>(key, server_now_us);
  if (set == nullptr) return 0;
  const auto [first, last] = set->score_range(min, max);
  return static_cast<std::int64_t>(last - first);
}

double replica::zincrby(std::string_view key, double increment, std::string_view member,
                        std::int64_t server_now_us) {
  ADMIT_ASSERT(!std::isnan(increment), "Redis refuses a NaN increment");
  sorted_set& set = value_for_write<sorted_set>(key, server_now_us);
  double score = increment;
  const auto effect = zset_add(set, score, member, zadd_options{}, true);
  if (!effect) {
    drop_if_empty(key, set);
    throw command_error("ERR resulting score is not a number (NaN)");
  }
  return score;
}

const sorted_set* replica::zset_view(std::string_view key, std::int64_t server_now_us) {
  return find_value<sorted_set>(key, server_now_us);
}

std::vector<sorted_set::entry> replica::zrangebyscore(std::string_view key, score_bound min,
                                                      score_bound max,
                                                      std::int64_t server_now_us) {
  const sorted_set* set = find_value<sorted_set>(key, server_now_us);
  if (set == nullptr) return {};
  const auto [first, last] = set->score_range(min, max);
  const auto entries = set->entries();
  return {entries.begin() + static_cast<std::ptrdiff_t>(first),
          entries.begin() + static_cast<std::ptrdiff_t>(last)};
}

std::int64_t replica::pexpire(std::string_view key, std::int64_t ttl_ms,
                              std::int64_t server_now_us) {
  const std::int64_t now_ms = to_ms(server_now_us);
  if (ttl_ms > int64_max - now_ms) {
    throw command_error("ERR invalid expire time in 'pexpire' command");
  }
  const std::int64_t deadline_ms = now_ms + ttl_ms;
  const auto it = find_live_entry(key, server_now_us);
  if (typed_effects_ != nullptr) note_write({"PEXPIRE", key, std::to_string(ttl_ms)});
  if (it == keys_.end()) return 0;
  if (deadline_ms <= now_ms) {
    keys_.erase(it);  // Redis deletes a key whose new deadline has already passed
  } else {
    it->second.expire_at_ms = deadline_ms;
  }
  return 1;
}

std::int64_t replica::pttl(std::string_view key, std::int64_t server_now_us) {
  const stored_value* v = find_live(key, server_now_us);
  if (v == nullptr) return -2;
  if (!v->expire_at_ms) return -1;
  return std::max<std::int64_t>(0, *v->expire_at_ms - to_ms(server_now_us));
}

std::int64_t replica::pexpiretime(std::string_view key, std::int64_t server_now_us) {
  const stored_value* v = find_live(key, server_now_us);
  if (v == nullptr) return -2;
  return v->expire_at_ms.value_or(-1);
}

std::int64_t replica::del(std::string_view key, std::int64_t server_now_us) {
  const auto it = find_live_entry(key, server_now_us);
  if (it == keys_.end()) return 0;
  keys_.erase(it);
  return 1;
}

bool replica::exists(std::string_view key, std::int64_t server_now_us) {
  return find_live(key, server_now_us) != nullptr;
}

std::int64_t replica::persist(std::string_view key, std::int64_t server_now_us) {
  stored_value* v = find_live(key, server_now_us);
  if (v == nullptr || !v->expire_at_ms) return 0;
  v->expire_at_ms.reset();
  return 1;
}

namespace {

// Redis's overflow test for INCRBY, DECRBY and HINCRBY.
bool sum_overflows(std::int64_t value, std::int64_t increment) {
  constexpr std::int64_t int64_min = std::numeric_limits<std::int64_t>::min();
  return (increment < 0 && value < 0 && increment < int64_min - value) ||
         (increment > 0 && value > 0 && increment > int64_max - value);
}

}  // namespace

std::int64_t replica::incr(std::string_view key, std::int64_t server_now_us) {
  return incrby(key, 1, server_now_us);
}

std::int64_t replica::incrby(std::string_view key, std::int64_t increment,
                             std::int64_t server_now_us) {
  stored_value* v = find_live(key, server_now_us);
  std::int64_t value = 0;
  if (v != nullptr) {
    const auto* text = std::get_if<std::string>(&v->data);
    if (text == nullptr) {
    ADMIT_PROBE(replica_wrong_type);
    throw command_error(std::string(wrongtype_text));
  }
    const auto parsed = parse_int64(*text);
    if (!parsed) throw command_error(std::string(not_integer_text));
    value = *parsed;
  }
  if (sum_overflows(value, increment)) {
    throw command_error("ERR increment or decrement would overflow");
  }
  value += increment;
  if (v != nullptr) {
    v->data = std::to_string(value);  // INCR keeps the key's deadline
  } else {
    keys_.emplace(std::string(key), stored_value{std::to_string(value), std::nullopt});
  }
  if (typed_effects_ != nullptr) note_write({"INCRBY", key, std::to_string(increment)});
  return value;
}

std::optional<std::string> replica::get(std::string_view key, std::int64_t server_now_us) {
  const stored_value* v = find_live(key, server_now_us);
  if (v == nullptr) return std::nullopt;
  const auto* text = std::get_if<std::string>(&v->data);
  if (text == nullptr) {
    ADMIT_PROBE(replica_wrong_type);
    throw command_error(std::string(wrongtype_text));
  }
  return *text;
}

void replica::set(std::string_view key, std::string_view value, std::int64_t server_now_us) {
  if (stored_value* v = find_live(key, server_now_us)) {
    v->data = std::string(value);
    v->expire_at_ms.reset();
    return;
  }
  keys_.emplace(std::string(key), stored_value{std::string(value), std::nullopt});
}

std::int64_t replica::hset(std::string_view key, std::string_view field, std::string_view value,
                           std::int64_t server_now_us) {
  return value_for_write<hash_value>(key, server_now_us).set(field, value) ? 1 : 0;
}

std::optional<std::string> replica::hget(std::string_view key, std::string_view field,
                                         std::int64_t server_now_us) {
  const hash_value* hash = find_value<hash_value>(key, server_now_us);
  if (hash == nullptr) return std::nullopt;
  const std::string* value = hash->get(field);
  if (value == nullptr) return std::nullopt;
  return *value;
}

std::int64_t replica::hdel(std::string_view key, std::string_view field,
                           std::int64_t server_now_us) {
  hash_value* hash = find_value<hash_value>(key, server_now_us);
  if (hash == nullptr) return 0;
  const bool removed = hash->erase(field);
  drop_if_empty(key, *hash);
  return removed ? 1 : 0;
}

std::int64_t replica::hincrby(std::string_view key, std::string_view field,
                              std::int64_t increment, std::int64_t server_now_us) {
  hash_value& hash = value_for_write<hash_value>(key, server_now_us);
  std::int64_t value = 0;
  if (const std::string* current = hash.get(field)) {
    const auto parsed = parse_int64(*current);
    if (!parsed) throw command_error("ERR hash value is not an integer");
    value = *parsed;
  }
  // The hash is not empty here unless it was just created for a new field,
  // and a new field (0 + increment) cannot overflow.
  if (sum_overflows(value, increment)) {
    throw command_error("ERR increment or decrement would overflow");
  }
  value += increment;
  hash.set(field, std::to_string(value));
  return value;
}

std::int64_t replica::hlen(std::string_view key, std::int64_t server_now_us) {
  const hash_value* hash = find_value<hash_value>(key, server_now_us);
  return hash == nullptr ? 0 : static_cast<std::int64_t>(hash->size());
}

const hash_value* replica::hash_view(std::string_view key, std::int64_t server_now_us) {
  return find_value<hash_value>(key, server_now_us);
}

// ---------------------------------------------------------------------------
// Whole keyspace

std::size_t replica::expire_due(std::int64_t server_now_us) {
  const std::int64_t now_ms = to_ms(server_now_us);
  return std::erase_if(keys_, [&](const auto& kv) { return expired(kv.second.expire_at_ms, now_ms); });
}

std::vector<key_dump> replica::dump_keys(std::int64_t server_now_us) const {
  const std::int64_t now_ms = to_ms(server_now_us);
  std::vector<key_dump> out;
  out.reserve(keys_.size());
  for (const auto& [key, v] : keys_) {
    if (expired(v.expire_at_ms, now_ms)) continue;
    key_dump d;
    d.key = key;
    d.expire_at_ms = v.expire_at_ms;
    if (const auto* set = std::get_if<sorted_set>(&v.data)) {
      d.type = value_type::zset;
      d.members.assign(set->entries().begin(), set->entries().end());
    } else if (const auto* hash = std::get_if<hash_value>(&v.data)) {
      d.type = value_type::hash;
      d.fields.assign(hash->fields().begin(), hash->fields().end());
    } else {
      d.type = value_type::string;
      d.value = std::get<std::string>(v.data);
    }
    out.push_back(std::move(d));
  }
  return out;
}

std::string replica::dump(std::int64_t server_now_us) const {
  return render_dump(dump_keys(server_now_us));
}

void replica::restore(std::span<const key_dump> keys) {
  keys_.clear();
  for (const key_dump& d : keys) {
    stored_value v;
    v.expire_at_ms = d.expire_at_ms;
    if (d.type == value_type::zset) {
      ADMIT_ASSERT(!d.members.empty(), "Redis never stores an empty sorted set");
      sorted_set set;
      for (const auto& e : d.members) set.insert_or_assign(e.score, e.member);
      v.data = std::move(set);
    } else if (d.type == value_type::hash) {
      ADMIT_ASSERT(!d.fields.empty(), "Redis never stores an empty hash");
      hash_value hash;
      for (const auto& f : d.fields) {
        const bool added = hash.set(f.name, f.value);
        ADMIT_ASSERT(added, "a dump names each field of a hash once");
      }
      v.data = std::move(hash);
    } else {
      v.data = d.value;
    }
    const bool inserted = keys_.emplace(d.key, std::move(v)).second;
    ADMIT_ASSERT(inserted, "a dump names each key once");
  }
}

namespace {

std::string quoted(std::string_view s) {
  static constexpr std::string_view hex = "0123456789abcdef";
  std::string out = "\"";
  for (const char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (u < 0x20 || u >= 0x7f) {
      out += "\\x";
      out += hex[u >> 4];
      out += hex[u & 0xf];
    } else {
      out += c;
    }
  }
  return out + "\"";
}

}  // namespace

std::string render_dump(std::span<const key_dump> keys) {
  // Built with append() only: GCC 12 warns falsely (-Wrestrict) on some
  // chains of string operator+.
  std::string out;
  for (const key_dump& d : keys) {
    out.append("key ").append(quoted(d.key));
    out.append(d.type == value_type::zset ? " zset" : d.type == value_type::hash ? " hash" : " string");
    out.append(" pexpireat=");
    out.append(d.expire_at_ms ? std::to_string(*d.expire_at_ms) : std::string("none"));
    if (d.type == value_type::string) out.append(" ").append(quoted(d.value));
    out.append("\n");
    for (const auto& e : d.members) {
      out.append("  ").append(quoted(e.member)).append(" ").append(format_score(e.score));
      out.append("\n");
    }
    for (const auto& f : d.fields) {
      out.append("  ").append(quoted(f.name)).append(" ").append(quoted(f.value)).append("\n");
    }
  }
  return out;
}

// ---------------------------------------------------------------------------
// The generic entry point

using argv_span = std::span<const std::string_view>;

struct command_impl {
  static reply wrongtype() {
    ADMIT_PROBE(replica_wrong_type);
    return error_reply(wrongtype_text);
  }

  // ZADD key [NX|XX] [GT|LT] [CH] [INCR] score member [score member ...]
  static reply zadd(replica& r, argv_span argv, std::int64_t now_us) {
    zadd_options o;
    bool incr = false;
    std::size_t at = 2;
    for (; at < argv.size(); ++at) {
      const std::string_view opt = argv[at];
      if (equals_ci(opt, "nx")) o.nx = true;
      else if (equals_ci(opt, "xx")) o.xx = true;
      else if (equals_ci(opt, "ch")) o.ch = true;
      else if (equals_ci(opt, "incr")) incr = true;
      else if (equals_ci(opt, "gt")) o.gt = true;
      else if (equals_ci(opt, "lt")) o.lt = true;
      else break;
    }
    const std::size_t rest = argv.size() - at;
    if (rest == 0 || rest % 2 != 0) return error_reply(syntax_error_text);
    if (o.nx && o.xx) return error_reply("ERR XX and NX options at the same time are not compatible");
    if ((o.gt && o.nx) || (o.lt && o.nx) || (o.gt && o.lt)) {
      return error_reply("ERR GT, LT, and/or NX options at the same time are not compatible");
    }
    if (incr && rest > 2) return error_reply("ERR INCR option supports a single increment-element pair");
    // Every score is parsed before anything changes: ZADD applies fully or not at all.
    std::vector<double> scores;
    for (std::size_t i = at; i < argv.size(); i += 2) {
      const auto score = parse_score(argv[i]);
      if (!score) return error_reply(not_float_text);
      scores.push_back(*score);
    }
    const std::string_view key = argv[1];
    sorted_set* set = nullptr;
    try {
      set = r.find_value<sorted_set>(key, now_us);
    } catch (const command_error&) {
      return wrongtype();
    }
    std::int64_t added = 0;
    std::int64_t updated = 0;
    std::int64_t processed = 0;
    double score = 0.0;
    if (set == nullptr && !o.xx) set = &r.value_for_write<sorted_set>(key, now_us);
    if (set != nullptr) {
      for (std::size_t j = 0; j < scores.size(); ++j) {
        score = scores[j];
        const auto effect = zset_add(*set, score, argv[at + 2 * j + 1], o, incr);
        if (!effect) {
          r.drop_if_empty(key, *set);
          return error_reply("ERR resulting score is not a number (NaN)");
        }
        if (*effect == zadd_effect::added) ++added;
        if (*effect == zadd_effect::updated) ++updated;
        if (*effect != zadd_effect::nop) ++processed;
      }
      r.drop_if_empty(key, *set);
    }
    if (incr) return processed > 0 ? reply::bulk(format_score(score)) : reply::nil();
    return integer_reply(o.ch ? added + updated : added);
  }

  // ZREM key member [member ...]
  static reply zrem(replica& r, argv_span argv, std::int64_t now_us) {
    sorted_set* set = nullptr;
    try {
      set = r.find_value<sorted_set>(argv[1], now_us);
    } catch (const command_error&) {
      return wrongtype();
    }
    if (set == nullptr) return integer_reply(0);
    std::int64_t removed = 0;
    for (std::size_t i = 2; i < argv.size(); ++i) {
      if (set->erase(argv[i])) ++removed;
      if (set->empty()) break;
    }
    r.drop_if_empty(argv[1], *set);
    return integer_reply(removed);
  }

  static reply zcard(replica& r, argv_span argv, std::int64_t now_us) {
    try {
      return integer_reply(r.zcard(argv[1], now_us));
    } catch (const command_error&) {
      return wrongtype();
    }
  }

  static reply zscore(replica& r, argv_span argv, std::int64_t now_us) {
    try {
      const auto score = r.zscore(argv[1], argv[2], now_us);
      return score ? reply::bulk(format_score(*score)) : reply::nil();
    } catch (const command_error&) {
      return wrongtype();
    }
  }

  static reply zrank(replica& r, argv_span argv, std::int64_t now_us) {
    try {
      const auto rank = r.zrank(argv[1], argv[2], now_us);
      return rank ? integer_reply(*rank) : reply::nil();
    } catch (const command_error&) {
      return wrongtype();
    }
  }

  // ZREMRANGEBYSCORE key min max
  static reply zremrangebyscore(replica& r, argv_span argv, std::int64_t now_us) {
    const auto min = parse_bound(argv[2]);
    const auto max = parse_bound(argv[3]);
    if (!min || !max) return error_reply(range_not_float_text);
    try {
      return integer_reply(r.zremrangebyscore(argv[1], *min, *max, now_us));
    } catch (const command_error&) {
      return wrongtype();
    }
  }

  enum class range_kind : std::uint8_t { automatic, rank, score, lex };

  // ZRANGE key start stop [BYSCORE|BYLEX] [REV] [LIMIT offset count] [WITHSCORES]
  // and ZRANGEBYSCORE key min max [WITHSCORES] [LIMIT offset count], following
  // Redis 7.0's zrangeGenericCommand step by step (options, conflicts, range,
  // then the key).
  static reply zrange_generic(replica& r, argv_span argv, std::int64_t now_us,
                              range_kind kind, bool direction_fixed, bool reverse_fixed = false) {
    ADMIT_ASSERT(!reverse_fixed || direction_fixed, "a fixed reverse is a fixed direction");
    bool withscores = false;
    bool reverse = reverse_fixed;
    std::int64_t offset = 0;
    std::int64_t limit = -1;
    for (std::size_t j = 4; j < argv.size(); ++j) {
      const std::size_t left = argv.size() - j - 1;
      if (equals_ci(argv[j], "withscores")) {
        withscores = true;
      } else if (equals_ci(argv[j], "limit") && left >= 2) {
        const auto o = parse_int64(argv[j + 1]);
        if (!o) return error_reply(not_integer_text);
        const auto l = parse_int64(argv[j + 2]);
        if (!l) return error_reply(not_integer_text);
        offset = *o;
        limit = *l;
        j += 2;
      } else if (!direction_fixed && !reverse && equals_ci(argv[j], "rev")) {
        reverse = true;
      } else if (kind == range_kind::automatic && equals_ci(argv[j], "bylex")) {
        kind = range_kind::lex;
      } else if (kind == range_kind::automatic && equals_ci(argv[j], "byscore")) {
        kind = range_kind::score;
      } else {
        return error_reply(syntax_error_text);
      }
    }
    if (kind == range_kind::automatic) kind = range_kind::rank;
    if (limit != -1 && kind == range_kind::rank) {
      return error_reply(
          "ERR syntax error, LIMIT is only supported in combination with either BYSCORE or BYLEX");
    }
    if (withscores && kind == range_kind::lex) {
      return error_reply("ERR syntax error, WITHSCORES not supported in combination with BYLEX");
    }
    if (kind == range_kind::lex) return error_reply("ERR admitsim replica: ZRANGE BYLEX is not supported");

    std::size_t min_at = 2;
    std::size_t max_at = 3;
    if (reverse && kind == range_kind::score) std::swap(min_at, max_at);

    std::int64_t start = 0;
    std::int64_t stop = 0;
    score_bound min;
    score_bound max;
    if (kind == range_kind::rank) {
      const auto a = parse_int64(argv[min_at]);
      if (!a) return error_reply(not_integer_text);
      const auto b = parse_int64(argv[max_at]);
      if (!b) return error_reply(not_integer_text);
      start = *a;
      stop = *b;
    } else {
      const auto a = parse_bound(argv[min_at]);
      const auto b = parse_bound(argv[max_at]);
      if (!a || !b) return error_reply(range_not_float_text);
      min = *a;
      max = *b;
    }

    const sorted_set* set = nullptr;
    try {
      set = r.find_value<sorted_set>(argv[1], now_us);
    } catch (const command_error&) {
      return wrongtype();
    }
    std::vector<reply> out;
    if (set == nullptr) return reply::array(std::move(out));
    const auto entries = set->entries();
    const auto emit = [&](const sorted_set::entry& e) {
      out.push_back(reply::bulk(e.member));
      if (withscores) out.push_back(reply::bulk(format_score(e.score)));
    };

    if (kind == range_kind::rank) {
      const auto length = static_cast<std::int64_t>(entries.size());
      if (start < 0) start += length;
      if (stop < 0) stop += length;
      if (start < 0) start = 0;
      if (start > stop || start >= length) return reply::array(std::move(out));
      if (stop >= length) stop = length - 1;
      for (std::int64_t i = start; i <= stop; ++i) {
        const auto index = reverse ? length - 1 - i : i;
        emit(entries[static_cast<std::size_t>(index)]);
      }
      return reply::array(std::move(out));
    }

    if (offset > 0 && offset >= static_cast<std::int64_t>(entries.size())) {
      return reply::array(std::move(out));
    }
    if (offset < 0) return reply::array(std::move(out));  // Redis skips everything
    const auto [first, last] = set->score_range(min, max);
    std::vector<std::size_t> picked;
    for (std::size_t k = 0; k < last - first; ++k) {
      picked.push_back(reverse ? last - 1 - k : first + k);
    }
    std::int64_t remaining = limit;
    for (std::size_t k = static_cast<std::size_t>(offset); k < picked.size(); ++k) {
      if (remaining == 0) break;
      emit(entries[picked[k]]);
      if (remaining > 0) --remaining;
    }
    return reply::array(std::move(out));
  }

  static reply zrange(replica& r, argv_span argv, std::int64_t now_us) {
    return zrange_generic(r, argv, now_us, range_kind::automatic, false);
  }

  static reply zrangebyscore(replica& r, argv_span argv, std::int64_t now_us) {
    return zrange_generic(r, argv, now_us, range_kind::score, true);
  }

  // ZREVRANGEBYSCORE key max min [WITHSCORES] [LIMIT offset count]
  static reply zrevrangebyscore(replica& r, argv_span argv, std::int64_t now_us) {
    return zrange_generic(r, argv, now_us, range_kind::score, true, true);
  }

  // ZREVRANGE key start stop [WITHSCORES]
  static reply zrevrange(replica& r, argv_span argv, std::int64_t now_us) {
    return zrange_generic(r, argv, now_us, range_kind::rank, true, true);
  }

  static reply zrevrank(replica& r, argv_span argv, std::int64_t now_us) {
    try {
      const sorted_set* set = r.find_value<sorted_set>(argv[1], now_us);
      if (set == nullptr) return reply::nil();
      const auto rank = set->rank(argv[2]);
      if (!rank) return reply::nil();
      return integer_reply(static_cast<std::int64_t>(set->size() - 1 - *rank));
    } catch (const command_error&) {
      return wrongtype();
    }
  }

  // ZCOUNT key min max: the range is parsed before the key is looked up.
  static reply zcount(replica& r, argv_span argv, std::int64_t now_us) {
    const auto min = parse_bound(argv[2]);
    const auto max = parse_bound(argv[3]);
    if (!min || !max) return error_reply(range_not_float_text);
    try {
      return integer_reply(r.zcount(argv[1], *min, *max, now_us));
    } catch (const command_error&) {
      return wrongtype();
    }
  }

  // ZINCRBY key increment member. Redis runs it through ZADD's parser, so
  // an increment spelled like a ZADD option is taken as one, which leaves an
  // odd number of arguments: a syntax error, not an invalid float.
  static reply zincrby(replica& r, argv_span argv, std::int64_t now_us) {
    for (const std::string_view option : {"nx", "xx", "ch", "incr", "gt", "lt"}) {
      if (equals_ci(argv[2], option)) return error_reply(syntax_error_text);
    }
    const auto increment = parse_score(argv[2]);
    if (!increment) return error_reply(not_float_text);
    try {
      return reply::bulk(format_score(r.zincrby(argv[1], *increment, argv[3], now_us)));
    } catch (const command_error& e) {
      return reply::error(e.what());
    }
  }

  // ZREMRANGEBYRANK key start stop: the ranks are parsed before the key is looked up.
  static reply zremrangebyrank(replica& r, argv_span argv, std::int64_t now_us) {
    const auto start = parse_int64(argv[2]);
    const auto stop = parse_int64(argv[3]);
    if (!start || !stop) return error_reply(not_integer_text);
    try {
      return integer_reply(r.zremrangebyrank(argv[1], *start, *stop, now_us));
    } catch (const command_error&) {
      return wrongtype();
    }
  }

  // ZPOPMIN / ZPOPMAX key [count]: a flat array of member, score pairs (RESP2).
  static reply zpop(replica& r, argv_span argv, std::int64_t now_us, bool max) {
    if (argv.size() > 3) return error_reply(syntax_error_text);
    std::int64_t count = 1;
    if (argv.size() == 3) {
      const auto parsed = parse_int64(argv[2]);
      if (!parsed || *parsed < 0) return error_reply("ERR value is out of range, must be positive");
      count = *parsed;
    }
    sorted_set* set = nullptr;
    try {
      set = r.find_value<sorted_set>(argv[1], now_us);
    } catch (const command_error&) {
      return wrongtype();
    }
    std::vector<reply> out;
    if (set == nullptr || count == 0) return reply::array(std::move(out));
    const std::size_t n = std::min(set->size(), static_cast<std::size_t>(count));
    const auto entries = set->entries();
    for (std::size_t k = 0; k < n; ++k) {
      const sorted_set::entry& e = entries[max ? entries.size() - 1 - k : k];
      out.push_back(reply::bulk(e.member));
      out.push_back(reply::bulk(format_score(e.score)));
    }
    if (max) {
      set->erase_rank_range(set->size() - n, set->size());
    } else {
      set->erase_rank_range(0, n);
    }
    r.drop_if_empty(argv[1], *set);
    return reply::array(std::move(out));
  }

  static reply zpopmin(replica& r, argv_span argv, std::int64_t now_us) {
    return zpop(r, argv, now_us, false);
  }

  static reply zpopmax(replica& r, argv_span argv, std::int64_t now_us) {
    return zpop(r, argv, now_us, true);
  }

  // PEXPIRE, EXPIRE, PEXPIREAT, EXPIREAT key amount [NX|XX|GT|LT], following
  // Redis 7.0's expireGenericCommand: options, amount, overflow, then the key.
  static reply expire_generic(replica& r, argv_span argv, std::int64_t now_us, bool seconds,
                              bool absolute, std::string_view name) {
    bool nx = false;
    bool xx = false;
    bool gt = false;
    bool lt = false;
    for (std::size_t j = 3; j < argv.size(); ++j) {
      if (equals_ci(argv[j], "nx")) nx = true;
      else if (equals_ci(argv[j], "xx")) xx = true;
      else if (equals_ci(argv[j], "gt")) gt = true;
      else if (equals_ci(argv[j], "lt")) lt = true;
      else return reply::error("ERR Unsupported option " + std::string(argv[j]));
    }
    if ((nx && xx) || (nx && gt) || (nx && lt)) {
      return error_reply("ERR NX and XX, GT or LT options at the same time are not compatible");
    }
    if (gt && lt) return error_reply("ERR GT and LT options at the same time are not compatible");
    const auto amount = parse_int64(argv[2]);
    if (!amount) return error_reply(not_integer_text);
    const std::string invalid = "ERR invalid expire time in '" + std::string(name) + "' command";
    std::int64_t when_ms = *amount;
    if (seconds) {
      constexpr std::int64_t int64_min = std::numeric_limits<std::int64_t>::min();
      if (when_ms > int64_max / 1000 || when_ms < int64_min / 1000) return reply::error(invalid);
      when_ms *= 1000;
    }
    const std::int64_t now_ms = to_ms(now_us);
    const std::int64_t base_ms = absolute ? 0 : now_ms;
    if (when_ms > int64_max - base_ms) return reply::error(invalid);
    when_ms += base_ms;
    const auto it = r.find_live_entry(argv[1], now_us);
    if (it == r.keys_.end()) return integer_reply(0);
    const auto current = it->second.expire_at_ms;
    if (nx && current) return integer_reply(0);
    if (xx && !current) return integer_reply(0);
    // No deadline counts as an infinite one.
    if (gt && (!current || when_ms <= *current)) return integer_reply(0);
    if (lt && current && when_ms >= *current) return integer_reply(0);
    if (when_ms <= now_ms) {
      r.keys_.erase(it);  // Redis deletes a key whose new deadline has already passed
    } else {
      it->second.expire_at_ms = when_ms;
    }
    return integer_reply(1);
  }

  static reply pexpire(replica& r, argv_span argv, std::int64_t now_us) {
    return expire_generic(r, argv, now_us, false, false, "pexpire");
  }

  static reply expire(replica& r, argv_span argv, std::int64_t now_us) {
    return expire_generic(r, argv, now_us, true, false, "expire");
  }

  static reply pexpireat(replica& r, argv_span argv, std::int64_t now_us) {
    return expire_generic(r, argv, now_us, false, true, "pexpireat");
  }

  static reply expireat(replica& r, argv_span argv, std::int64_t now_us) {
    return expire_generic(r, argv, now_us, true, true, "expireat");
  }

  // TTL and EXPIRETIME: milliseconds rounded to the nearest second, as Redis
  // does ((ms + 500) / 1000; written so that a deadline near INT64_MAX gives
  // the same answer as the server, 9223372036854776, without overflowing).
  static std::int64_t rounded_seconds(std::int64_t ms) {
    if (ms < 0) return ms;
    return ms / 1000 + (ms % 1000 + 500) / 1000;
  }

  static reply ttl(replica& r, argv_span argv, std::int64_t now_us) {
    return integer_reply(rounded_seconds(r.pttl(argv[1], now_us)));
  }

  static reply expiretime(replica& r, argv_span argv, std::int64_t now_us) {
    return integer_reply(rounded_seconds(r.pexpiretime(argv[1], now_us)));
  }

  static reply persist(replica& r, argv_span argv, std::int64_t now_us) {
    return integer_reply(r.persist(argv[1], now_us));
  }

  static reply pttl(replica& r, argv_span argv, std::int64_t now_us) {
    return integer_reply(r.pttl(argv[1], now_us));
  }

  static reply pexpiretime(replica& r, argv_span argv, std::int64_t now_us) {
    return integer_reply(r.pexpiretime(argv[1], now_us));
  }

  static reply time(replica&, argv_span, std::int64_t now_us) {
    ADMIT_ASSERT(now_us >= 0, "the server clock counts from the Unix epoch");
    std::vector<reply> out;
    out.push_back(reply::bulk(std::to_string(now_us / 1'000'000)));
    out.push_back(reply::bulk(std::to_string(now_us % 1'000'000)));
    return reply::array(std::move(out));
  }

  static reply incr(replica& r, argv_span argv, std::int64_t now_us) {
    try {
      return integer_reply(r.incr(argv[1], now_us));
    } catch (const command_error& e) {
      return reply::error(e.what());
    }
  }

  // INCRBY key increment: the increment is parsed before the key is looked up.
  static reply incrby(replica& r, argv_span argv, std::int64_t now_us) {
    const auto increment = parse_int64(argv[2]);
    if (!increment) return error_reply(not_integer_text);
    try {
      return integer_reply(r.incrby(argv[1], *increment, now_us));
    } catch (const command_error& e) {
      return reply::error(e.what());
    }
  }

  // DECRBY key decrement: INCRBY of the negation, which INT64_MIN has not.
  static reply decrby(replica& r, argv_span argv, std::int64_t now_us) {
    const auto decrement = parse_int64(argv[2]);
    if (!decrement) return error_reply(not_integer_text);
    if (*decrement == std::numeric_limits<std::int64_t>::min()) {
      return error_reply("ERR decrement would overflow");
    }
    try {
      return integer_reply(r.incrby(argv[1], -*decrement, now_us));
    } catch (const command_error& e) {
      return reply::error(e.what());
    }
  }

  static reply decr(replica& r, argv_span argv, std::int64_t now_us) {
    try {
      return integer_reply(r.incrby(argv[1], -1, now_us));
    } catch (const command_error& e) {
      return reply::error(e.what());
    }
  }

  // MGET key [key ...]: a key that is missing or not a string reads as nil.
  static reply mget(replica& r, argv_span argv, std::int64_t now_us) {
    std::vector<reply> out;
    for (std::size_t i = 1; i < argv.size(); ++i) {
      const replica::stored_value* v = r.find_live(argv[i], now_us);
      const auto* text = v == nullptr ? nullptr : std::get_if<std::string>(&v->data);
      out.push_back(text == nullptr ? reply::nil() : reply::bulk(*text));
    }
    return reply::array(std::move(out));
  }

  // SETEX key seconds value and PSETEX key milliseconds value, following
  // Redis 7.0's getExpireMillisecondsOrReply: positive, no overflow.
  static reply setex_generic(replica& r, argv_span argv, std::int64_t now_us, bool seconds,
                             std::string_view name) {
    const auto amount = parse_int64(argv[2]);
    if (!amount) return error_reply(not_integer_text);
    const std::string invalid = "ERR invalid expire time in '" + std::string(name) + "' command";
    if (*amount <= 0 || (seconds && *amount > int64_max / 1000)) return reply::error(invalid);
    const std::int64_t ms = seconds ? *amount * 1000 : *amount;
    const std::int64_t now_ms = to_ms(now_us);
    if (ms > int64_max - now_ms) return reply::error(invalid);
    r.set(argv[1], argv[3], now_us);
    replica::stored_value* stored = r.find_live(argv[1], now_us);
    ADMIT_ASSERT(stored != nullptr, "SETEX stores the key");
    stored->expire_at_ms = now_ms + ms;
    return reply::status("OK");
  }

  static reply setex(replica& r, argv_span argv, std::int64_t now_us) {
    return setex_generic(r, argv, now_us, true, "setex");
  }

  static reply psetex(replica& r, argv_span argv, std::int64_t now_us) {
    return setex_generic(r, argv, now_us, false, "psetex");
  }

  static reply get(replica& r, argv_span argv, std::int64_t now_us) {
    try {
      const auto value = r.get(argv[1], now_us);
      return value ? reply::bulk(*value) : reply::nil();
    } catch (const command_error&) {
      return wrongtype();
    }
  }

  // SET key value [NX|XX] [GET] [EX s|PX ms|EXAT s|PXAT ms|KEEPTTL]
  static reply set(replica& r, argv_span argv, std::int64_t now_us) {
    enum class unit : std::uint8_t { none, ex, px, exat, pxat };
    bool nx = false;
    bool xx = false;
    bool get_old = false;
    bool keepttl = false;
    unit expire_unit = unit::none;
    std::string_view expire_arg;
    for (std::size_t j = 3; j < argv.size(); ++j) {
      const std::string_view opt = argv[j];
      const bool has_next = j + 1 < argv.size();
      const bool timed = expire_unit != unit::none;
      if (equals_ci(opt, "nx") && !xx) {
        nx = true;
      } else if (equals_ci(opt, "xx") && !nx) {
        xx = true;
      } else if (equals_ci(opt, "get")) {
        get_old = true;
      } else if (equals_ci(opt, "keepttl") && !timed) {
        keepttl = true;
      } else if (equals_ci(opt, "ex") && !keepttl && (expire_unit == unit::none || expire_unit == unit::ex) && has_next) {
        expire_unit = unit::ex;
        expire_arg = argv[++j];
      } else if (equals_ci(opt, "px") && !keepttl && (expire_unit == unit::none || expire_unit == unit::px) && has_next) {
        expire_unit = unit::px;
        expire_arg = argv[++j];
      } else if (equals_ci(opt, "exat") && !keepttl && (expire_unit == unit::none || expire_unit == unit::exat) && has_next) {
        expire_unit = unit::exat;
        expire_arg = argv[++j];
      } else if (equals_ci(opt, "pxat") && !keepttl && (expire_unit == unit::none || expire_unit == unit::pxat) && has_next) {
        expire_unit = unit::pxat;
        expire_arg = argv[++j];
      } else {
        return error_reply(syntax_error_text);
      }
    }
    std::optional<std::int64_t> deadline_ms;
    if (expire_unit != unit::none) {
      const auto amount = parse_int64(expire_arg);
      if (!amount) return error_reply(not_integer_text);
      const bool seconds = expire_unit == unit::ex || expire_unit == unit::exat;
      const std::string invalid = "ERR invalid expire time in 'set' command";
      if (*amount <= 0 || (seconds && *amount > int64_max / 1000)) return reply::error(invalid);
      std::int64_t ms = seconds ? *amount * 1000 : *amount;
      if (expire_unit == unit::ex || expire_unit == unit::px) {
        const std::int64_t now_ms = to_ms(now_us);
        if (ms > int64_max - now_ms) return reply::error(invalid);
        ms += now_ms;
      }
      deadline_ms = ms;
    }
    reply old = reply::nil();
    if (get_old) {
      try {
        const auto value = r.get(argv[1], now_us);
        if (value) old = reply::bulk(*value);
      } catch (const command_error&) {
        return wrongtype();
      }
    }
    replica::stored_value* v = r.find_live(argv[1], now_us);
    if ((nx && v != nullptr) || (xx && v == nullptr)) return get_old ? old : reply::nil();
    std::optional<std::int64_t> kept;
    if (keepttl && v != nullptr) kept = v->expire_at_ms;
    r.set(argv[1], argv[2], now_us);
    replica::stored_value* stored = r.find_live(argv[1], now_us);
    ADMIT_ASSERT(stored != nullptr, "SET stores the key");
    stored->expire_at_ms = deadline_ms ? deadline_ms : kept;
    return get_old ? old : reply::status("OK");
  }

  static reply del(replica& r, argv_span argv, std::int64_t now_us) {
    std::int64_t n = 0;
    for (std::size_t i = 1; i < argv.size(); ++i) n += r.del(argv[i], now_us);
    return integer_reply(n);
  }

  static reply exists(replica& r, argv_span argv, std::int64_t now_us) {
    std::int64_t n = 0;
    for (std::size_t i = 1; i < argv.size(); ++i) n += r.exists(argv[i], now_us) ? 1 : 0;
    return integer_reply(n);
  }

  static reply type(replica& r, argv_span argv, std::int64_t now_us) {
    const replica::stored_value* v = r.find_live(argv[1], now_us);
    if (v == nullptr) return reply::status("none");
    if (std::holds_alternative<sorted_set>(v->data)) return reply::status("zset");
    if (std::holds_alternative<hash_value>(v->data)) return reply::status("hash");
    return reply::status("string");
  }

  // --- hashes --------------------------------------------------------------

  // HSET key field value [field value ...] (the count of new fields) and
  // HMSET (OK): the pairs are counted before the key is looked up.
  static reply hset_generic(replica& r, argv_span argv, std::int64_t now_us, bool hmset) {
    if (argv.size() % 2 == 1) return reply::error(arity_error(hmset ? "hmset" : "hset"));
    hash_value* hash = nullptr;
    try {
      hash = &r.value_for_write<hash_value>(argv[1], now_us);
    } catch (const command_error&) {
      return wrongtype();
    }
    std::int64_t created = 0;
    for (std::size_t i = 2; i + 1 < argv.size(); i += 2) {
      if (hash->set(argv[i], argv[i + 1])) ++created;
    }
    return hmset ? reply::status("OK") : integer_reply(created);
  }

  static reply hset(replica& r, argv_span argv, std::int64_t now_us) {
    return hset_generic(r, argv, now_us, false);
  }

  static reply hmset(replica& r, argv_span argv, std::int64_t now_us) {
    return hset_generic(r, argv, now_us, true);
  }

  static reply hsetnx(replica& r, argv_span argv, std::int64_t now_us) {
    try {
      hash_value& hash = r.value_for_write<hash_value>(argv[1], now_us);
      if (hash.get(argv[2]) != nullptr) return integer_reply(0);
      hash.set(argv[2], argv[3]);
      return integer_reply(1);
    } catch (const command_error&) {
      return wrongtype();
    }
  }

  static reply hget(replica& r, argv_span argv, std::int64_t now_us) {
    try {
      const auto value = r.hget(argv[1], argv[2], now_us);
      return value ? reply::bulk(*value) : reply::nil();
    } catch (const command_error&) {
      return wrongtype();
    }
  }

  // HMGET key field [field ...]: nil for each missing field (all of them
  // when the key is missing), WRONGTYPE for a key of another type.
  static reply hmget(replica& r, argv_span argv, std::int64_t now_us) {
    const hash_value* hash = nullptr;
    try {
      hash = r.find_value<hash_value>(argv[1], now_us);
    } catch (const command_error&) {
      return wrongtype();
    }
    std::vector<reply> out;
    for (std::size_t i = 2; i < argv.size(); ++i) {
      const std::string* value = hash == nullptr ? nullptr : hash->get(argv[i]);
      out.push_back(value == nullptr ? reply::nil() : reply::bulk(*value));
    }
    return reply::array(std::move(out));
  }

  // HDEL key field [field ...]; an emptied hash deletes its key.
  static reply hdel(replica& r, argv_span argv, std::int64_t now_us) {
    hash_value* hash = nullptr;
    try {
      hash = r.find_value<hash_value>(argv[1], now_us);
    } catch (const command_error&) {
      return wrongtype();
    }
    if (hash == nullptr) return integer_reply(0);
    std::int64_t removed = 0;
    for (std::size_t i = 2; i < argv.size(); ++i) {
      if (hash->erase(argv[i])) ++removed;
      if (hash->empty()) break;
    }
    r.drop_if_empty(argv[1], *hash);
    return integer_reply(removed);
  }

  // HINCRBY key field increment: the increment is parsed before the key is looked up.
  static reply hincrby(replica& r, argv_span argv, std::int64_t now_us) {
    const auto increment = parse_int64(argv[3]);
    if (!increment) return error_reply(not_integer_text);
    try {
      return integer_reply(r.hincrby(argv[1], argv[2], *increment, now_us));
    } catch (const command_error& e) {
      return reply::error(e.what());
    }
  }

  static reply hexists(replica& r, argv_span argv, std::int64_t now_us) {
    try {
      const hash_value* hash = r.find_value<hash_value>(argv[1], now_us);
      return integer_reply(hash != nullptr && hash->get(argv[2]) != nullptr ? 1 : 0);
    } catch (const command_error&) {
      return wrongtype();
    }
  }

  static reply hlen(replica& r, argv_span argv, std::int64_t now_us) {
    try {
      return integer_reply(r.hlen(argv[1], now_us));
    } catch (const command_error&) {
      return wrongtype();
    }
  }

  enum class hash_part : std::uint8_t { names, values, both };

  // HGETALL, HKEYS, HVALS: in insertion order (a small hash's order in Redis).
  static reply hash_listing(replica& r, argv_span argv, std::int64_t now_us, hash_part part) {
    const hash_value* hash = nullptr;
    try {
      hash = r.find_value<hash_value>(argv[1], now_us);
    } catch (const command_error&) {
      return wrongtype();
    }
    std::vector<reply> out;
    if (hash == nullptr) return reply::array(std::move(out));
    for (const hash_value::field& f : hash->fields()) {
      if (part != hash_part::values) out.push_back(reply::bulk(f.name));
      if (part != hash_part::names) out.push_back(reply::bulk(f.value));
    }
    return reply::array(std::move(out));
  }

  static reply hgetall(replica& r, argv_span argv, std::int64_t now_us) {
    return hash_listing(r, argv, now_us, hash_part::both);
  }

  static reply hkeys(replica& r, argv_span argv, std::int64_t now_us) {
    return hash_listing(r, argv, now_us, hash_part::names);
  }

  static reply hvals(replica& r, argv_span argv, std::int64_t now_us) {
    return hash_listing(r, argv, now_us, hash_part::values);
  }
};

namespace {

using handler = reply (*)(replica&, argv_span, std::int64_t, pubsub*);

// Most commands only touch the keyspace; PUBLISH and SPUBLISH alone talk to the bus.
template <reply (*run)(replica&, argv_span, std::int64_t)>
reply no_bus(replica& r, argv_span argv, std::int64_t now_us, pubsub*) {
  return run(r, argv, now_us);
}

// PUBLISH / SPUBLISH channel message: the receivers the bus reached (none without a bus).
template <bool Sharded>
reply publish(replica&, argv_span argv, std::int64_t, pubsub* bus) {
  if (bus == nullptr) return integer_reply(0);
  const std::int64_t receivers = bus->publish(argv[1], argv[2], Sharded);
  ADMIT_ASSERT(receivers >= 0, "a receiver count is never negative");
  return integer_reply(receivers);
}

struct command_spec {
  std::string_view name;
  int arity;  // > 0: exactly this many arguments (with the name); < 0: at least -arity
  handler run;
};

// Arities as Redis 7.0's command table gives them.
constexpr std::array commands{
    // sorted sets
    command_spec{"zadd", -4, &no_bus<&command_impl::zadd>},
    command_spec{"zincrby", 4, &no_bus<&command_impl::zincrby>},
    command_spec{"zrem", -3, &no_bus<&command_impl::zrem>},
    command_spec{"zcard", 2, &no_bus<&command_impl::zcard>},
    command_spec{"zscore", 3, &no_bus<&command_impl::zscore>},
    command_spec{"zrank", 3, &no_bus<&command_impl::zrank>},
    command_spec{"zrevrank", 3, &no_bus<&command_impl::zrevrank>},
    command_spec{"zcount", 4, &no_bus<&command_impl::zcount>},
    command_spec{"zrange", -4, &no_bus<&command_impl::zrange>},
    command_spec{"zrevrange", -4, &no_bus<&command_impl::zrevrange>},
    command_spec{"zrangebyscore", -4, &no_bus<&command_impl::zrangebyscore>},
    command_spec{"zrevrangebyscore", -4, &no_bus<&command_impl::zrevrangebyscore>},
    command_spec{"zremrangebyscore", 4, &no_bus<&command_impl::zremrangebyscore>},
    command_spec{"zremrangebyrank", 4, &no_bus<&command_impl::zremrangebyrank>},
    command_spec{"zpopmin", -2, &no_bus<&command_impl::zpopmin>},
    command_spec{"zpopmax", -2, &no_bus<&command_impl::zpopmax>},
    // keys
    command_spec{"pexpire", -3, &no_bus<&command_impl::pexpire>},
    command_spec{"expire", -3, &no_bus<&command_impl::expire>},
    command_spec{"pexpireat", -3, &no_bus<&command_impl::pexpireat>},
    command_spec{"expireat", -3, &no_bus<&command_impl::expireat>},
    command_spec{"pttl", 2, &no_bus<&command_impl::pttl>},
    command_spec{"ttl", 2, &no_bus<&command_impl::ttl>},
    command_spec{"pexpiretime", 2, &no_bus<&command_impl::pexpiretime>},
    command_spec{"expiretime", 2, &no_bus<&command_impl::expiretime>},
    command_spec{"persist", 2, &no_bus<&command_impl::persist>},
    command_spec{"del", -2, &no_bus<&command_impl::del>},
    command_spec{"exists", -2, &no_bus<&command_impl::exists>},
    command_spec{"type", 2, &no_bus<&command_impl::type>},
    // strings
    command_spec{"get", 2, &no_bus<&command_impl::get>},
    command_spec{"mget", -2, &no_bus<&command_impl::mget>},
    command_spec{"set", -3, &no_bus<&command_impl::set>},
    command_spec{"setex", 4, &no_bus<&command_impl::setex>},
    command_spec{"psetex", 4, &no_bus<&command_impl::psetex>},
    command_spec{"incr", 2, &no_bus<&command_impl::incr>},
    command_spec{"decr", 2, &no_bus<&command_impl::decr>},
    command_spec{"incrby", 3, &no_bus<&command_impl::incrby>},
    command_spec{"decrby", 3, &no_bus<&command_impl::decrby>},
    // hashes
    command_spec{"hset", -4, &no_bus<&command_impl::hset>},
    command_spec{"hmset", -4, &no_bus<&command_impl::hmset>},
    command_spec{"hsetnx", 4, &no_bus<&command_impl::hsetnx>},
    command_spec{"hget", 3, &no_bus<&command_impl::hget>},
    command_spec{"hmget", -3, &no_bus<&command_impl::hmget>},
    command_spec{"hdel", -3, &no_bus<&command_impl::hdel>},
    command_spec{"hincrby", 4, &no_bus<&command_impl::hincrby>},
    command_spec{"hexists", 3, &no_bus<&command_impl::hexists>},
    command_spec{"hlen", 2, &no_bus<&command_impl::hlen>},
    command_spec{"hgetall", 2, &no_bus<&command_impl::hgetall>},
    command_spec{"hkeys", 2, &no_bus<&command_impl::hkeys>},
    command_spec{"hvals", 2, &no_bus<&command_impl::hvals>},
    // server
    command_spec{"time", 1, &no_bus<&command_impl::time>},
    command_spec{"publish", 3, &publish<false>},
    command_spec{"spublish", 3, &publish<true>},
};

std::string unknown_command_error(argv_span argv) {
  // Redis 7.0: "unknown command '%.128s', with args beginning with: " then
  // "'%.*s' " for each argument while the list is shorter than 128 bytes.
  std::string args;
  for (std::size_t i = 1; i < argv.size() && args.size() < 128; ++i) {
    const std::size_t room = 128 - args.size();
    args.push_back('\'');
    args.append(argv[i].substr(0, room));
    args.append("' ");
  }
  std::string out = "ERR unknown command '";
  out.append(argv[0].substr(0, 128));
  out.append("', with args beginning with: ");
  out.append(args);
  return out;
}

// The table in name order, for a binary search (a script's every command
// passes here).
constexpr auto commands_by_name = [] {
  auto sorted = commands;
  std::sort(sorted.begin(), sorted.end(), [](const command_spec& a, const command_spec& b) { return a.name < b.name; });
  return sorted;
}();
constexpr std::size_t longest_command_name = [] {
  std::size_t n = 0;
  for (const command_spec& spec : commands) n = std::max(n, spec.name.size());
  return n;
}();
static_assert(std::adjacent_find(commands_by_name.begin(), commands_by_name.end(),
                                 [](const command_spec& a, const command_spec& b) { return a.name == b.name; }) ==
                  commands_by_name.end(),
              "each command is in the table once");

// The entry for a name in any case; nullptr when the replica has no such command.
const command_spec* find_command(std::string_view name) {
  if (name.size() > longest_command_name) return nullptr;
  std::array<char, longest_command_name> buffer{};
  for (std::size_t i = 0; i < name.size(); ++i) buffer[i] = ascii_lower(name[i]);
  const std::string_view lowered(buffer.data(), name.size());
  const auto it = std::lower_bound(commands_by_name.begin(), commands_by_name.end(), lowered,
                                   [](const command_spec& spec, std::string_view n) { return spec.name < n; });
  if (it == commands_by_name.end() || it->name != lowered) return nullptr;
  return &*it;
}

}  // namespace

reply replica::execute(std::span<const std::string_view> argv, std::int64_t server_now_us,
                       pubsub* bus) {
  ADMIT_ASSERT(!argv.empty(), "a command has a name");
  ADMIT_ASSERT(server_now_us >= 0, "the server clock counts from the Unix epoch");
  const command_spec* spec = find_command(argv[0]);
  if (spec == nullptr) return reply::error(unknown_command_error(argv));
  return execute_found(spec, argv, server_now_us, bus);
}

replica::command_id replica::find(std::string_view name) noexcept { return find_command(name); }

reply replica::execute_found(command_id command, std::span<const std::string_view> argv,
                             std::int64_t server_now_us, pubsub* bus) {
  ADMIT_ASSERT(command != nullptr, "execute_found runs a command find() knows");
  ADMIT_ASSERT(!argv.empty(), "a command has a name");
  ADMIT_ASSERT(server_now_us >= 0, "the server clock counts from the Unix epoch");
  const auto* spec = static_cast<const command_spec*>(command);
  const auto argc = static_cast<int>(argv.size());
  if ((spec->arity > 0 && argc != spec->arity) || (spec->arity < 0 && argc < -spec->arity)) {
    return reply::error(arity_error(spec->name));
  }
  return spec->run(*this, argv, server_now_us, bus);
}

reply replica::execute(std::span<const std::string> argv, std::int64_t server_now_us, pubsub* bus) {
  // Views over the caller's strings; a short command needs no allocation.
  constexpr std::size_t inline_args = 16;
  if (argv.size() <= inline_args) {
    std::array<std::string_view, inline_args> views{};
    for (std::size_t i = 0; i < argv.size(); ++i) views[i] = argv[i];
    return execute(std::span<const std::string_view>(views.data(), argv.size()), server_now_us, bus);
  }
  const std::vector<std::string_view> views(argv.begin(), argv.end());
  return execute(std::span<const std::string_view>(views), server_now_us, bus);
}

}  // namespace admit::redis

namespace admit::redis {

void replica::note_write(std::initializer_list<std::string_view> argv) {
  if (typed_effects_ == nullptr) return;
  typed_effects_->add(std::span<const std::string_view>(argv.begin(), argv.size()));
}

}  // namespace admit::redis
