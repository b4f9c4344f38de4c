#include "sim/codec/json_codec.hpp"

namespace admit::codec {

using json = nlohmann::ordered_json;

std::string shown(const json& j) {
  std::string s = j.dump(-1, ' ', false, json::error_handler_t::replace);
  return s.size() > 80 ? s.substr(0, 77) + "..." : s;
}

const json& read_field(const json& obj, const std::string& path, const char* key) {
  const auto it = obj.find(key);
  if (it == obj.end()) throw codec_error(path + "/" + key, "missing");
  return *it;
}

const json& read_object(const json& obj, const std::string& path, const char* key) {
  const json& j = read_field(obj, path, key);
  if (!j.is_object()) throw codec_error(path + "/" + key, "expected an object, got " + shown(j));
  return j;
}

json seed_and(const std::optional<std::pair<std::uint64_t, std::string>>& p, const char* what) {
  if (!p) return nullptr;
  json j;
  j["seed"] = p->first;
  j[what] = p->second;
  return j;
}

std::optional<std::pair<std::uint64_t, std::string>> read_seed_and(const json& obj, const std::string& path,
                                                                     const char* key, const char* what) {
  const json& o = read_field(obj, path, key);
  if (o.is_null()) return std::nullopt;
  const std::string p = path + "/" + key;
  if (!o.is_object()) throw codec_error(p, "expected an object or null, got " + shown(o));
  return std::make_pair(read_u64(o, p, "seed"), read_string(o, p, what));
}

const json& read_array(const json& obj, const std::string& path, const char* key) {
  const json& j = read_field(obj, path, key);
  if (!j.is_array()) throw codec_error(path + "/" + key, "expected an array, got " + shown(j));
  return j;
}

std::uint64_t read_u64(const json& obj, const std::string& path, const char* key) {
  const json& j = read_field(obj, path, key);
  if (!j.is_number_unsigned() && !(j.is_number_integer() && j.get<std::int64_t>() >= 0))
    throw codec_error(path + "/" + key, "expected an integer from 0 to 2^64-1, got " + shown(j));
  return j.get<std::uint64_t>();
}

std::int64_t read_i64(const json& obj, const std::string& path, const char* key) {
  const json& j = read_field(obj, path, key);
  const bool in_range = (j.is_number_unsigned() && j.get<std::uint64_t>() <= static_cast<std::uint64_t>(INT64_MAX)) ||
                        (j.is_number_integer() && !j.is_number_unsigned() && j.get<std::int64_t>() >= 0);
  if (!in_range) throw codec_error(path + "/" + key, "expected an integer from 0 to 2^63-1, got " + shown(j));
  return j.get<std::int64_t>();
}

std::string read_string(const json& obj, const std::string& path, const char* key) {
  const json& j = read_field(obj, path, key);
  if (!j.is_string()) throw codec_error(path + "/" + key, "expected a string, got " + shown(j));
  return j.get<std::string>();
}

bool read_bool(const json& obj, const std::string& path, const char* key) {
  const json& j = read_field(obj, path, key);
  if (!j.is_boolean()) throw codec_error(path + "/" + key, "expected true or false, got " + shown(j));
  return j.get<bool>();
}

std::optional<std::uint64_t> read_u64_or_null(const json& obj, const std::string& path, const char* key) {
  if (read_field(obj, path, key).is_null()) return std::nullopt;
  return read_u64(obj, path, key);
}

std::optional<std::string> read_string_or_null(const json& obj, const std::string& path, const char* key) {
  if (read_field(obj, path, key).is_null()) return std::nullopt;
  return read_string(obj, path, key);
}

std::vector<std::string> read_strings(const json& obj, const std::string& path, const char* key) {
  const json& a = read_array(obj, path, key);
  std::vector<std::string> out;
  out.reserve(a.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (!a[i].is_string())
      throw codec_error(path + "/" + key + "/" + std::to_string(i), "expected a string, got " + shown(a[i]));
    out.push_back(a[i].get<std::string>());
  }
  return out;
}

void expect_only_keys(const json& obj, const std::string& path, std::initializer_list<const char*> keys) {
  if (!obj.is_object()) throw codec_error(path, "expected an object, got " + shown(obj));
  for (auto it = obj.begin(); it != obj.end(); ++it) {
    bool known = false;
    for (const char* k : keys) known = known || it.key() == k;
    if (known) continue;
    std::string allowed;
    for (const char* k : keys) allowed += (allowed.empty() ? "" : ", ") + std::string(k);
    throw codec_error(path + "/" + it.key(), "unexpected key; expected only " + allowed);
  }
}

std::string render_json(const json& j) { return j.dump(2, ' ', false, json::error_handler_t::replace) + "\n"; }

}  // namespace admit::codec
