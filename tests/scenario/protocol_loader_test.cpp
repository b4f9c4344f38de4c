// Tests of lease protocols as data: gate/redis/protocol (templates, reply
// rules, renew intervals) and sim/scenario/protocol_loader with the scenario
// loader around it. The built-in protocol files load with the fields they
// spell; every refusal is pinned with its exact message and JSON Pointer,
// the file-level ones in the malformed protocol table
// (tests/scenario/malformed_protocols/, messages in expected.json) and the
// scenario-level ones here; a scenario with protocols written back by
// sim/explore/scenario_json reads back equal.
#include <algorithm>
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "gate/redis/sha1.hpp"
#include "sim/explore/scenario_json.hpp"
#include "sim/scenario/json_parse.hpp"
#include "sim/scenario/loader.hpp"
#include "tests/scenario/json_schema_subset.hpp"
#include "tests/scenario/scenario_test_support.hpp"

namespace {

namespace fs = std::filesystem;
using json = nlohmann::ordered_json;
using namespace admit::scenario;
using admit::redis::arg_template;
using admit::redis::placeholder;
using admit::redis::reply;
using admit::redis::reply_rule;
using admit::redis::script_reply;
using admit::sim::ms;
using admit::sim::sec;
using admit::test::read_bytes;
using admit::test::read_json;
using admit::test::rejection;
using admit::test::source_path;

const std::string table_dir = source_path("tests/scenario/malformed_protocols");
const std::string protocol_prefix = "/gate/protocol";

// A fresh, empty folder of the test's own under the build tree.
fs::path fresh_dir(const std::string& name) {
  const fs::path d = fs::path(ADMITSIM_TEST_TMP) / "protocol_loader" / name;
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

void write_file(const fs::path& p, const std::string& text) {
  fs::create_directories(p.parent_path());
  std::ofstream out(p, std::ios::binary);
  out << text;
  REQUIRE(out.good());
}

// A scenario of one lease gate running `protocol` (JSON text: a path string,
// an object or a list), with more gate members in `gate_extra`.
std::string lease_scenario(const std::string& protocol, const std::string& gate_extra = "") {
  return R"({"name": "t", "gate": {"kind": "lease", "limit": 2, "protocol": )" + protocol +
         (gate_extra.empty() ? "" : ", " + gate_extra) + R"(}, "workload": {"requests": [{"id": "a", "at": "0ms"}]}})";
}

// A small valid protocol object named `name`, with `extra` members (JSON text) added at its top level.
std::string inline_protocol(const std::string& name, const std::string& extra = "") {
  return R"({"format": "admitsim-protocol/1", "name": ")" + name + R"lua(",
    "scripts": {"acquire": {"source": "return 1"}, "release": {"source": "return redis.call('ZREM', KEYS[1], ARGV[1])"}},
    "acquire": {"script": "acquire", "keys": ["{key}"], "args": ["{lease_ms}", "{limit}", "{token}"]},
    "release": {"script": "release", "keys": ["{key}"], "args": ["{token}"]})lua" +
         (extra.empty() ? "" : ", " + extra) + "}";
}

// The same with a renew call.
std::string renewing_protocol(const std::string& name, const std::string& extra = "") {
  return R"({"format": "admitsim-protocol/1", "name": ")" + name + R"(",
    "scripts": {"acquire": {"source": "return 1"}, "renew": {"source": "return 1"}, "release": {"source": "return 1"}},
    "acquire": {"script": "acquire", "keys": ["{key}"], "args": ["{lease_ms}", "{limit}", "{token}"]},
    "renew": {"script": "renew", "keys": ["{key}"], "args": ["{lease_ms}", "{token}"]},
    "release": {"script": "release", "keys": ["{key}"], "args": ["{token}"]})" +
         (extra.empty() ? "" : ", " + extra) + "}";
}

const admit::redis::protocol& only_protocol(const scenario& sc) {
  REQUIRE(sc.gates.size() == 1);
  REQUIRE(sc.gates[0].lease.protocols.size() == 1);
  return *sc.gates[0].lease.protocols[0].proto;
}

// What a scenario file is refused with: {path, message}, or {"", ""} when it loads.
std::pair<std::string, std::string> file_refusal(const std::string& path) {
  try {
    (void)load_scenario_file(path);
  } catch (const scenario_error& e) {
    return {e.path, e.what()};
  }
  return {"", ""};
}

std::vector<std::string> texts(const std::vector<arg_template>& ts) {
  std::vector<std::string> out;
  for (const arg_template& t : ts) out.push_back(t.text());
  return out;
}

arg_template parsed(std::string_view text) {
  std::string why;
  std::optional<arg_template> t = arg_template::parse(text, why);
  INFO(why);
  REQUIRE(t.has_value());
  return *t;
}

std::string parse_error(std::string_view text) {
  std::string why;
  const std::optional<arg_template> t = arg_template::parse(text, why);
  CHECK_FALSE(t.has_value());
  return why;
}

}  // namespace

// --- the built-in protocol files ---------------------------------------------

namespace {

struct builtin_row {
  std::string file;
  std::vector<std::pair<std::string, std::string>> scripts;  // name, Lua file under gate/redis/lua
  std::vector<std::string> acquire_keys, acquire_args;
  reply_rule granted_when;
  std::vector<std::string> release_keys, release_args;
  std::vector<std::string> renew_keys, renew_args;  // empty: no renew call
};

const std::vector<builtin_row>& builtin_rows() {
  static const std::vector<builtin_row> rows = {
      {"seed.json",
       {{"acquire", "seed_acquire.lua"}, {"release", "release.lua"}},
       {"{key}"}, {"{now_ms}", "{lease_ms}", "{limit}", "{token}"}, reply_rule::equals_one,
       {"{key}"}, {"{token}"}, {}, {}},
      {"server_time.json",
       {{"acquire", "server_time_acquire.lua"}, {"release", "release.lua"}},
       {"{key}"}, {"{lease_ms}", "{limit}", "{token}"}, reply_rule::equals_one,
       {"{key}"}, {"{token}"}, {}, {}},
      {"renewal.json",
       {{"acquire", "server_time_acquire.lua"}, {"renew", "renew.lua"}, {"release", "release.lua"}},
       {"{key}"}, {"{lease_ms}", "{limit}", "{token}"}, reply_rule::equals_one,
       {"{key}"}, {"{token}"}, {"{key}"}, {"{lease_ms}", "{token}"}},
      {"fencing.json",
       {{"acquire", "fencing_acquire.lua"}, {"release", "release.lua"}},
       {"{key}", "{key}:fence"}, {"{lease_ms}", "{limit}", "{token}"}, reply_rule::positive_integer,
       {"{key}"}, {"{token}"}, {}, {}},
      {"fair.json",
       {{"acquire", "fair_acquire.lua"}, {"release", "fair_release.lua"}},
       {"{key}", "{key}:queue", "{key}:seen", "{key}:ticket"}, {"{lease_ms}", "{limit}", "{token}", "{queue_timeout_ms}"},
       reply_rule::equals_one, {"{key}", "{key}:queue", "{key}:seen"}, {"{token}"}, {}, {}},
  };
  return rows;
}

}  // namespace

