// Tests that scenarios/schema.json, the loader and the catalogue agree:
// every catalogue file is valid against the schema and loads; the schema
// rejects every malformed file the loader rejects, except those whose rule a
// schema cannot state (listed with the reason in malformed/expected.json);
// and the schema stays within the subset the test's validator implements.
// The same for the protocol schema (gate/redis/protocols/schema.json), the
// built-in protocol files and the malformed protocol table
// (tests/scenario/malformed_protocols/).
#include <algorithm>
#include <catch2/catch.hpp>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "sim/scenario/duration.hpp"
#include "sim/scenario/loader.hpp"
#include "tests/scenario/json_schema_subset.hpp"
#include "tests/scenario/scenario_test_support.hpp"

namespace {

namespace fs = std::filesystem;
using json = nlohmann::ordered_json;
using admit::test::read_bytes;
using admit::test::read_json;
using admit::test::schema_subset_validator;
using admit::test::source_path;

const json& schema() {
  static const json s = read_json(source_path("scenarios/schema.json"));
  return s;
}

const schema_subset_validator& validator() {
  static const schema_subset_validator v(schema());
  return v;
}

std::vector<fs::path> catalogue() {
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(source_path("scenarios")))
    if (e.path().extension() == ".json" && e.path().filename() != "schema.json") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  return files;
}

// Every schema object under `s` that declares "properties": each property
// must carry a description.
void collect_undescribed(const json& s, const std::string& where, std::vector<std::string>& out) {
  if (s.is_array()) {
    for (std::size_t i = 0; i < s.size(); ++i) collect_undescribed(s[i], where + "/" + std::to_string(i), out);
    return;
  }
  if (!s.is_object()) return;
  if (s.contains("properties") && s["properties"].is_object())
    for (auto it = s["properties"].begin(); it != s["properties"].end(); ++it)
      if (!it.value().contains("description")) out.push_back(where + "/properties/" + it.key());
  for (auto it = s.begin(); it != s.end(); ++it)
    if (it.key() != "enum" && it.key() != "const") collect_undescribed(it.value(), where + "/" + it.key(), out);
}

// Every object schema under `root` with named properties that does not close
// itself (additionalProperties), except the anyOf branches under $defs that
// only add constraints to a closed parent.
std::vector<std::string> open_objects(const json& root) {
  std::vector<std::string> open;
  std::vector<std::pair<const json*, std::string>> stack{{&root, "#"}};
  while (!stack.empty()) {
    auto [s, where] = stack.back();
    stack.pop_back();
    if (s->is_object()) {
      const bool refines = where.find("/anyOf/") != std::string::npos &&
                           where.find("/anyOf/") > where.rfind("$defs/");
      if (s->contains("properties") && !s->contains("additionalProperties") && !refines) open.push_back(where);
      for (auto it = s->begin(); it != s->end(); ++it)
        if (it.key() != "enum" && it.key() != "const") stack.emplace_back(&it.value(), where + "/" + it.key());
    } else if (s->is_array()) {
      for (std::size_t i = 0; i < s->size(); ++i) stack.emplace_back(&(*s)[i], where + "/" + std::to_string(i));
    }
  }
  return open;
}

}  // namespace

TEST_CASE("the schema stays within the validator's subset and describes every property") {
  // Goal: schema.json is checkable here and documented for editors. Method: the validator refuses unknown keywords;
  // walk the schema for properties without a description and objects without additionalProperties: false.
  REQUIRE_NOTHROW(validator());
  CHECK(schema()["$schema"] == "https://json-schema.org/draft/2020-12/schema");
  std::vector<std::string> undescribed;
  collect_undescribed(schema(), "#", undescribed);
  CHECK(undescribed.empty());
  for (const auto& u : undescribed) UNSCOPED_INFO(u);
  // Every object schema with named properties closes itself, except the
  // anyOf/oneOf branches that only add constraints to a closed parent.
  const std::vector<std::string> open = open_objects(schema());
  CHECK(open.empty());
  for (const auto& o : open) UNSCOPED_INFO(o);
}

TEST_CASE("the schema knows every invariant the loader knows") {
  // Goal: a file naming any invariant passes both. Method: each of invariant_names against the schema's enum. (The
  // schema may list a name before the loader's list gains it, while a new monitor is on its way.)
  const json& names = schema()["$defs"]["invariant"]["enum"];
  for (const char* n : admit::scenario::invariant_names) {
    CAPTURE(n);
    CHECK(std::find(names.begin(), names.end(), json(n)) != names.end());
  }
}

