// json_read: the strict readers every loader of admitsim's JSON files uses.
//
// Each reader takes a value and its JSON Pointer and returns the typed value,
// or throws scenario_error naming the pointer, what was expected and what was
// there ("/gate/limit: expected an integer from 1 to 100000, got 0").
// object_reader remembers the keys a loader asked for, so that finish()
// refuses every other key as unknown. The scenario loader and the protocol
// loader share them, so both files speak the same way.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <set>
#include <string>
#include <string_view>
#include <utility>

#include <nlohmann/json.hpp>

#include "sim/kernel/vtime.hpp"
#include "sim/scenario/duration.hpp"
#include "sim/scenario/json_path_error.hpp"

namespace admit::scenario::json_read {

using json = nlohmann::ordered_json;
using sim::vtime_ns;

// A value as the message shows it: compact JSON, cut after about 60 bytes
// (never inside a UTF-8 sequence). Written here rather than with dump(),
// which would walk a deeply nested value whole, and recursively.
inline void show_into(const json& v, std::string& out, int depth) {
  constexpr std::size_t budget = 64;
  if (out.size() > budget) return;
  if (v.is_array() || v.is_object()) {
    if (depth >= 8) {
      out += v.is_array() ? "[...]" : "{...}";
      return;
    }
    out += v.is_array() ? '[' : '{';
    bool first = true;
    for (auto it = v.begin(); it != v.end() && out.size() <= budget; ++it) {
      if (!first) out += ',';
      first = false;
      if (v.is_object()) out += json(it.key()).dump() + ':';
      show_into(it.value(), out, depth + 1);
    }
    out += v.is_array() ? ']' : '}';
    return;
  }
  out += v.dump();
}

inline std::string shown(const json& v) {
  std::string s;
  show_into(v, s, 0);
  if (s.size() > 60) {
    std::size_t cut = 57;
    while (cut > 0 && (static_cast<unsigned char>(s[cut]) & 0xC0) == 0x80) --cut;
    s = s.substr(0, cut) + "...";
  }
  return s;
}

[[noreturn]] inline void fail(const std::string& path, const std::string& expected, const json& got) {
  throw scenario_error(path.empty() ? "/" : path, "expected " + expected + ", got " + shown(got));
}

[[noreturn]] inline void fail_msg(const std::string& path, const std::string& message) {
  throw scenario_error(path.empty() ? "/" : path, message);
}

inline std::string child(const std::string& path, std::string_view key) {
  std::string escaped;
  for (char c : key) {
    if (c == '~') escaped += "~0";
    else if (c == '/') escaped += "~1";
    else escaped += c;
  }
  return path + "/" + escaped;
}
inline std::string child(const std::string& path, std::size_t index) {
  return path + "/" + std::to_string(index);
}

// Reads an object's fields, remembering which keys were used, so that
// finish() can reject the rest as unknown.
class object_reader {
 public:
  object_reader(const json& j, std::string path, std::string what)
      : j_(j), path_(std::move(path)) {
    if (!j_.is_object()) fail(path_, what, j_);
  }
  const std::string& path() const { return path_; }
  bool has(std::string_view key) const { return j_.contains(key); }
  const json* get(std::string_view key) {
    used_.insert(std::string(key));
    auto it = j_.find(key);
    return it == j_.end() ? nullptr : &*it;
  }
  const json& require(std::string_view key, const std::string& what) {
    const json* v = get(key);
    if (v == nullptr) fail_msg(path_, "missing required key \"" + std::string(key) + "\" (" + what + ")");
    return *v;
  }
  void finish() const {
    for (auto it = j_.begin(); it != j_.end(); ++it) {
      if (used_.count(it.key()) == 0) {
        std::string allowed;
        for (const auto& k : used_) allowed += (allowed.empty() ? "" : ", ") + k;
        fail_msg(child(path_, it.key()), "unknown key; expected one of: " + allowed);
      }
    }
  }