TEST_CASE("the built-in protocol table lists every file of gate/redis/protocols") {
  // Goal: a new built-in protocol file gets a row below. Method: compare the folder (but its schema) with the table.
  std::set<std::string> on_disk, listed;
  for (const auto& e : fs::directory_iterator(source_path("gate/redis/protocols")))
    if (e.path().extension() == ".json" && e.path().filename() != "schema.json")
      on_disk.insert(e.path().filename().string());
  for (const builtin_row& r : builtin_rows()) listed.insert(r.file);
  CHECK(on_disk == listed);
}

TEST_CASE("every built-in protocol file loads through inline_protocol_files and read_protocol, as it is spelt") {
  // Goal: the five files say what the variants do. Method: name each by path in a scenario document, inline it with
  // plain_file_reader, read it, and compare names, Lua sources, SHAs, templates, rules and holders with the table.
  for (const builtin_row& row : builtin_rows()) {
    CAPTURE(row.file);
    json doc = json::parse(lease_scenario("\"" + row.file + "\""));
    inline_protocol_files(doc, source_path("gate/redis/protocols"), plain_file_reader());
    const json& obj = doc["gate"]["protocol"];
    REQUIRE(obj.is_object());
    for (const auto& [name, lua] : row.scripts) {
      // Each script "file" became its source and origin.
      CHECK_FALSE(obj["scripts"][name].contains("file"));
      CHECK(obj["scripts"][name]["origin"] == "../lua/" + lua);
    }
    const admit::redis::protocol p = read_protocol(obj, "/gate/protocol");
    CHECK(p.name + ".json" == row.file);
    CHECK_FALSE(p.description.empty());
    REQUIRE(p.scripts.size() == row.scripts.size());
    for (std::size_t i = 0; i < p.scripts.size(); ++i) {
      CHECK(p.scripts[i].name == row.scripts[i].first);
      CHECK(p.scripts[i].origin == "../lua/" + row.scripts[i].second);
      CHECK(p.scripts[i].source == read_bytes(source_path("gate/redis/lua/" + row.scripts[i].second)));
      CHECK(p.scripts[i].sha == admit::redis::sha1_hex(p.scripts[i].source));
      CHECK(p.scripts[i].sha.size() == 40);
    }
    CHECK(p.scripts[p.acquire.script].name == "acquire");
    CHECK(texts(p.acquire.keys) == row.acquire_keys);
    CHECK(texts(p.acquire.args) == row.acquire_args);
    CHECK(p.acquire.rule == row.granted_when);
    CHECK_FALSE(p.release.is_command());
    CHECK(p.scripts[p.release.script].name == "release");
    CHECK(texts(p.release.keys) == row.release_keys);
    CHECK(texts(p.release.args) == row.release_args);
    CHECK(p.release.rule == reply_rule::any);  // the default: a release's answer is not read
    CHECK(p.renew.has_value() == !row.renew_keys.empty());
    if (p.renew) {
      CHECK(p.scripts[p.renew->script].name == "renew");
      CHECK(texts(p.renew->keys) == row.renew_keys);
      CHECK(texts(p.renew->args) == row.renew_args);
      CHECK(p.renew->rule == reply_rule::equals_one);
    }
    CHECK(p.holders.key.text() == "{key}");
    CHECK(p.holders.scores == admit::redis::score_meaning::acquired_at);
    // The built-ins leave every client field to the gate, but for what a give-up does, which is the variant's own:
    // fair's waiter leaves the line.
    admit::redis::client_policy variants_client;
    const std::optional<admit::redis::variant> v = admit::redis::parse_variant(p.name);
    REQUIRE(v.has_value());
    variants_client.on_give_up = admit::redis::variant_on_give_up(*v);
    CHECK(p.client == variants_client);
    CHECK((p.client.on_give_up == admit::redis::give_up_action::release) == (row.file == "fair.json"));
    CHECK(p.uses(placeholder::queue_timeout_ms) == (row.file == "fair.json"));
    CHECK(p.uses(placeholder::now_ms) == (row.file == "seed.json"));
  }
}

TEST_CASE("a scenario file runs all five built-in protocol files, named by path relative to it") {
  // Goal: load_scenario_file resolves protocol paths from the scenario's folder. Method: a scenario in a temporary
  // folder naming the five by absolute path and one copy by a relative path, with its Lua beside the copy.
  const fs::path dir = fresh_dir("five");
  std::string list = "[";
  for (const builtin_row& row : builtin_rows())
    list += (list.size() > 1 ? ", \"" : "\"") + source_path("gate/redis/protocols/" + row.file) + "\"";
  list += ", \"mine/copy.json\"]";
  write_file(dir / "mine/copy.json",
             R"({"format": "admitsim-protocol/1", "name": "copy", "scripts": {"acquire": {"file": "lua/a.lua"},
      "release": {"file": "../lua/r.lua"}}, "acquire": {"script": "acquire", "keys": ["{key}"], "args": ["{token}"]},
      "release": {"script": "release", "keys": ["{key}"], "args": ["{token}"]}})");
  write_file(dir / "mine/lua/a.lua", "return 1\n");
  write_file(dir / "lua/r.lua", "return 0\n");
  write_file(dir / "scenario.json", lease_scenario(list, R"("queue_timeout": "3s")"));
  json doc;
  const scenario sc = load_scenario_file((dir / "scenario.json").string(), doc);
  const lease_params& l = sc.gates.at(0).lease;
  CHECK(l.variants.empty());  // a gate with protocols and no "variant" runs only them
  CHECK(run_names(l) == std::vector<std::string>{"seed", "server_time", "renewal", "fencing", "fair", "copy"});
  CHECK(l.queue_timeout_ns == 3 * sec);  // read: fair passes {queue_timeout_ms}
  const admit::redis::protocol& copy = *l.protocols.back().proto;
  CHECK(copy.scripts[0].origin == "lua/a.lua");
  CHECK(copy.scripts[0].source == "return 1\n");
  CHECK(copy.scripts[1].origin == "../lua/r.lua");
  CHECK(copy.scripts[1].source == "return 0\n");
  // The document holds every protocol inline, so that a report's copy needs no file; loaded as text it is the same.
  for (const json& p : doc["gate"]["protocol"]) CHECK(p.is_object());
  const scenario again = load_scenario_text(doc.dump());
  CHECK(again.gates.at(0).lease == l);
  // Each protocol_ref keeps the object it was read from, as compact JSON.
  CHECK(json::parse(l.protocols.back().source_json) == doc["gate"]["protocol"][5]);
}

