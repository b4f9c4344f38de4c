// json_schema_subset: a small JSON Schema validator for the tests.
//
// It understands the part of JSON Schema (draft 2020-12) that
// scenarios/schema.json uses, and refuses a schema that uses anything else,
// so the schema stays within what this validator checks:
//   $ref (only "#/$defs/NAME"), type, properties, required,
//   additionalProperties (false or a schema), enum, const, pattern
//   (std::regex ECMAScript, unanchored as the standard says), minimum,
//   maximum, minLength, maxLength (in code points), minItems, maxItems,
//   uniqueItems, items, minProperties, oneOf, anyOf, allOf,
// plus the annotations $schema, $id, $defs, title, description, default,
// examples and $comment. "integer" is any number with no fractional part
// (so 8.0 is an integer, as the standard says; the loader is stricter).
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <regex>
#include <stdexcept>
#include <string>

#include <nlohmann/json.hpp>

namespace admit::test {

class schema_subset_validator {
 public:
  using json = nlohmann::ordered_json;

  // Throws std::invalid_argument naming the first keyword outside the subset
  // or a $ref that does not resolve.
  explicit schema_subset_validator(json schema);

  // The first error found ("/instance/path: what"), or nullopt if valid.
  std::optional<std::string> validate(const json& instance) const;

 private:
  void check_schema(const json& s, const std::string& where);
  bool valid(const json& s, const json& v, const std::string& path, std::string* why) const;
  const json& resolve(const std::string& ref) const;
  const std::regex& regex_for(const std::string& pattern) const;

  json root_;
  mutable std::map<std::string, std::unique_ptr<std::regex>> regexes_;
};

}  // namespace admit::test
