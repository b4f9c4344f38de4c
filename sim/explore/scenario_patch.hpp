// scenario_patch: one value of a scenario document replaced, by JSON Pointer
// (RFC 6901), as `admitsim sweep --param PATH` replaces it (docs/sweep.md).
//
// Model. The pointer must name a field the document already has: a sweep
// replaces a value and never adds one, since a missing field has no type to
// read the sweep's values by (and adding one would change what the scenario
// means beyond the one parameter). The field's current value says how the
// sweep's values are read and written:
//   a duration string ("15s")        durations, written as the shortest
//                                    spelling; a field written with a sign
//                                    ("+2s", "-250ms") is written signed;
//   an integer                       integers;
//   a number with a fraction (0.8)   numbers;
// anything else (an object, an array, a boolean, null, a string that is no
// duration) is refused. Every value is an integer (nanoseconds for a
// duration) or, for a number field, a double; the loader then judges the
// patched document as it judges a file, so an out-of-range value gets the
// loader's own message.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace admit::explore {

enum class param_kind { duration, integer, number };

// What a pointer names and how its values read.
struct param_target {
  std::string pointer;
  param_kind kind = param_kind::integer;
  bool signed_text = false;  // a duration written with a sign
  // The field's value in the document, as a value of the sweep.
  std::int64_t current_n = 0;
  double current_x = 0;
};

// One value of a sweep: n for a duration (ns) or an integer, x for a number.
struct param_value {
  std::int64_t n = 0;
  double x = 0;
};

// The field `pointer` names in `doc`, or why it cannot be swept (a message
// for the option --param: "expected ..., got ...").
struct target_or_error {
  std::optional<param_target> target;
  std::string why;
};
target_or_error find_target(const nlohmann::ordered_json& doc, const std::string& pointer);

// `text` as a value of `t` (a duration such as "2.5s" or "-1s", an integer,
// a number); nullopt if it is not one.
std::optional<param_value> parse_value(const param_target& t, std::string_view text);

// The value as the document holds it ("2.5s", "+3s", 4, 0.8).
nlohmann::ordered_json value_json(const param_target& t, const param_value& v);
// The value exactly, as the field writes it, without quotes ("+2500ms", "4", "0.8"): for text a
// program or a person types back (a command line).
std::string value_exact(const param_target& t, const param_value& v);
// The value for people: a duration in the unit it reaches with at most three decimals, more when
// values `resolution_ns` apart must read apart ("+2.5s", "1.996s": scenario::format_duration_for_people);
// an integer or a number as value_exact writes it (a number in its shortest exact form).
std::string value_text(const param_target& t, const param_value& v, std::int64_t resolution_ns = 0);
// The value on a number line (ns for a duration): the plot's x.
double value_axis(const param_target& t, const param_value& v);

// A copy of `doc` with the value at `t.pointer` replaced by `v`.
nlohmann::ordered_json patched(const nlohmann::ordered_json& doc, const param_target& t, const param_value& v);

}  // namespace admit::explore