// --- templates -----------------------------------------------------------------

TEST_CASE("templates parse placeholders and literal braces, print back and expand") {
  // Goal: arg_template is the one grammar of KEYS and ARGV. Method: spellings and their pieces, text() after
  // parse() is the spelling, expand() over fixed values, and the refusals with their reasons.
  const arg_template fence = parsed("{key}:fence");
  REQUIRE(fence.pieces.size() == 2);
  CHECK(fence.pieces[0].value == placeholder::key);
  CHECK(fence.pieces[1].literal == ":fence");
  CHECK_FALSE(fence.pieces[1].value.has_value());
  CHECK(fence.uses(placeholder::key));
  CHECK_FALSE(fence.uses(placeholder::token));

  // "{{" and "}}" are literal braces, also around a placeholder's name.
  const arg_template braces = parsed("{{token}}");
  REQUIRE(braces.pieces.size() == 1);
  CHECK(braces.pieces[0].literal == "{token}");
  CHECK_FALSE(braces.uses(placeholder::token));
  const arg_template mixed = parsed("a{{{token}}}b");
  REQUIRE(mixed.pieces.size() == 3);
  CHECK(mixed.pieces[0].literal == "a{");
  CHECK(mixed.pieces[1].value == placeholder::token);
  CHECK(mixed.pieces[2].literal == "}b");
  CHECK(parsed("").pieces.empty());

  for (const char* s : {"{key}:fence", "{{token}}", "a{{{token}}}b", "{key}{token}", "{now_ms}-{expiry_ms}", "plain",
                        "}}{{", "{limit}{lease_ms}{queue_timeout_ms}", ""}) {
    CAPTURE(s);
    CHECK(parsed(s).text() == s);
    CHECK(parsed(parsed(s).text()) == parsed(s));
  }

  admit::redis::call_values v;
  v.key = "g";
  v.token = "w3-17";
  v.limit = 8;
  v.lease_ms = 15'000;
  v.now_ms = 1'700'000'000'123;
  v.queue_timeout_ms = 30'000;
  CHECK(expand(parsed("{key}:fence"), v) == "g:fence");
  CHECK(expand(parsed("{token}"), v) == "w3-17");
  CHECK(expand(parsed("{limit}/{lease_ms}/{queue_timeout_ms}"), v) == "8/15000/30000");
  CHECK(expand(parsed("{now_ms}"), v) == "1700000000123");
  CHECK(expand(parsed("{expiry_ms}"), v) == "1700000015123");  // now_ms + lease_ms
  CHECK(expand(parsed("{{key}}={key}"), v) == "{key}=g");
  v.now_ms = -5;
  CHECK(expand(parsed("{now_ms}"), v) == "-5");
  std::string out = "x";
  expand_into(parsed("{key}"), v, out);
  CHECK(out == "xg");  // appends

  const std::string all = " {key} {token} {limit} {lease_ms} {now_ms} {expiry_ms} {queue_timeout_ms} {permit}";
  CHECK(parse_error("{tok}") == "an unknown placeholder {tok}; the placeholders are" + all);
  CHECK(parse_error("{KEY}") == "an unknown placeholder {KEY}; the placeholders are" + all);
  CHECK(parse_error("{}") == "an unknown placeholder {}; the placeholders are" + all);
  CHECK(parse_error("{ key}") == "an unknown placeholder { key}; the placeholders are" + all);
  CHECK(parse_error("{key") == "a '{' without its '}' (write \"{{\" for a literal brace)");
  CHECK(parse_error("x{") == "a '{' without its '}' (write \"{{\" for a literal brace)");
  CHECK(parse_error("key}") == "a '}' without its '{' (write \"}}\" for a literal brace)");
  CHECK(parse_error("{key}}") == "a '}' without its '{' (write \"}}\" for a literal brace)");
  CHECK(parse_error("}}}") == "a '}' without its '{' (write \"}}\" for a literal brace)");
}

// --- reply rules -----------------------------------------------------------------

TEST_CASE("each reply rule reads every kind of reply") {
  // Goal: read_reply says yes exactly where its rule does, and an error is an error under every rule. Method: a table
  // of replies by rule, the value each gives (0: no; the integer itself for positive_integer).
  const std::vector<reply> replies = {reply::nil(),          reply::from_integer(0), reply::from_integer(1),
                                      reply::from_integer(7), reply::from_integer(-1), reply::bulk("1"),
                                      reply::bulk(""),       reply::status("OK"),    reply::status("QUEUED"),
                                      reply::array({}),      reply::array({reply::from_integer(1)})};
  // Rows in the order of `replies`.
  const std::vector<std::pair<reply_rule, std::vector<std::int64_t>>> table = {
      {reply_rule::equals_one, {0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0}},
      {reply_rule::positive_integer, {0, 0, 1, 7, 0, 0, 0, 0, 0, 0, 0}},
      {reply_rule::ok_status, {0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0}},
      {reply_rule::not_nil, {0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1}},
      {reply_rule::any, {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1}},
      {reply_rule::permit_id, {0, 0, 0, 0, 0, 1, 0, 1, 1, 0, 0}},
  };
  REQUIRE(table.size() == std::size(admit::redis::reply_rule_names));
  for (const auto& [rule, values] : table) {
    CAPTURE(admit::redis::reply_rule_names[static_cast<std::size_t>(rule)]);
    for (std::size_t i = 0; i < replies.size(); ++i) {
      CAPTURE(to_string(replies[i]));
      CHECK(read_reply(replies[i], rule) == script_reply{values[i], {}});
    }
    CHECK(read_reply(reply::error("NOSCRIPT No matching script"), rule) == script_reply{0, "NOSCRIPT No matching script"});
    CHECK_FALSE(read_reply(reply::error("ERR x"), rule).granted());
    CHECK(read_reply(reply::error(""), rule).error == "ERR");  // an error is never mistaken for a success
  }
}