TEST_CASE("the validator can fail: it rejects what the schema forbids") {
  // Goal: an all-accepting validator would make the agreement tests vacuous. Method: small documents that break one
  // rule each, against a valid baseline.
  const json ok = json::parse(R"({"name": "t", "gate": {"kind": "fifo", "max_active": 1},
      "workload": {"requests": [{"at": "0ms"}]}})");
  REQUIRE_FALSE(validator().validate(ok).has_value());
  auto broken = [&](const char* pointer, json value) {
    json d = ok;
    d[json::json_pointer(pointer)] = std::move(value);
    return validator().validate(d);
  };
  CHECK(broken("/gate/max_active", 0).has_value());
  CHECK(broken("/gate/max_active", "1").has_value());
  CHECK(broken("/gate/extra", 1).has_value());
  CHECK(broken("/workload/requests/0/at", "5").has_value());
  CHECK(broken("/gates", json::array()).has_value());  // gate and gates together
  CHECK(broken("/workload/requests", json::array()).has_value());
  CHECK(broken("/expect", json::parse(R"({"verdict": "pass", "violated": ["liveness"]})")).has_value());
  CHECK_FALSE(broken("/gate/max_active", 8.0).has_value());  // an integer to JSON Schema, not to the loader
}

TEST_CASE("every catalogue scenario is valid against the schema and loads") {
  // Goal: the catalogue, the schema and the loader agree. Method: validate and load each scenarios/*.json.
  const auto files = catalogue();
  REQUIRE(files.size() >= 4);
  for (const auto& f : files) {
    CAPTURE(f.filename().string());
    const std::string bytes = read_bytes(f.string());
    const auto problem = validator().validate(json::parse(bytes));
    CHECK(problem.value_or("") == "");
    CHECK(admit::test::file_rejection(f.string()) == "");
  }
}

TEST_CASE("the schema rejects the malformed table, or the table says why it cannot") {
  // Goal: the schema says as much as a schema can. Method: each file of tests/scenario/malformed, parsed without the
  // loader's duplicate-key check, against the schema; "schema" in expected.json is "reject", "not JSON", or
  // "loader only: why", and a file marked loader-only must really pass the schema (so the note stays true).
  const json expected = read_json(source_path("tests/scenario/malformed/expected.json"));
  std::size_t rejected = 0, loader_only = 0, not_json = 0;
  for (auto it = expected.begin(); it != expected.end(); ++it) {
    CAPTURE(it.key());
    const std::string bytes = read_bytes(source_path("tests/scenario/malformed/" + it.key()));
    const std::string note = it.value().at("schema").get<std::string>();
    json doc;
    bool parsed = true;
    try {
      doc = json::parse(bytes);
    } catch (const json::exception&) {
      parsed = false;
    }
    if (note == "not JSON") {
      CHECK_FALSE(parsed);
      ++not_json;
      continue;
    }
    REQUIRE(parsed);
    const auto problem = validator().validate(doc);
    if (note == "reject") {
      CHECK(problem.has_value());
      ++rejected;
    } else {
      REQUIRE(note.rfind("loader only: ", 0) == 0);
      CHECK(problem.value_or("") == "");
      ++loader_only;
    }
  }
  CHECK(rejected >= 30);
  CHECK(not_json >= 4);
  CHECK(rejected + loader_only + not_json == expected.size());
}

