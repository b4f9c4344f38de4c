// cause_text: how the sentences of a violation's causes write their figures.
//
// A span of time reads as a person would say it: "18s", "3.2s", "0.8s" (to
// the millisecond from 100ms up), "45ms", "12.5ms", "500us" (exact below).
// Shared by both worlds' causes (sim/world/lease/lease_causes.cpp,
// sim/world/fifo/monitors.cpp), so that their sentences read alike.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>

#include "sim/kernel/vtime.hpp"
#include "sim/scenario/duration.hpp"

namespace admit::world {

inline std::string span_text(sim::vtime_ns ns) {
  if (ns < 0) return "-" + span_text(-ns);
  char buf[48];
  if (ns >= 100 * sim::ms) {
    const long long ms = ns / sim::ms;
    if (ms % 1000 == 0) {
      std::snprintf(buf, sizeof buf, "%llds", ms / 1000);
      return buf;
    }
    std::snprintf(buf, sizeof buf, "%lld.%03lld", ms / 1000, ms % 1000);
    std::string s = buf;
    while (s.back() == '0') s.pop_back();
    return s + "s";
  }
  if (ns >= sim::ms && ns % sim::ms != 0) {
    const long long us = ns / 1000;
    std::snprintf(buf, sizeof buf, "%lld.%03lld", us / 1000, us % 1000);
    std::string s = buf;
    while (s.back() == '0') s.pop_back();
    if (s.back() == '.') s.pop_back();
    return s + "ms";
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