TEST_CASE("a rule reads one element of an array reply, and permit_id gives the id") {
  // Goal: reply_read's element and permit_of. Method: replies of every shape read at element 0, 1, 2 and 3.
  using admit::redis::permit_of;
  using admit::redis::reply_read;
  const reply pair = reply::array({reply::from_integer(1), reply::bulk("p7")});
  CHECK(read_reply(pair, reply_read{reply_rule::equals_one, 1}).granted());
  CHECK_FALSE(read_reply(pair, reply_read{reply_rule::equals_one, 2}).granted());
  CHECK(read_reply(pair, reply_read{reply_rule::permit_id, 2}).granted());
  CHECK(permit_of(pair, reply_read{reply_rule::permit_id, 2}) == "p7");
  CHECK(permit_of(pair, reply_read{reply_rule::equals_one, 2}).empty());  // only permit_id gives an id
  // No such element: "no", never an error.
  CHECK(read_reply(pair, reply_read{reply_rule::any, 3}) == script_reply{});
  CHECK(read_reply(reply::from_integer(1), reply_read{reply_rule::equals_one, 1}) == script_reply{});
  // An error element is "no"; an error reply is the call's error under any element.
  CHECK(read_reply(reply::array({reply::error("ERR x")}), reply_read{reply_rule::any, 1}) == script_reply{});
  CHECK(read_reply(reply::error("ERR y"), reply_read{reply_rule::any, 1}).error == "ERR y");
  CHECK(permit_of(reply::bulk("abc"), reply_rule::permit_id) == "abc");
  CHECK(permit_of(reply::bulk(""), reply_rule::permit_id).empty());
  CHECK(permit_of(reply::nil(), reply_rule::permit_id).empty());
  CHECK(admit::redis::describe(reply_read{reply_rule::permit_id, 2}) == "element 2 is permit_id");
  CHECK(admit::redis::describe(reply_rule::ok_status) == "ok");
}

// --- the malformed protocol table ------------------------------------------------

namespace {

const json& table() {
  static const json t = read_json(table_dir + "/expected.json");
  return t;
}

// A message of the table, with "{dir}" standing for the table's folder as the loader names it.
std::string with_dir(std::string m) {
  const std::string key = "{dir}";
  for (std::size_t at = m.find(key); at != std::string::npos; at = m.find(key, at + table_dir.size()))
    m.replace(at, key.size(), table_dir);
  return m;
}

// Whether the file's protocol has a script given by "file" (which only inline_protocol_files reads).
bool names_script_files(const json& p) {
  if (!p.contains("scripts") || !p["scripts"].is_object()) return false;
  for (const auto& s : p["scripts"])
    if (s.is_object() && s.contains("file")) return true;
  return false;
}

}  // namespace

TEST_CASE("the malformed protocol table covers every file, and enough of them") {
  // Goal: no file in the folder goes untested and no entry is stale. Method: compare the folder with expected.json.
  std::set<std::string> on_disk, listed;
  for (const auto& e : fs::directory_iterator(table_dir))
    if (e.path().filename() != "expected.json") on_disk.insert(e.path().filename().string());
  for (auto it = table().begin(); it != table().end(); ++it) listed.insert(it.key());
  CHECK(on_disk == listed);
  CHECK(listed.size() >= 50);
}

TEST_CASE("each malformed protocol file is refused with its exact message and path") {
  // Goal: a protocol file's messages are part of the interface. Method: a scenario in a temporary folder names each
  // file of the table by path; load_scenario_file must refuse it with the table's message and JSON Pointer. A file
  // whose scripts are all inline is also read alone by read_protocol, whose pointer is then the file's own.
  const fs::path dir = fresh_dir("table");
  const fs::path scenario_file = dir / "scenario.json";
  std::size_t direct = 0;
  for (auto it = table().begin(); it != table().end(); ++it) {
    CAPTURE(it.key());
    const std::string file = table_dir + "/" + it.key();
    write_file(scenario_file, lease_scenario(json(file).dump()));
    const std::string want_path = with_dir(it.value().at("path").get<std::string>());
    const std::string want = with_dir(it.value().at("message").get<std::string>());
    const auto [path, message] = file_refusal(scenario_file.string());
    CHECK(message == want);
    CHECK(path == want_path);
    // One printable line.
    CHECK(std::all_of(message.begin(), message.end(), [](char c) { return c >= 0x20 && c < 0x7f; }));
    // The same refusal from the protocol alone, where the file is a JSON object that read_protocol can read as it is.
    json p;
    try {
      p = parse_json_text(read_bytes(file));
    } catch (const scenario_error&) {
      continue;
    }
    if (!p.is_object() || names_script_files(p) || want_path.rfind(protocol_prefix, 0) != 0) continue;
    const std::string own_path = want_path == protocol_prefix ? "/" : want_path.substr(protocol_prefix.size());
    bool refused = false;
    try {
      (void)read_protocol(p, "");
    } catch (const scenario_error& e) {
      refused = true;
      CHECK(e.path == own_path);
      CHECK(std::string(e.what()) == (own_path == "/" ? "/" : "") + want.substr(protocol_prefix.size()));
    }
    CHECK(refused);
    ++direct;
  }
  CHECK(direct >= 40);
}

// --- scenario-level rules ----------------------------------------------------------

