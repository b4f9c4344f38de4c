#include "sim/scenario/duration.hpp"

#include <array>
#include <utility>

#include "gate/admit_assert.hpp"

namespace admit::scenario {

namespace {
constexpr std::array<std::pair<std::string_view, std::int64_t>, 6> units{{
    {"ns", 1},
    {"us", 1'000},
    {"ms", 1'000'000},
    {"s", 1'000'000'000},
    {"m", 60'000'000'000},
    {"h", 3'600'000'000'000},
}};
}  // namespace

std::optional<std::int64_t> parse_duration_ns(std::string_view text) {
  std::size_t i = 0;
  auto is_digit = [](char c) { return c >= '0' && c <= '9'; };
  if (text.empty() || !is_digit(text[0])) return std::nullopt;
  // Whole part and fraction, kept as digit strings until the unit is known.
  std::size_t whole_end = i;
  while (whole_end < text.size() && is_digit(text[whole_end])) ++whole_end;
  std::string_view whole = text.substr(0, whole_end);
  std::string_view frac;
  std::size_t unit_start = whole_end;
  if (unit_start < text.size() && text[unit_start] == '.') {
    std::size_t f = unit_start + 1;
    while (f < text.size() && is_digit(text[f])) ++f;
    frac = text.substr(unit_start + 1, f - unit_start - 1);
    if (frac.empty()) return std::nullopt;
    unit_start = f;
  }
  std::string_view unit = text.substr(unit_start);
  std::int64_t scale = 0;
  for (const auto& [name, ns] : units)
    if (unit == name) scale = ns;
  if (scale == 0) return std::nullopt;

  constexpr std::int64_t max = INT64_MAX;
  std::int64_t value = 0;
  for (char c : whole) {
    const std::int64_t d = c - '0';
    if (value > (max - d) / 10) return std::nullopt;
    value = value * 10 + d;
  }
  if (value > max / scale) return std::nullopt;
  value *= scale;
  // The fraction must resolve to whole nanoseconds.
  std::int64_t place = scale;
  for (char c : frac) {
    if (place % 10 != 0) {
      if (c != '0') return std::nullopt;
      continue;
    }
    place /= 10;
    const std::int64_t add = (c - '0') * place;
    if (value > max - add) return std::nullopt;
    value += add;
  }
  return value;
}

std::optional<std::int64_t> parse_signed_duration_ns(std::string_view text) {
  if (!text.empty() && (text[0] == '+' || text[0] == '-')) {
    const bool negative = text[0] == '-';
    const auto magnitude = parse_duration_ns(text.substr(1));
    if (!magnitude) return std::nullopt;
    // -INT64_MAX is representable; INT64_MIN is not reachable (the magnitude is at most INT64_MAX).
    return negative ? -*magnitude : *magnitude;
  }
  return parse_duration_ns(text);
}

std::string format_duration(std::int64_t ns) {
  if (ns == 0) return "0ms";
  std::string sign = ns < 0 ? "-" : "";
  std::uint64_t v = ns < 0 ? 0 - static_cast<std::uint64_t>(ns) : static_cast<std::uint64_t>(ns);
  for (auto it = units.rbegin(); it != units.rend(); ++it) {
    const auto scale = static_cast<std::uint64_t>(it->second);
    if (v % scale == 0) return sign + std::to_string(v / scale) + std::string(it->first);
  }
  return sign + std::to_string(v) + "ns";
}

std::string format_duration_for_people(std::int64_t ns, std::int64_t resolution_ns) {
  if (ns == 0) return "0ms";
  const std::string sign = ns < 0 ? "-" : "";
  const std::uint64_t v = ns < 0 ? 0 - static_cast<std::uint64_t>(ns) : static_cast<std::uint64_t>(ns);
  // Units up to seconds: "90s" reads at once, "1.5m" does not.
  std::size_t u = 0;
  while (u + 1 < units.size() && units[u + 1].first != "m" && v >= static_cast<std::uint64_t>(units[u + 1].second)) ++u;
  const auto scale = static_cast<std::uint64_t>(units[u].second);
  // Decimals: three, or as many as the resolution needs, never finer than a nanosecond.
  std::uint64_t step = scale >= 1000 ? scale / 1000 : 1;  // nanoseconds per last decimal
  if (resolution_ns > 0)
    while (step > 1 && step > static_cast<std::uint64_t>(resolution_ns)) step /= 10;
  ADMIT_ASSERT(step >= 1, "a decimal of at least a nanosecond");
  ADMIT_ASSERT(scale % step == 0, "whole decimals of the unit");
  // Rounded to whole steps; a value that rounds up to the next unit ("999.9996ms") is spelled in it.
  const std::uint64_t steps = v / step + (v % step >= step - step / 2 && step > 1 ? 1 : 0);
  const std::uint64_t rounded = steps * step;
  if (u + 1 < units.size() && units[u + 1].first != "m" && rounded >= static_cast<std::uint64_t>(units[u + 1].second) &&
      rounded != v)
    return sign + format_duration_for_people(static_cast<std::int64_t>(rounded), resolution_ns);
  std::string out = std::to_string(rounded / scale);
  std::string frac;
  for (std::uint64_t place = scale / 10, rest = rounded % scale; place >= step && place > 0; place /= 10) {
    frac += static_cast<char>('0' + rest / place);
    rest %= place;
  }
  while (!frac.empty() && frac.back() == '0') frac.pop_back();
  if (!frac.empty()) out += "." + frac;
  return sign + out + std::string(units[u].first);
}

}  // namespace admit::scenario