TEST_CASE("the schema's duration patterns and parse_duration_ns agree on the grammar") {
  // Goal: editors and the loader read durations alike. Method: a table of spellings through the patterns and the
  // parsers; the loader additionally rejects what is not whole nanoseconds or overflows, which a pattern cannot see.
  // One validator per definition: {"$ref": "#/$defs/NAME"} beside the schema's $defs.
  std::map<std::string, schema_subset_validator> by_def;
  auto matches = [&](const std::string& def, const std::string& text) {
    auto it = by_def.find(def);
    if (it == by_def.end()) {
      json s{{"$ref", "#/$defs/" + def}, {"$defs", schema()["$defs"]}};
      it = by_def.emplace(def, schema_subset_validator(std::move(s))).first;
    }
    return !it->second.validate(json(text)).has_value();
  };
  const std::vector<std::string> spellings = {"0ms", "350ms", "15s", "2m", "1h", "1.5s", "0.000000001s", "12ns", "3us",
                                              "1.0s", "5", "-5ms", "+5ms", "5 ms", "5MS", "1e3ms", ".5s", "5.s", "ms",
                                              "5sec", "1.5ns", "0.0001us", "99999999999999999999h", ""};
  for (const auto& s : spellings) {
    CAPTURE(s);
    const bool loader = admit::scenario::parse_duration_ns(s).has_value();
    const bool pattern = matches("duration", s);
    const bool exactness_or_range = s == "1.5ns" || s == "0.0001us" || s == "99999999999999999999h";
    if (exactness_or_range) {
      CHECK(pattern);
      CHECK_FALSE(loader);
    } else {
      CHECK(pattern == loader);
    }
    const bool signed_loader = admit::scenario::parse_signed_duration_ns(s).has_value();
    if (!exactness_or_range) CHECK(matches("signed_duration", s) == signed_loader);
  }
  CHECK(matches("positive_duration", "1ns"));
  CHECK_FALSE(matches("positive_duration", "0ms"));
  CHECK_FALSE(matches("positive_duration", "0.000s"));
  CHECK(matches("nonzero_signed_duration", "-1ms"));
  CHECK_FALSE(matches("nonzero_signed_duration", "-0.0s"));
}

// --- the protocol schema ------------------------------------------------------

namespace {

const json& protocol_schema() {
  static const json s = read_json(source_path("gate/redis/protocols/schema.json"));
  return s;
}

const schema_subset_validator& protocol_validator() {
  static const schema_subset_validator v(protocol_schema());
  return v;
}

std::vector<fs::path> builtin_protocols() {
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(source_path("gate/redis/protocols")))
    if (e.path().extension() == ".json" && e.path().filename() != "schema.json") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  return files;
}

}  // namespace

TEST_CASE("the protocol schema stays within the validator's subset, describes every property and closes its objects") {
  // Goal: gate/redis/protocols/schema.json is checkable here and documented for editors. Method: as for the scenario
  // schema: the validator refuses unknown keywords; walk for undescribed properties and open objects.
  REQUIRE_NOTHROW(protocol_validator());
  CHECK(protocol_schema()["$schema"] == "https://json-schema.org/draft/2020-12/schema");
  std::vector<std::string> undescribed;
  collect_undescribed(protocol_schema(), "#", undescribed);
  CHECK(undescribed.empty());
  for (const auto& u : undescribed) UNSCOPED_INFO(u);
  const std::vector<std::string> open = open_objects(protocol_schema());
  CHECK(open.empty());
  for (const auto& o : open) UNSCOPED_INFO(o);
}

TEST_CASE("every built-in protocol file is valid against the protocol schema and loads, as a file and inline") {
  // Goal: the five files, the schema and the loader agree. Method: validate each gate/redis/protocols/*.json; read it
  // through inline_protocol_files and read_protocol; validate the inlined object (scripts as source and origin) too.
  const auto files = builtin_protocols();
  REQUIRE(files.size() == 5);
  for (const auto& f : files) {
    CAPTURE(f.filename().string());
    CHECK(protocol_validator().validate(read_json(f.string())).value_or("") == "");
    json doc = json::parse(R"({"gate": {"kind": "lease", "protocol": )" + json(f.filename().string()).dump() + "}}");
    admit::scenario::inline_protocol_files(doc, f.parent_path().string(), admit::scenario::plain_file_reader());
    const json& inlined = doc["gate"]["protocol"];
    CHECK(protocol_validator().validate(inlined).value_or("") == "");
    CHECK_NOTHROW(admit::scenario::read_protocol(inlined, "/gate/protocol"));
  }
}

TEST_CASE("the protocol schema rejects the malformed protocol table, or the table says why it cannot") {
  // Goal: the protocol schema says as much as a schema can. Method: each file of tests/scenario/malformed_protocols,
  // parsed without the loader's duplicate-key check, against the schema; "schema" in its expected.json is "reject",
  // "not JSON", or "loader only: why", and a file marked loader-only must really pass the schema. (The loader's side,
  // each file refused with its message, is protocol_loader_test.cpp.)
  const json expected = read_json(source_path("tests/scenario/malformed_protocols/expected.json"));
  std::size_t rejected = 0, loader_only = 0, not_json = 0;
  for (auto it = expected.begin(); it != expected.end(); ++it) {
    CAPTURE(it.key());
    const std::string bytes = read_bytes(source_path("tests/scenario/malformed_protocols/" + it.key()));
    const std::string note = it.value().at("schema").get<std::string>();
    json doc;
    bool parsed = true;
    try {
      doc = json::parse(bytes);
    } catch (const json::exception&) {
      parsed = false;
    }
    if (note == "not JSON") {
      CHECK_FALSE(parsed);
      ++not_json;
      continue;
    }
    REQUIRE(parsed);
    const auto problem = protocol_validator().validate(doc);
    if (note == "reject") {
      CHECK(problem.has_value());
      ++rejected;
    } else {
      REQUIRE(note.rfind("loader only: ", 0) == 0);
      CHECK(problem.value_or("") == "");
      ++loader_only;
    }
  }
  CHECK(rejected >= 40);
  CHECK(not_json >= 1);
  CHECK(rejected + loader_only + not_json == expected.size());
}

