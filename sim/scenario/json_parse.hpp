// json_parse: JSON text -> nlohmann::ordered_json in time linear in the text,
// or one scenario_error naming where the text went wrong.
//
// Why not nlohmann's own parse with a callback: its callback parser looks
// through the parent container for discarded values every time an object or
// array closes, so a document of n small objects costs O(n^2) (a 900 KB array
// of {} took 25 s). This parser is a SAX handler (json::sax_parse) that
// appends each value where it belongs and keeps, for each open object only,
// the set of its keys, so that duplicates are refused without scanning the
// object (an ordered_json object is a vector).
//
// What it refuses, each with the JSON Pointer of the value being read:
//   - a key given twice in one object;
//   - nesting deeper than max_depth;
//   - a number too large for a double ("1e400");
//   - anything the lexer refuses (the message carries line and column);
//   - a NUL byte: nlohmann's lexer takes a NUL as the end of the input, so
//     without this check `{...}\0garbage` would parse as `{...}`.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "sim/scenario/json_path_error.hpp"

namespace admit::scenario {

struct json_parse_options {
  // No scenario needs more than a dozen levels; a bound keeps every later walk
  // over the document (checks, messages, dumps) shallow.
  std::size_t max_depth = 64;
};

// Throws scenario_error, also when memory runs out while building the
// document ("expected JSON text whose document fits in memory, ..."): the
// partial document is dismantled without allocating first. The messages are those of load_scenario_text
// (tests/scenario/malformed/expected.json holds them).
nlohmann::ordered_json parse_json_text(std::string_view text, const json_parse_options& opts = {});

// Destroys a document's values without allocating, leaving it null.
// nlohmann's own destructor flattens a non-empty array or object into a
// heap-allocated stack first (to avoid deep recursion), so destroying a large
// document after a std::bad_alloc, while unwinding, could throw from a
// noexcept destructor and abort the process. This takes the tree apart from
// its last leaves inward, so that every value destroyed is a scalar or an
// empty container: it only frees. O(values x depth); the depth is bounded by
// json_parse_options::max_depth for every document parse_json_text builds.
void dismantle_json(nlohmann::ordered_json& doc) noexcept;

// Dismantles `doc` when it goes out of scope, however the scope is left.
struct json_dismantler {
  explicit json_dismantler(nlohmann::ordered_json& d) : doc(d) {}
  nlohmann::ordered_json& doc;
  json_dismantler(const json_dismantler&) = delete;
  json_dismantler& operator=(const json_dismantler&) = delete;
  ~json_dismantler() { dismantle_json(doc); }
};

// Bytes outside printable ASCII as \xNN, so that a message stays one clean line.
std::string printable_bytes(std::string_view s);

}  // namespace admit::scenario
