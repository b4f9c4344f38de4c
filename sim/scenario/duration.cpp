#include "sim/scenario/duration.hpp"

#include <array>
#include <utility>

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

}  // namespace admit::scenario