TEST_CASE("a protocol named by path is read only with files; a missing or folder path is refused") {
  // Goal: a path never silently becomes nothing. Method: a path through load_scenario_text (no reader), then through
  // load_scenario_file to a path that does not exist and to a folder; an inline protocol's script "file".
  CHECK(rejection(lease_scenario("\"gate/redis/protocols/seed.json\"")) ==
        "/gate/protocol: expected a protocol object; a protocol file named by path is read only by a command given the "
        "scenario file (admitsim run, check, explore)");
  CHECK(rejection(lease_scenario("[" + inline_protocol("a") + ", \"b.json\"]")) ==
        "/gate/protocol/1: expected a protocol object; a protocol file named by path is read only by a command given "
        "the scenario file (admitsim run, check, explore)");

  const fs::path dir = fresh_dir("paths");
  fs::create_directories(dir / "folder.json");
  const std::string d = dir.string();
  write_file(dir / "missing.json", lease_scenario(R"("nowhere.json")"));
  CHECK(file_refusal(d + "/missing.json") ==
        std::pair<std::string, std::string>{
            "/gate/protocol", "/gate/protocol: expected a readable protocol file: " + d + "/nowhere.json: expected a regular file"});
  write_file(dir / "folder.json.scenario", lease_scenario(R"(["folder.json"])"));
  CHECK(file_refusal(d + "/folder.json.scenario") ==
        std::pair<std::string, std::string>{
            "/gate/protocol/0",
            "/gate/protocol/0: expected a readable protocol file: " + d + "/folder.json: expected a regular file"});
  // A script file is read only for a protocol that itself comes from a file, also when the scenario is a file.
  const std::string with_file = R"({"format": "admitsim-protocol/1", "name": "f",
      "scripts": {"acquire": {"file": "a.lua"}}, "acquire": {"script": "acquire", "args": ["{token}"]},
      "release": {"command": ["ZREM", "{key}", "{token}"]}})";
  const std::string file_msg =
      "/gate/protocol/scripts/acquire/file: a script file is read only where the protocol itself comes from a file "
      "(name the protocol file by path, or give the script's \"source\")";
  CHECK(rejection(lease_scenario(with_file)) == file_msg);
  write_file(dir / "a.lua", "return 1");
  write_file(dir / "inline.json", lease_scenario(with_file));
  CHECK(file_refusal(d + "/inline.json").second == file_msg);
}

TEST_CASE("run names are distinct across protocols and variants; a gate names 1 to 8 protocols") {
  // Goal: a report names each run once. Method: a protocol named like a variant beside it, two protocols of one name,
  // then lists of 0, 8 and 9 protocols.
  const std::string twice = "/gate/protocol: expected protocols whose names differ from each other and from the "
                            "variants' (\"seed\" is used twice)";
  CHECK(rejection(lease_scenario(inline_protocol("seed"), R"("variant": ["fair", "seed"])")) == twice);
  CHECK(rejection(lease_scenario("[" + inline_protocol("seed") + ", " + inline_protocol("seed") + "]")) == twice);
  // Without "variant" the gate runs only its protocols, so a protocol may take a variant's name.
  CHECK(rejection(lease_scenario(inline_protocol("seed"))) == "");
  const scenario both = load_scenario_text(lease_scenario(inline_protocol("mine"), R"("variant": "seed")"));
  CHECK(run_names(both.gates[0].lease) == std::vector<std::string>{"seed", "mine"});

  std::string eight = "[";
  for (int i = 0; i < 8; ++i) eight += (i ? ", " : "") + inline_protocol("p" + std::to_string(i));
  CHECK(rejection(lease_scenario(eight + "]")) == "");
  CHECK(rejection(lease_scenario(eight + ", " + inline_protocol("p8") + "]")) ==
        "/gate/protocol: expected a protocol (a file's path, or its object) or a list of 1 to 8 of them, got "
        "[{\"format\":\"admitsim-protocol/1\",\"name\":\"p0\",\"scripts\":{\"...");
  CHECK(rejection(lease_scenario("[]")) ==
        "/gate/protocol: expected a protocol (a file's path, or its object) or a list of 1 to 8 of them, got []");
  CHECK(rejection(lease_scenario("7")) == "/gate/protocol: expected a lease protocol object (docs/protocols.md), got 7");
}

TEST_CASE("gate-level client fields apply where a protocol is silent and are refused where no run reads them") {
  // Goal: no gate field silently does nothing. Method: acquire_timeout, backoff, renew_every and queue_timeout on
  // gates whose protocols set their own, are silent, or do not renew; with a variant beside them, which reads all.
  const std::string own_timeout = R"("client": {"acquire_timeout": "5s"})";
  const std::string own_retry = R"("client": {"retry": {"kind": "fixed", "delay": "10ms"}})";
  CHECK(rejection(lease_scenario(inline_protocol("a", own_timeout), R"("acquire_timeout": "1s")")) ==
        "/gate/acquire_timeout: expected no \"acquire_timeout\": every protocol of this gate sets its own "
        "(client.acquire_timeout)");
  CHECK(rejection(lease_scenario("[" + inline_protocol("a", own_timeout) + ", " + inline_protocol("b", own_timeout) + "]",
                                 R"("acquire_timeout": "1s")")) ==
        "/gate/acquire_timeout: expected no \"acquire_timeout\": every protocol of this gate sets its own "
        "(client.acquire_timeout)");
  // One silent protocol, or a variant, reads it.
  const scenario one_silent = load_scenario_text(
      lease_scenario("[" + inline_protocol("a", own_timeout) + ", " + inline_protocol("b") + "]", R"("acquire_timeout": "1s")"));
  CHECK(one_silent.gates[0].lease.acquire_timeout_ns == 1 * sec);
  CHECK(one_silent.gates[0].lease.protocols[0].proto->client.acquire_timeout_ns == 5 * sec);
  CHECK(rejection(lease_scenario(inline_protocol("a", own_timeout), R"("variant": "seed", "acquire_timeout": "1s")")) == "");

  CHECK(rejection(lease_scenario(inline_protocol("a", own_retry), R"("backoff": {"kind": "fixed"})")) ==
        "/gate/backoff: expected no \"backoff\": every protocol of this gate sets its own (client.retry)");
  CHECK(rejection(lease_scenario(inline_protocol("a"), R"("backoff": {"kind": "fixed", "delay": "1s"})")) == "");

  const std::string renew_msg = "/gate/renew_every: expected \"renew_every\" only with the \"renewal\" variant or a "
                                "protocol that renews without an interval of its own, got \"1s\"";
  CHECK(rejection(lease_scenario(inline_protocol("a"), R"("renew_every": "1s")")) == renew_msg);
  CHECK(rejection(lease_scenario(renewing_protocol("a", R"("client": {"renew_every": "2s"})"), R"("renew_every": "1s")")) ==
        renew_msg);
  CHECK(rejection(lease_scenario(renewing_protocol("a", R"("client": {"renew_every": {"lease_fraction": 0.5}})"),
                                 R"("renew_every": "1s")")) == renew_msg);
  const scenario renews = load_scenario_text(lease_scenario(renewing_protocol("a"), R"("lease": "9s", "renew_every": "1s")"));
  CHECK(renews.gates[0].lease.renew_every_ns == 1 * sec);
  CHECK(rejection(lease_scenario(renewing_protocol("a"), R"("lease": "9s", "renew_every": "9s")")) ==
        "/gate/renew_every: expected a duration below lease (9s), got \"9s\"");

  CHECK(rejection(lease_scenario(inline_protocol("a"), R"("queue_timeout": "1s")")) ==
        "/gate/queue_timeout: expected \"queue_timeout\" only with the \"fair\" variant or a protocol whose calls pass "
        "{queue_timeout_ms}, got \"1s\"");
  const std::string queues = R"({"format": "admitsim-protocol/1", "name": "q", "scripts": {"a": {"source": "return 1"}},
      "acquire": {"script": "a", "args": ["{token}", "{queue_timeout_ms}"]}, "release": {"script": "a", "args": ["{token}"]}})";
  CHECK(load_scenario_text(lease_scenario(queues, R"("queue_timeout": "1s")")).gates[0].lease.queue_timeout_ns == 1 * sec);

  CHECK(rejection(lease_scenario(inline_protocol("a"), R"("mutation": "check_then_add")")) ==
        "/gate/mutation: expected \"none\" or \"fail_open\" in a gate with protocols (the other mutations replace a "
        "built-in acquire), got \"check_then_add\"");
  CHECK(rejection(lease_scenario(inline_protocol("a"), R"("mutation": "fail_open")")) == "");
}

