#include "tests/scenario/json_schema_subset.hpp"

#include <cmath>
#include <set>
#include <vector>

namespace admit::test {

namespace {

using json = nlohmann::ordered_json;

const std::set<std::string>& known_keywords() {
  static const std::set<std::string> k = {
      "$ref",      "type",      "properties", "required",   "additionalProperties", "enum",        "const",
      "pattern",   "minimum",   "maximum",    "minLength",  "maxLength",            "minItems",    "maxItems",
      "uniqueItems", "items",   "minProperties", "oneOf",   "anyOf",                "allOf",       "$schema",
      "$id",       "$defs",     "title",      "description", "default",             "examples",    "$comment"};
  return k;
}

bool is_integer_value(const json& v) {
  if (v.is_number_integer()) return true;
  if (!v.is_number_float()) return false;
  const double d = v.get<double>();
  return std::isfinite(d) && std::floor(d) == d;
}

bool has_type(const json& v, const std::string& t) {
  if (t == "object") return v.is_object();
  if (t == "array") return v.is_array();
  if (t == "string") return v.is_string();
  if (t == "boolean") return v.is_boolean();
  if (t == "null") return v.is_null();
  if (t == "number") return v.is_number();
  if (t == "integer") return is_integer_value(v);
  throw std::invalid_argument("unknown type " + t);
}

// a < b, a == b or a > b as -1, 0, 1: exactly when both are integers.
int compare_numbers(const json& a, const json& b) {
  if (a.is_number_integer() && b.is_number_integer()) {
    const bool a_neg = !a.is_number_unsigned() && a.get<std::int64_t>() < 0;
    const bool b_neg = !b.is_number_unsigned() && b.get<std::int64_t>() < 0;
    if (a_neg != b_neg) return a_neg ? -1 : 1;
    if (a_neg) {
      const auto x = a.get<std::int64_t>(), y = b.get<std::int64_t>();
      return x < y ? -1 : x > y ? 1 : 0;
    }
    const auto x = a.get<std::uint64_t>(), y = b.get<std::uint64_t>();
    return x < y ? -1 : x > y ? 1 : 0;
  }
  const double x = a.get<double>(), y = b.get<double>();
  return x < y ? -1 : x > y ? 1 : 0;
}

std::size_t code_points(const std::string& s) {
  std::size_t n = 0;
  for (unsigned char c : s)
    if ((c & 0xC0) != 0x80) ++n;
  return n;
}

std::string child(const std::string& path, const std::string& key) { return path + "/" + key; }

bool set_why(std::string* why, const std::string& path, const std::string& what) {
  if (why != nullptr && why->empty()) *why = (path.empty() ? "/" : path) + ": " + what;
  return false;
}

}  // namespace

schema_subset_validator::schema_subset_validator(json schema) : root_(std::move(schema)) {
  check_schema(root_, "#");
  if (root_.contains("$defs"))
    for (auto it = root_["$defs"].begin(); it != root_["$defs"].end(); ++it)
      check_schema(it.value(), "#/$defs/" + it.key());
}

void schema_subset_validator::check_schema(const json& s, const std::string& where) {
  if (!s.is_object()) throw std::invalid_argument(where + ": a schema must be an object");
  for (auto it = s.begin(); it != s.end(); ++it) {
    if (known_keywords().count(it.key()) == 0)
      throw std::invalid_argument(where + ": keyword \"" + it.key() + "\" is outside the supported subset");
  }
  if (s.contains("$ref")) (void)resolve(s["$ref"].get<std::string>());
  if (s.contains("pattern")) (void)regex_for(s["pattern"].get<std::string>());
  if (s.contains("type") && s["type"].is_string()) (void)has_type(json(nullptr), s["type"].get<std::string>());
  if (s.contains("properties"))
    for (auto it = s["properties"].begin(); it != s["properties"].end(); ++it)
      check_schema(it.value(), where + "/properties/" + it.key());
  if (s.contains("additionalProperties") && s["additionalProperties"].is_object())
    check_schema(s["additionalProperties"], where + "/additionalProperties");
  if (s.contains("items")) check_schema(s["items"], where + "/items");
  for (const char* k : {"oneOf", "anyOf", "allOf"})
    if (s.contains(k))
      for (std::size_t i = 0; i < s[k].size(); ++i) check_schema(s[k][i], where + "/" + k + "/" + std::to_string(i));
}

const json& schema_subset_validator::resolve(const std::string& ref) const {
  const std::string prefix = "#/$defs/";
  if (ref.rfind(prefix, 0) != 0) throw std::invalid_argument("unsupported $ref " + ref);
  const std::string name = ref.substr(prefix.size());
  if (!root_.contains("$defs") || !root_["$defs"].contains(name)) throw std::invalid_argument("dangling $ref " + ref);
  return root_["$defs"][name];
}

const std::regex& schema_subset_validator::regex_for(const std::string& pattern) const {
  auto it = regexes_.find(pattern);
  if (it == regexes_.end())
    it = regexes_.emplace(pattern, std::make_unique<std::regex>(pattern, std::regex::ECMAScript)).first;
  return *it->second;
}

std::optional<std::string> schema_subset_validator::validate(const json& instance) const {
  std::string why;
  if (valid(root_, instance, "", &why)) return std::nullopt;
  return why.empty() ? std::string("/: invalid") : why;
}

bool schema_subset_validator::valid(const json& s, const json& v, const std::string& path, std::string* why) const {
  if (s.contains("$ref") && !valid(resolve(s["$ref"].get<std::string>()), v, path, why)) return false;
  if (s.contains("type")) {
    const json& t = s["type"];
    bool ok = false;
    if (t.is_string()) ok = has_type(v, t.get<std::string>());
    else
      for (const auto& one : t) ok = ok || has_type(v, one.get<std::string>());
    if (!ok) return set_why(why, path, "expected type " + t.dump());
  }
  if (s.contains("enum")) {
    bool ok = false;
    for (const auto& e : s["enum"]) ok = ok || e == v;
    if (!ok) return set_why(why, path, "not one of " + s["enum"].dump());
  }
  if (s.contains("const") && !(s["const"] == v)) return set_why(why, path, "expected " + s["const"].dump());
  if (v.is_string()) {
    const std::string& str = v.get_ref<const std::string&>();
    if (s.contains("pattern") && !std::regex_search(str, regex_for(s["pattern"].get<std::string>())))
      return set_why(why, path, "does not match " + s["pattern"].get<std::string>());
    if (s.contains("minLength") && code_points(str) < s["minLength"].get<std::size_t>())
      return set_why(why, path, "too short");
    if (s.contains("maxLength") && code_points(str) > s["maxLength"].get<std::size_t>())
      return set_why(why, path, "too long");
  }
  if (v.is_number()) {
    if (s.contains("minimum") && compare_numbers(v, s["minimum"]) < 0)
      return set_why(why, path, "below the minimum " + s["minimum"].dump());
    if (s.contains("maximum") && compare_numbers(v, s["maximum"]) > 0)
      return set_why(why, path, "above the maximum " + s["maximum"].dump());
  }
  if (v.is_array()) {
    if (s.contains("minItems") && v.size() < s["minItems"].get<std::size_t>()) return set_why(why, path, "too few items");
    if (s.contains("maxItems") && v.size() > s["maxItems"].get<std::size_t>()) return set_why(why, path, "too many items");
    if (s.contains("uniqueItems") && s["uniqueItems"].get<bool>())
      for (std::size_t i = 0; i < v.size(); ++i)
        for (std::size_t j = i + 1; j < v.size(); ++j)
          if (v[i] == v[j]) return set_why(why, child(path, std::to_string(j)), "repeats an earlier item");
    if (s.contains("items"))
      for (std::size_t i = 0; i < v.size(); ++i)
        if (!valid(s["items"], v[i], child(path, std::to_string(i)), why)) return false;
  }
  if (v.is_object()) {
    if (s.contains("minProperties") && v.size() < s["minProperties"].get<std::size_t>())
      return set_why(why, path, "too few properties");
    if (s.contains("required"))
      for (const auto& r : s["required"])
        if (!v.contains(r.get<std::string>())) return set_why(why, path, "missing " + r.dump());
    for (auto it = v.begin(); it != v.end(); ++it) {
      const bool named = s.contains("properties") && s["properties"].contains(it.key());
      if (named) {
        if (!valid(s["properties"][it.key()], it.value(), child(path, it.key()), why)) return false;
      } else if (s.contains("additionalProperties")) {
        const json& ap = s["additionalProperties"];
        if (ap.is_boolean() && !ap.get<bool>()) return set_why(why, child(path, it.key()), "unknown property");
        if (ap.is_object() && !valid(ap, it.value(), child(path, it.key()), why)) return false;
      }
    }
  }
  if (s.contains("allOf"))
    for (const auto& sub : s["allOf"])
      if (!valid(sub, v, path, why)) return false;
  if (s.contains("anyOf")) {
    bool ok = false;
    for (const auto& sub : s["anyOf"]) ok = ok || valid(sub, v, path, nullptr);
    if (!ok) return set_why(why, path, "matches none of anyOf");
  }
  if (s.contains("oneOf")) {
    int matches = 0;
    for (const auto& sub : s["oneOf"])
      if (valid(sub, v, path, nullptr)) ++matches;
    if (matches != 1)
      return set_why(why, path, matches == 0 ? "matches none of oneOf" : "matches more than one of oneOf");
  }
  return true;
}

}  // namespace admit::test
