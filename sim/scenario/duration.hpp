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

}  // namespace admit::scenario
