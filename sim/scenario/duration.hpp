// Durations as scenario files write them: "350ms", "15s", "2m", "1.5s".
//
// Grammar: digits, an optional fraction, then one unit of ns, us, ms, s, m,
// h. The value must be a whole number of nanoseconds and fit in int64;
// signs, spaces and exponents are rejected. Parsing is exact (integers only).
//
// Signed durations (clock offsets and steps: "-250ms", "+2s") are the same
// grammar after one optional '+' or '-'.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace admit::scenario {

std::optional<std::int64_t> parse_duration_ns(std::string_view text);

// A duration with an optional sign: "-250ms", "+2s", "1.5s". The magnitude
// follows parse_duration_ns, so "-" alone, "--1s" and "- 1s" are rejected.
std::optional<std::int64_t> parse_signed_duration_ns(std::string_view text);

// The shortest exact spelling of a duration: 150000000 -> "150ms".
std::string format_duration(std::int64_t ns);

// A duration as a person reads it, in the largest unit of ns, us, ms and s
// that it reaches, with at most three decimals: 1996093750 -> "1.996s",
// 2500000000 -> "2.5s", 350000000 -> "350ms", 12500000 -> "12.5ms". It is
// rounded (half away from zero), so it is for text, never for a value a
// program reads back (format_duration is). Values closer together than
// `resolution_ns` need not read apart; with a resolution finer than a
// thousandth of the unit, more decimals are kept so that they do (at most
// nine, the unit's nanoseconds). Trailing zeros are dropped; 0 is "0ms".
std::string format_duration_for_people(std::int64_t ns, std::int64_t resolution_ns = 0);

}  // namespace admit::scenario
