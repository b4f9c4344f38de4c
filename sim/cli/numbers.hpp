// numbers: how every numeric option is read. CLI11's own conversion takes
// "-1" as 2^64-1, "0x10" as 16 and "" as no value; an option's number is
// instead decimal digits only, within the option's range, or bad usage that
// names the option and the range. A time scale (confirm's, and explore's and
// matrix's with --confirm) is the one option that takes a fraction.
#pragma once

#include <cstdint>
#include <exception>
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

inline constexpr double time_scale_min = 0.01;
inline constexpr double time_scale_max = 100;

// `text` as a time scale (real time = scenario time * X), time_scale_min to time_scale_max, the
// whole text a decimal number; throws input_error naming `option`.
inline double parse_time_scale(const std::string& option, const std::string& text) {
  std::size_t used = 0;
  double v = 0;
  try {
    v = std::stod(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != text.size() || !(v >= time_scale_min && v <= time_scale_max))
    throw input_error{option, "expected a number from 0.01 to 100, got \"" + text + "\""};
  return v;
}

}  // namespace admit::cli