TEST_CASE("the protocol schema's templates and renewal rule agree with the loader") {
  // Goal: the template pattern is the loader's grammar, and renew_every needs a renew call in both. Method: spellings
  // through the schema's template definitions and arg_template::parse; seed.json with client fields added.
  std::map<std::string, schema_subset_validator> by_def;
  auto matches = [&](const std::string& def, const json& v) {
    auto it = by_def.find(def);
    if (it == by_def.end()) {
      json s{{"$ref", "#/$defs/" + def}, {"$defs", protocol_schema()["$defs"]}};
      it = by_def.emplace(def, schema_subset_validator(std::move(s))).first;
    }
    return !it->second.validate(v).has_value();
  };
  for (const std::string t : {"{key}", "{key}:fence", "{{token}}", "a{{{token}}}b", "", "plain", "}}{{", "{key}{token}",
                              "{tok}", "{}", "{key", "key}", "{key}}", "{{{key}", "{ key}", "{KEY}", "{queue_timeout_ms}x"}) {
    CAPTURE(t);
    std::string why;
    CHECK(matches("template", t) == admit::redis::arg_template::parse(t, why).has_value());
  }
  CHECK(matches("template", 5));
  CHECK_FALSE(matches("template", 1.5));
  CHECK_FALSE(matches("template", true));

  json seed = read_json(source_path("gate/redis/protocols/seed.json"));
  seed["client"] = json::parse(R"({"renew_every": "4s"})");
  CHECK(protocol_validator().validate(seed).has_value());
  seed["client"] = json::parse(R"({"acquire_timeout": "4s", "on_client_timeout": "hold_to_end"})");
  CHECK(protocol_validator().validate(seed).value_or("") == "");
  json renewal = read_json(source_path("gate/redis/protocols/renewal.json"));
  renewal["client"] = json::parse(R"({"renew_every": {"lease_fraction": 0.5}, "on_renewal_lost": "stop_new_work"})");
  CHECK(protocol_validator().validate(renewal).value_or("") == "");
  renewal["holders"] = json::parse(R"({"key": "{key}:{token}"})");
  CHECK(protocol_validator().validate(renewal).has_value());
}

TEST_CASE("the scenario schema accepts a lease gate's protocol as a path, an object or a list of up to 8") {
  // Goal: a scenario naming protocols validates. Method: a lease gate with "protocol" in each form, against
  // scenarios/schema.json; an empty list, nine, and a number are refused.
  const json ok = json::parse(R"({"name": "t", "gate": {"kind": "lease", "limit": 1},
      "workload": {"requests": [{"at": "0ms"}]}})");
  REQUIRE_FALSE(validator().validate(ok).has_value());
  const json object = read_json(source_path("gate/redis/protocols/seed.json"));
  auto with = [&](json protocol) {
    json d = ok;
    d["gate"]["protocol"] = std::move(protocol);
    return validator().validate(d);
  };
  CHECK(with("../gate/redis/protocols/seed.json").value_or("") == "");
  CHECK(with(object).value_or("") == "");
  CHECK(with(json::array({"a.json", object})).value_or("") == "");
  CHECK(with(json::array({"1", "2", "3", "4", "5", "6", "7", "8"})).value_or("") == "");
  CHECK(with(json::array({"1", "2", "3", "4", "5", "6", "7", "8", "9"})).has_value());
  CHECK(with(json::array()).has_value());
  CHECK(with(7).has_value());
  CHECK(with("").has_value());
  json both = ok;
  both["gate"]["protocol"] = object;
  both["gate"]["variant"] = "fair";
  CHECK(validator().validate(both).value_or("") == "");
}
