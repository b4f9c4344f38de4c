// numbers: how every numeric option is read. CLI11's own conversion takes
// "-1" as 2^64-1, "0x10" as 16 and "" as no value; an option's number is
// instead decimal digits only, within the option's range, or bad usage that
// names the option and the range.
#pragma once

#include <cstdint>
#include <limits>
#include <string>

#include "sim/cli/errors.hpp"

namespace admit::cli {

inline constexpr std::uint64_t uint64_max = std::numeric_limits<std::uint64_t>::max();

// `text` as a number from `min` to `max`; throws input_error naming `option`.
inline std::uint64_t parse_number(const std::string& option, const std::string& text, std::uint64_t min = 0,
                                  std::uint64_t max = uint64_max) {
  std::uint64_t v = 0;
  bool ok = !text.empty();
  for (const char c : text) {
    if (c < '0' || c > '9') {
      ok = false;
      break;
    }
    const auto digit = static_cast<std::uint64_t>(c - '0');
    if (v > (uint64_max - digit) / 10) {
      ok = false;
      break;
    }
    v = v * 10 + digit;
  }
  if (!ok || v < min || v > max)
    throw input_error{option, "expected an integer from " + std::to_string(min) + " to " + std::to_string(max) +
                                  ", got \"" + text + "\""};
  return v;
}

}  // namespace admit::cli
