// cause_text: how the sentences of a violation's causes write their figures.
//
// A span of time reads as a person would say it: "18s", "3.2s", "0.8s" (to
// the millisecond from 100ms up), "45ms", "12.5ms", "500us" (exact below).
// Shared by both worlds' causes (sim/world/lease/lease_causes.cpp,
// sim/world/fifo/monitors.cpp), so that their sentences read alike.
#pragma once

#include <cstdint>
#include <string>

#include "sim/kernel/vtime.hpp"
#include "sim/scenario/duration.hpp"

namespace admit::world {

namespace detail {
// `whole`, then "." and the `digits` digits of `part` without trailing zeros (none when `part` is 0).
inline std::string decimal(std::int64_t whole, std::int64_t part, int digits) {
  std::string s = std::to_string(whole);
  if (part == 0) return s;
  std::string frac(static_cast<std::size_t>(digits), '0');
  for (int i = digits - 1; i >= 0; --i, part /= 10) frac[static_cast<std::size_t>(i)] = static_cast<char>('0' + part % 10);
  while (frac.back() == '0') frac.pop_back();
  return s + "." + frac;
}
}  // namespace detail

inline std::string span_text(sim::vtime_ns ns) {
  if (ns < 0) return "-" + span_text(-ns);
  if (ns >= 100 * sim::ms) {
    const std::int64_t ms = ns / sim::ms;
    return detail::decimal(ms / 1000, ms % 1000, 3) + "s";
  }
  if (ns >= sim::ms && ns % sim::ms != 0) {
    const std::int64_t us = ns / 1000;
    return detail::decimal(us / 1000, us % 1000, 3) + "ms";
  }
  return scenario::format_duration(ns);
}

// "1 item", "3 items".
inline std::string count_text(std::int64_t n, const char* one, const char* many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

// "a" or "an" before `text` read aloud, when it begins with a number:
// "an 8s request", "an 18s request", "a 1.5s request".
inline const char* article_for(const std::string& text) {
  std::size_t digits = 0;
  while (digits < text.size() && text[digits] >= '0' && text[digits] <= '9') ++digits;
  if (digits == 0) return "a";
  if (text[0] == '8') return "an";  // eight, eighty, eight hundred
  // eleven, eighteen, and their thousands and millions
  if (digits % 3 == 2 && text[0] == '1' && (text[1] == '1' || text[1] == '8')) return "an";
  return "a";
}

}  // namespace admit::world