// --- what a protocol reads into ----------------------------------------------------

TEST_CASE("a protocol's client policy, commands, rules and holders read into the typed protocol") {
  // Goal: every field lands where the simulator reads it, with its default where it is absent. Method: protocols that
  // set one group of fields each, compared field by field; renew_every_ns for each way of giving the interval.
  const admit::redis::protocol defaults = only_protocol(load_scenario_text(lease_scenario(inline_protocol("a"))));
  CHECK(defaults.description.empty());
  CHECK(defaults.scripts[0].origin == "inline");
  CHECK(defaults.acquire.rule == reply_rule::equals_one);
  CHECK(defaults.release.rule == reply_rule::any);
  CHECK(defaults.client == admit::redis::client_policy{});
  CHECK(defaults.holders.key.text() == "{key}");
  CHECK(defaults.holders.scores == admit::redis::score_meaning::acquired_at);
  CHECK_FALSE(renew_every_ns(defaults, 9 * sec).has_value());

  const admit::redis::protocol p = only_protocol(load_scenario_text(lease_scenario(
      R"({"format": "admitsim-protocol/1", "name": "full", "description": "d",
      "scripts": {"take": {"source": "return 1", "origin": "take.lua"}, "keep": {"source": "return 2"}},
      "acquire": {"script": "take", "keys": ["{key}", "{key}:{{x}}"], "args": [5, -1, "{expiry_ms}", "{token}"], "granted_when": "positive_integer"},
      "renew": {"script": "keep", "args": ["{token}"], "kept_when": "ok"},
      "release": {"command": ["ZREM", "{key}", "{token}"], "released_when": "not_nil"},
      "client": {"retry": {"kind": "exponential", "base": "3s", "jitter": "none"}, "acquire_timeout": "0ms",
                 "renew_every": "4s", "on_renewal_lost": "stop_new_work", "on_client_timeout": "hold_to_end"},
      "holders": {"key": "{key}:holders:{limit}", "scores": "expires_at"}})")));
  CHECK(p.description == "d");
  CHECK(p.scripts[0].origin == "take.lua");
  CHECK(texts(p.acquire.keys) == std::vector<std::string>{"{key}", "{key}:{{x}}"});
  CHECK(texts(p.acquire.args) == std::vector<std::string>{"5", "-1", "{expiry_ms}", "{token}"});  // integers as text
  CHECK(p.acquire.rule == reply_rule::positive_integer);
  REQUIRE(p.renew.has_value());
  CHECK(p.renew->script == 1);
  CHECK(p.renew->rule == reply_rule::ok_status);
  CHECK(p.release.is_command());
  CHECK(texts(p.release.command) == std::vector<std::string>{"ZREM", "{key}", "{token}"});
  CHECK(p.release.keys.empty());
  CHECK(p.release.rule == reply_rule::not_nil);
  REQUIRE(p.client.retry.has_value());
  CHECK(p.client.retry->exponential);
  CHECK(p.client.retry->base_ns == 3 * sec);
  CHECK(p.client.retry->max_ns == 3 * sec);  // the default cap (2s) never undercuts a larger base
  CHECK_FALSE(p.client.retry->full_jitter);
  CHECK(p.client.acquire_timeout_ns == 0);
  CHECK(p.client.renew_every_ns == 4 * sec);
  CHECK(p.client.on_renewal_lost == admit::redis::renewal_loss::stop_new_work);
  CHECK(p.client.on_client_timeout == admit::redis::timeout_permit::hold_to_end);
  CHECK(p.holders.key.text() == "{key}:holders:{limit}");
  CHECK(p.holders.scores == admit::redis::score_meaning::expires_at);
  CHECK(renew_every_ns(p, 9 * sec) == 4 * sec);

  CHECK(p.client.on_give_up == admit::redis::give_up_action::stop);  // the default

  const admit::redis::protocol fixed = only_protocol(load_scenario_text(
      lease_scenario(inline_protocol("a", R"("client": {"retry": {"kind": "fixed"}})"))));
  CHECK(fixed.client.retry == admit::redis::retry_policy{});  // fixed, 200ms
  const admit::redis::protocol expo = only_protocol(load_scenario_text(
      lease_scenario(inline_protocol("a", R"("client": {"retry": {"kind": "exponential", "base": "10ms", "max": "10ms"}})"))));
  CHECK(expo.client.retry->base_ns == 10 * ms);
  CHECK(expo.client.retry->max_ns == 10 * ms);  // max equal to base is allowed
  CHECK(expo.client.retry->full_jitter);

  const admit::redis::protocol fraction = only_protocol(load_scenario_text(
      lease_scenario(renewing_protocol("a", R"("client": {"renew_every": {"lease_fraction": 0.8}})"))));
  CHECK(fraction.client.renew_every_lease_fraction == 0.8);
  CHECK(renew_every_ns(fraction, 10 * sec) == 8 * sec);
  CHECK(renew_every_ns(fraction, 1) == 1);  // never 0
  const admit::redis::protocol edge = only_protocol(load_scenario_text(
      lease_scenario(renewing_protocol("a", R"("client": {"renew_every": {"lease_fraction": 0.001}})"))));
  CHECK(renew_every_ns(edge, 10 * sec) == 10 * ms);
  CHECK(rejection(lease_scenario(renewing_protocol("a", R"("client": {"renew_every": {"lease_fraction": 0.999}})"))) == "");
  CHECK(rejection(lease_scenario(renewing_protocol("a", R"("client": {"renew_every": {"lease_fraction": 0.0009}})"))) ==
        "/gate/protocol/client/renew_every/lease_fraction: expected a number from 0.001 to 0.999, got 0.0009");
  CHECK(rejection(lease_scenario(renewing_protocol("a", R"("client": {"renew_every": {}})"))) ==
        "/gate/protocol/client/renew_every: missing required key \"lease_fraction\" (a number above 0 and below 1)");
  const admit::redis::protocol silent = only_protocol(load_scenario_text(lease_scenario(renewing_protocol("a"))));
  CHECK(renew_every_ns(silent, 9 * sec) == 3 * sec);  // lease / 3, the renewal variant's default
}

TEST_CASE("client.on_give_up reads \"stop\" and \"release\", and refuses anything else at its path") {
  // Goal: what a client whose acquire gives up does is the protocol's, spelt one of two ways. Method: each value in a
  // protocol with and one without a renew call, then the refusals of another word, of a wrong case and of a number.
  using admit::redis::give_up_action;
  for (const auto& [text, want] : {std::pair{"stop", give_up_action::stop}, std::pair{"release", give_up_action::release}}) {
    CAPTURE(text);
    const std::string client = std::string(R"("client": {"on_give_up": ")") + text + "\"}";
    CHECK(only_protocol(load_scenario_text(lease_scenario(inline_protocol("a", client)))).client.on_give_up == want);
    CHECK(only_protocol(load_scenario_text(lease_scenario(renewing_protocol("a", client)))).client.on_give_up == want);
  }
  CHECK(rejection(lease_scenario(inline_protocol("a", R"("client": {"on_give_up": "leave"})"))) ==
        "/gate/protocol/client/on_give_up: expected one of \"stop\", \"release\", got \"leave\"");
  CHECK(rejection(lease_scenario(inline_protocol("a", R"("client": {"on_give_up": "Release"})"))) ==
        "/gate/protocol/client/on_give_up: expected one of \"stop\", \"release\", got \"Release\"");
  CHECK(rejection(lease_scenario(inline_protocol("a", R"("client": {"on_give_up": 1})"))) ==
        "/gate/protocol/client/on_give_up: expected one of \"stop\", \"release\", got 1");
  // In a list, the path names the protocol's index.
  CHECK(rejection(lease_scenario("[" + inline_protocol("a") + ", " +
                                 inline_protocol("b", R"("client": {"on_give_up": true})") + "]")) ==
        "/gate/protocol/1/client/on_give_up: expected one of \"stop\", \"release\", got true");
}

TEST_CASE("client.deadline_clock and client.renew_timing read their words, and refuse others at their paths") {
  // Goal: the acquire deadline's clock and the renewal schedule are data. Method: each value read into the typed
  // policy; the defaults; a wrong word; renew_timing in a protocol that does not renew.
  using admit::redis::deadline_clock;
  using admit::redis::renew_timing;
  CHECK(only_protocol(load_scenario_text(lease_scenario(inline_protocol("a")))).client.deadline == deadline_clock::monotonic);
  CHECK(only_protocol(load_scenario_text(lease_scenario(renewing_protocol("a")))).client.renewal_timing ==
        renew_timing::fixed_delay);
  CHECK(only_protocol(load_scenario_text(lease_scenario(inline_protocol("a", R"("client": {"deadline_clock": "wall"})"))))
            .client.deadline == deadline_clock::wall);
  CHECK(only_protocol(load_scenario_text(lease_scenario(renewing_protocol("a", R"("client": {"renew_timing": "fixed_rate"})"))))
            .client.renewal_timing == renew_timing::fixed_rate);
  CHECK(rejection(lease_scenario(inline_protocol("a", R"("client": {"deadline_clock": "steady"})"))) ==
        "/gate/protocol/client/deadline_clock: expected one of \"monotonic\", \"wall\", got \"steady\"");
  CHECK(rejection(lease_scenario(renewing_protocol("a", R"("client": {"renew_timing": "interval"})"))) ==
        "/gate/protocol/client/renew_timing: expected one of \"fixed_delay\", \"fixed_rate\", got \"interval\"");
  CHECK(rejection(lease_scenario(inline_protocol("a", R"("client": {"renew_timing": "fixed_rate"})"))) ==
        "/gate/protocol/client/renew_timing: expected no \"renew_timing\" in a protocol without a \"renew\" call, got \"fixed_rate\"");
}

TEST_CASE("client.on_renewal_lost crash_process reads restart_after, which no other policy takes") {
  // Goal: a process that dies on a lost lease is data. Method: the default delay, a given one, and the refusals.
  const admit::redis::protocol crash = only_protocol(
      load_scenario_text(lease_scenario(renewing_protocol("a", R"("client": {"on_renewal_lost": "crash_process"})"))));
  CHECK(crash.client.on_renewal_lost == admit::redis::renewal_loss::crash_process);
  CHECK(crash.client.restart_after_ns == 5 * admit::sim::sec);
  CHECK(only_protocol(load_scenario_text(lease_scenario(renewing_protocol(
                          "a", R"("client": {"on_renewal_lost": "crash_process", "restart_after": "250ms"})"))))
            .client.restart_after_ns == 250 * admit::sim::ms);
  CHECK(rejection(lease_scenario(renewing_protocol("a", R"("client": {"restart_after": "1s"})"))) ==
        "/gate/protocol/client/restart_after: expected no \"restart_after\" unless on_renewal_lost is "
        "\"crash_process\", got \"1s\"");
  CHECK(rejection(lease_scenario(renewing_protocol(
            "a", R"("client": {"on_renewal_lost": "crash_process", "restart_after": "0s"})"))) ==
        "/gate/protocol/client/restart_after: expected a duration from 1ns to 1h, got \"0s\"");
}

TEST_CASE("a call's timeout reads \"none\" or a duration, and refuses anything else at its path") {
  // Goal: the call-timeout policy is data, per call. Method: the default, "none", a duration, the refusals.
  const auto with_release = [](const std::string& release) {
    return lease_scenario(R"({"format": "admitsim-protocol/1", "name": "t",
      "scripts": {"acquire": {"source": "return 1", "origin": "inline"}},
      "acquire": {"script": "acquire", "keys": ["{key}"], "args": ["{token}"], "timeout": "250ms"},
      "release": )" + release + "}");
  };
  const admit::redis::protocol p = only_protocol(load_scenario_text(with_release(R"({"command": ["ZREM", "{key}", "{token}"], "timeout": "none"})")));
  CHECK(p.acquire.timeout_ns == 250 * admit::sim::ms);
  CHECK(p.release.timeout_ns == 0);
  CHECK(only_protocol(load_scenario_text(with_release(R"({"command": ["ZREM", "{key}", "{token}"]})"))).release.timeout_ns == -1);
  CHECK(rejection(with_release(R"({"command": ["ZREM", "{key}", "{token}"], "timeout": 5})")) ==
        "/gate/protocol/release/timeout: expected \"none\" or a duration from 1ns to 1h, got 5");
  CHECK(rejection(with_release(R"({"command": ["ZREM", "{key}", "{token}"], "timeout": "0s"})")) ==
        "/gate/protocol/release/timeout: expected a duration from 1ns to 1h, got \"0s\"");
}