 private:
  const json& j_;
  std::string path_;
  std::set<std::string> used_;
};

inline std::int64_t read_int(const json& v, const std::string& path, std::int64_t lo, std::int64_t hi) {
  const std::string expected =
      "an integer from " + std::to_string(lo) + " to " + std::to_string(hi);
  if (!v.is_number_integer()) fail(path, expected, v);
  if (v.is_number_unsigned()) {
    // Non-negative integers parse as unsigned: both bounds still apply.
    const auto u = v.get<std::uint64_t>();
    if (u > static_cast<std::uint64_t>(hi)) fail(path, expected, v);
    const auto x = static_cast<std::int64_t>(u);
    if (x < lo) fail(path, expected, v);
    return x;
  }
  const auto x = v.get<std::int64_t>();
  if (x < lo || x > hi) fail(path, expected, v);
  return x;
}

inline double read_double(const json& v, const std::string& path, double lo, double hi) {
  const std::string expected = "a number from " + shown(json(lo)) + " to " + shown(json(hi));
  if (!v.is_number()) fail(path, expected, v);
  const double x = v.get<double>();
  if (!(x >= lo && x <= hi)) fail(path, expected, v);
  return x;
}

inline bool read_bool(const json& v, const std::string& path) {
  if (!v.is_boolean()) fail(path, "true or false", v);
  return v.get<bool>();
}

inline std::string read_string(const json& v, const std::string& path, const std::string& what) {
  if (!v.is_string()) fail(path, what, v);
  return v.get<std::string>();
}

inline std::string read_name(const json& v, const std::string& path) {
  const std::string what = "a name of 1 to 64 letters, digits, '_', '-' or '.'";
  std::string s = read_string(v, path, what);
  const bool ok = !s.empty() && s.size() <= 64 &&
                  std::all_of(s.begin(), s.end(), [](char c) {
                    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                           c == '_' || c == '-' || c == '.';
                  });
  if (!ok) fail(path, what, v);
  return s;
}

inline constexpr vtime_ns day_ns = 24LL * 3600 * sim::sec;
inline constexpr vtime_ns duration_max_ns = 100 * day_ns;  // 2400h: no time in a scenario is later

inline vtime_ns read_duration(const json& v, const std::string& path, vtime_ns lo = 0, vtime_ns hi = duration_max_ns) {
  std::string expected = lo > 0 ? "a positive duration such as \"250ms\"" : "a duration such as \"250ms\"";
  if (!v.is_string()) fail(path, expected, v);
  const std::string& text = v.get_ref<const std::string&>();
  const auto d = parse_duration_ns(text);
  if (!d) {
    if (!text.empty() && (text[0] == '-' || text[0] == '+'))
      fail(path, expected + " without a sign", v);
    fail(path, expected + " (digits, an optional fraction, then ns, us, ms, s, m or h; whole nanoseconds)", v);
  }
  if (*d < lo || *d > hi)
    fail(path, "a duration from " + format_duration(lo) + " to " + format_duration(hi), v);
  return *d;
}

// Clock offsets and steps: "-250ms", "+2s", "0ms".
inline vtime_ns read_signed_duration(const json& v, const std::string& path, vtime_ns magnitude_max) {
  const std::string expected = "a signed duration such as \"-250ms\" or \"+2s\"";
  if (!v.is_string()) fail(path, expected, v);
  const auto d = parse_signed_duration_ns(v.get_ref<const std::string&>());
  if (!d)
    fail(path, expected + " (an optional sign, digits, an optional fraction, then ns, us, ms, s, m or h; whole nanoseconds)",
         v);
  if (*d < -magnitude_max || *d > magnitude_max)
    fail(path, "a signed duration from -" + format_duration(magnitude_max) + " to +" + format_duration(magnitude_max),
         v);
  return *d;
}

template <class E>
E read_enum(const json& v, const std::string& path, const std::pair<const char*, E>* options, std::size_t n) {
  std::string expected = "one of";
  for (std::size_t i = 0; i < n; ++i) expected += std::string(i ? ", " : " ") + "\"" + options[i].first + "\"";
  if (!v.is_string()) fail(path, expected, v);
  const std::string s = v.get<std::string>();
  for (std::size_t i = 0; i < n; ++i)
    if (s == options[i].first) return options[i].second;
  fail(path, expected, v);
}

template <class E, std::size_t N>
E read_enum(const json& v, const std::string& path, const std::pair<const char*, E> (&options)[N]) {
  return read_enum(v, path, options, N);
}

template <class E, std::size_t N>
E read_enum(const json& v, const std::string& path, const std::array<std::pair<const char*, E>, N>& options) {
  return read_enum(v, path, options.data(), N);
}


}  // namespace admit::scenario::json_read
