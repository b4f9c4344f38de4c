// json_codec: what every result type's from_json shares (the explore summary and its parts,
// a matrix cell, a run report's header): reading one field of a JSON object read from a file,
// checked, or a codec_error naming its JSON path and what was expected. The program's own
// invariants are ADMIT_ASSERTs; a file is user input, so nothing here asserts on it.
//
// The words are the ones `admitsim merge` has always used: "missing", "expected an object, got
// ...", "expected an integer from 0 to 2^64-1, got ...", with the value shown cut to 80 characters.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace admit::codec {

struct codec_error : std::runtime_error {
  codec_error(std::string p, const std::string& what) : std::runtime_error(what), path(std::move(p)) {}
  std::string path;  // "/seeds/count", "/findings/3/runs/0/broken" ("" for the document itself)
};

// A value as an error message shows it: its JSON, cut to 80 characters.
std::string shown(const nlohmann::ordered_json& j);

// `path` names `obj`; each reader names `path + "/" + key` in its error.
const nlohmann::ordered_json& read_field(const nlohmann::ordered_json& obj, const std::string& path, const char* key);
const nlohmann::ordered_json& read_object(const nlohmann::ordered_json& obj, const std::string& path, const char* key);
const nlohmann::ordered_json& read_array(const nlohmann::ordered_json& obj, const std::string& path, const char* key);
std::uint64_t read_u64(const nlohmann::ordered_json& obj, const std::string& path, const char* key);
// 0 to 2^63-1: a time in nanoseconds, a count kept signed.
std::int64_t read_i64(const nlohmann::ordered_json& obj, const std::string& path, const char* key);
std::string read_string(const nlohmann::ordered_json& obj, const std::string& path, const char* key);
bool read_bool(const nlohmann::ordered_json& obj, const std::string& path, const char* key);
std::optional<std::uint64_t> read_u64_or_null(const nlohmann::ordered_json& obj, const std::string& path, const char* key);
std::optional<std::string> read_string_or_null(const nlohmann::ordered_json& obj, const std::string& path,
                                               const char* key);
std::vector<std::string> read_strings(const nlohmann::ordered_json& obj, const std::string& path, const char* key);
// An object holding no key but `keys` (a message read strictly): else a codec_error naming the first other key.
void expect_only_keys(const nlohmann::ordered_json& obj, const std::string& path,
                      std::initializer_list<const char*> keys);

// The array at `key`, each element an object read by `read(element, its path)`.
template <typename Read>
auto read_list(const nlohmann::ordered_json& obj, const std::string& path, const char* key, Read read) {
  const nlohmann::ordered_json& a = read_array(obj, path, key);
  std::vector<decltype(read(a, path))> out;
  out.reserve(a.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    const std::string p = path + "/" + key + "/" + std::to_string(i);
    if (!a[i].is_object()) throw codec_error(p, "expected an object");
    out.push_back(read(a[i], p));
  }
  return out;
}

// A seed and a text about it, {"seed": S, `what`: T}, or null (a cell's first error, a search's first
// inconclusive seed): the writer's side and the reader's.
nlohmann::ordered_json seed_and(const std::optional<std::pair<std::uint64_t, std::string>>& p, const char* what);
std::optional<std::pair<std::uint64_t, std::string>> read_seed_and(const nlohmann::ordered_json& obj,
                                                                     const std::string& path, const char* key,
                                                                     const char* what);

// The writer's side of an optional: its value, or null.
template <typename T>
nlohmann::ordered_json or_null(const std::optional<T>& v) {
  return v ? nlohmann::ordered_json(*v) : nlohmann::ordered_json(nullptr);
}

// Every result file's bytes: 2-space indentation, invalid UTF-8 replaced, a final newline.
std::string render_json(const nlohmann::ordered_json& j);

}  // namespace admit::codec