// --- written back and read again -----------------------------------------------------

TEST_CASE("a scenario with protocols, written back by scenario_json and loaded again, is the same scenario") {
  // Goal: a shrunk counterexample carries its protocols whole. Method: scenarios with one inline protocol, with a
  // file-named list beside a variant, and with client policies; render_scenario, load the text, compare the gate and
  // the rendering.
  const fs::path dir = fresh_dir("round_trip");
  const std::string files = "[\"" + source_path("gate/redis/protocols/renewal.json") + "\", \"" +
                            source_path("gate/redis/protocols/fair.json") + "\"]";
  write_file(dir / "files.json", lease_scenario(files, R"("variant": "seed", "lease": "6s", "renew_every": "1s",
      "queue_timeout": "4s", "acquire_timeout": "2s", "backoff": {"kind": "exponential", "base": "20ms"})"));
  std::vector<scenario> originals;
  originals.push_back(load_scenario_file((dir / "files.json").string()));
  originals.push_back(load_scenario_text(lease_scenario(inline_protocol("alone"))));
  originals.push_back(load_scenario_text(lease_scenario(
      "[" + renewing_protocol("r", R"("client": {"renew_every": {"lease_fraction": 0.25}, "acquire_timeout": "1s",
          "retry": {"kind": "fixed", "delay": "5ms"}, "on_renewal_lost": "abort_request"},
          "holders": {"key": "{key}", "scores": "expires_at"})") +
      ", " + inline_protocol("silent") + "]", R"("acquire_timeout": "3s", "key": "k")")));
  for (const scenario& sc : originals) {
    CAPTURE(sc.gates.at(0).lease.protocols.size());
    const std::string once = admit::explore::render_scenario(sc);
    const json written = admit::explore::scenario_to_json(sc);
    REQUIRE(written.contains("gate") != written.contains("gates"));
    scenario back;
    REQUIRE_NOTHROW(back = load_scenario_text(once));
    REQUIRE(back.gates.size() == sc.gates.size());
    CHECK(back.gates[0].lease == sc.gates[0].lease);
    CHECK(back.gates[0].kind == sc.gates[0].kind);
    CHECK(back.gates[0].world_mut == sc.gates[0].world_mut);
    for (std::size_t i = 0; i < sc.gates[0].lease.protocols.size(); ++i)
      CHECK(*back.gates[0].lease.protocols[i].proto == *sc.gates[0].lease.protocols[i].proto);
    CHECK(admit::explore::render_scenario(back) == once);
  }
  // The file-named protocols are written inline, with their Lua.
  const json written = admit::explore::scenario_to_json(originals[0]);
  const json& gate = written.contains("gate") ? written["gate"] : written["gates"][0];
  REQUIRE(gate["protocol"].is_array());
  CHECK(gate["protocol"][0]["scripts"]["renew"]["source"] == read_bytes(source_path("gate/redis/lua/renew.lua")));
  CHECK(gate["protocol"][0]["scripts"]["renew"]["origin"] == "../lua/renew.lua");
}

