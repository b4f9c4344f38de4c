#include "sim/explore/scenario_patch.hpp"

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <limits>

#include "gate/admit_assert.hpp"
#include "sim/scenario/duration.hpp"

namespace admit::explore {

namespace {

using json = nlohmann::ordered_json;

// Decimal digits after an optional '-', within int64.
std::optional<std::int64_t> parse_integer(std::string_view s) {
  if (s.empty()) return std::nullopt;
  std::int64_t v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc{} || end != s.data() + s.size()) return std::nullopt;
  return v;
}

// A finite decimal number: digits, an optional fraction, an optional exponent, an optional '-'.
std::optional<double> parse_number(std::string_view s) {
  if (s.empty() || s.size() > 64) return std::nullopt;
  for (const char c : s)
    if (!((c >= '0' && c <= '9') || c == '.' || c == '-' || c == 'e' || c == 'E' || c == '+')) return std::nullopt;
  const std::string z(s);
  char* end = nullptr;
  const double v = std::strtod(z.c_str(), &end);
  if (end != z.c_str() + z.size() || !std::isfinite(v)) return std::nullopt;
  return v;
}

std::string signed_duration(std::int64_t ns, bool sign) {
  if (ns == std::numeric_limits<std::int64_t>::min()) return "-" + scenario::format_duration(0);  // unreachable: parse bounds it
  if (ns < 0) return "-" + scenario::format_duration(-ns);
  return (sign ? "+" : "") + scenario::format_duration(ns);
}

}  // namespace

target_or_error find_target(const json& doc, const std::string& pointer) {
  target_or_error out;
  if (pointer.empty() || pointer.front() != '/') {
    out.why = "expected a JSON Pointer to a field of the scenario, such as /gate/lease, got \"" + pointer + "\"";
    return out;
  }
  const json* at = nullptr;
  try {
    const json::json_pointer ptr(pointer);
    if (doc.contains(ptr)) at = &doc.at(ptr);
  } catch (const json::exception&) {
    out.why = "expected a JSON Pointer (RFC 6901: ~0 is ~, ~1 is /), got \"" + pointer + "\"";
    return out;
  }
  if (at == nullptr) {
    out.why = "expected a field the scenario has (a sweep replaces a value, it adds none: write the field with any "
              "valid value first), got \"" + pointer + "\", which names nothing";
    return out;
  }
  param_target t;
  t.pointer = pointer;
  if (at->is_string()) {
    const std::string& s = at->get_ref<const std::string&>();
    const auto ns = scenario::parse_signed_duration_ns(s);
    if (!ns) {
      out.why = "expected a field holding a duration, an integer or a number, got \"" + pointer +
                "\", which holds the text \"" + s + "\"";
      return out;
    }
    t.kind = param_kind::duration;
    t.signed_text = !s.empty() && (s.front() == '+' || s.front() == '-');
    t.current_n = *ns;
  } else if (at->is_number_integer()) {
    t.kind = param_kind::integer;
    if (at->is_number_unsigned() && at->get<std::uint64_t>() > static_cast<std::uint64_t>(INT64_MAX)) {
      out.why = "expected a field holding an integer within int64, got \"" + pointer + "\"";
      return out;
    }
    t.current_n = at->get<std::int64_t>();
  } else if (at->is_number_float()) {
    t.kind = param_kind::number;
    t.current_x = at->get<double>();
  } else {
    out.why = "expected a field holding a duration, an integer or a number, got \"" + pointer + "\", which holds " +
              (at->is_object() ? "an object" : at->is_array() ? "an array" : at->is_boolean() ? "a boolean" : "null");
    return out;
  }
  out.target = t;
  return out;
}

std::optional<param_value> parse_value(const param_target& t, std::string_view text) {
  param_value v;
  switch (t.kind) {
    case param_kind::duration: {
      const auto ns = scenario::parse_signed_duration_ns(text);
      if (!ns) return std::nullopt;
      v.n = *ns;
      return v;
    }
    case param_kind::integer: {
      const auto n = parse_integer(text);
      if (!n) return std::nullopt;
      v.n = *n;
      return v;
    }
    case param_kind::number: {
      const auto x = parse_number(text);
      if (!x) return std::nullopt;
      v.x = *x;
      return v;
    }
  }
  return std::nullopt;
}

json value_json(const param_target& t, const param_value& v) {
  switch (t.kind) {
    case param_kind::duration: return signed_duration(v.n, t.signed_text);
    case param_kind::integer: return v.n;
    case param_kind::number: return v.x;
  }
  return nullptr;
}

std::string value_exact(const param_target& t, const param_value& v) {
  const json j = value_json(t, v);
  return j.is_string() ? j.get<std::string>() : j.dump();
}

std::string value_text(const param_target& t, const param_value& v, std::int64_t resolution_ns) {
  if (t.kind != param_kind::duration) return value_exact(t, v);
  return (t.signed_text && v.n >= 0 ? "+" : "") + scenario::format_duration_for_people(v.n, resolution_ns);
}

double value_axis(const param_target& t, const param_value& v) {
  return t.kind == param_kind::number ? v.x : static_cast<double>(v.n);
}

json patched(const json& doc, const param_target& t, const param_value& v) {
  json out = doc;
  out[json::json_pointer(t.pointer)] = value_json(t, v);
  return out;
}

}  // namespace admit::explore