// --- docs/protocols.md ---------------------------------------------------------------

TEST_CASE("docs/protocols.md: its examples load and validate, and its limits are the code's") {
  // Goal: the reference cannot drift from the loader. Method: each ```json block that is a protocol is read by
  // read_protocol and validated against the protocol schema; each scenario block against the scenario schema; the
  // limits table rows carry the constants' values.
  const std::string doc = read_bytes(source_path("docs/protocols.md"));
  const admit::test::schema_subset_validator protocols(read_json(source_path("gate/redis/protocols/schema.json")));
  const admit::test::schema_subset_validator scenarios(read_json(source_path("scenarios/schema.json")));
  std::size_t protocol_blocks = 0, scenario_blocks = 0;
  const std::string open = "```json\n";
  for (std::size_t at = doc.find(open); at != std::string::npos; at = doc.find(open, at + 1)) {
    const std::size_t body = at + open.size();
    const std::size_t end = doc.find("\n```", body);
    REQUIRE(end != std::string::npos);
    const std::string text = doc.substr(body, end - body + 1);
    CAPTURE(text);
    const json j = parse_json_text(text);
    if (j.contains("format")) {
      CHECK_NOTHROW(read_protocol(j, ""));
      CHECK(protocols.validate(j).value_or("") == "");
      CHECK(rejection(lease_scenario(text)) == "");
      ++protocol_blocks;
    } else {
      CHECK(scenarios.validate(j).value_or("") == "");
      ++scenario_blocks;
    }
  }
  CHECK(protocol_blocks >= 1);
  CHECK(scenario_blocks >= 1);
  for (const std::string& row : {"| Scripts per protocol | " + std::to_string(protocol_scripts_max) + " |",
                                "| Bytes of Lua per script | 1 MiB (" + std::to_string(protocol_script_bytes_max) + ")",
                                "| `keys`, `args` or `command` entries per call | " + std::to_string(protocol_call_args_max),
                                std::string("| Protocols per gate | 8 |"), std::string("| Bytes per template | 512 |")}) {
    CAPTURE(row);
    CHECK(doc.find(row) != std::string::npos);
  }
  CHECK(doc.find("## From your script to a verdict\n") != std::string::npos);
}
