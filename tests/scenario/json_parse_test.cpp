// Tests of sim/scenario/json_parse: the linear-time parser the loader reads
// scenario text with. The messages it refuses with are pinned by the
// malformed table (malformed_test.cpp); these tests pin what the table does
// not: the same document as nlohmann's own parser, the NUL byte, and the
// duplicate-key check of objects far larger than the scan it starts with.
#include <catch2/catch.hpp>
#include <filesystem>
#include <string>

#include "sim/scenario/json_parse.hpp"
#include "sim/scenario/loader.hpp"
#include "tests/scenario/scenario_test_support.hpp"

namespace {

namespace fs = std::filesystem;
using json = nlohmann::ordered_json;
using admit::scenario::parse_json_text;
using admit::scenario::scenario_error;
using admit::test::read_bytes;
using admit::test::rejection;
using admit::test::source_path;

// The message and path parse_json_text refuses text with, or "" if it parses.
std::string refusal(const std::string& text, std::string* path = nullptr) {
  try {
    (void)parse_json_text(text);
  } catch (const scenario_error& e) {
    if (path) *path = e.path;
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("json_parse builds the document nlohmann's parser builds, keys in order") {
  // Goal: the new parser changes no document. Method: parse every catalogue file both ways; compare values and dumps.
  int files = 0;
  for (const auto& e : fs::directory_iterator(source_path("scenarios"))) {
    if (e.path().extension() != ".json") continue;
    CAPTURE(e.path().string());
    const std::string bytes = read_bytes(e.path().string());
    const json ours = parse_json_text(bytes);
    const json theirs = json::parse(bytes);
    CHECK(ours == theirs);
    CHECK(ours.dump() == theirs.dump());
    ++files;
  }
  CHECK(files >= 15);
  const std::string mixed = R"({"z": [1, -2, 3.5, 1e300, true, null, "s", {}, [], {"b": {"a": [[]]}}], "a": 18446744073709551615})";
  CHECK(parse_json_text(mixed).dump() == json::parse(mixed).dump());
}

TEST_CASE("a NUL byte after the document is refused, not taken as its end") {
  // Goal: nothing hides after a NUL (nlohmann's lexer ends the input there). Method: a valid scenario + "\0garbage",
  // through the parser and the loader; the same text without the NUL part loads.
  const std::string valid = read_bytes(source_path("scenarios/lab_fifo.json"));
  REQUIRE(rejection(valid).empty());
  const std::string hidden = valid + std::string("\0garbage", 8);
  std::string path;
  const std::string m = refusal(hidden, &path);
  CHECK(path == "/");
  CHECK(m.rfind("/: expected valid JSON, got a NUL byte at line ", 0) == 0);
  CHECK(rejection(hidden) == m);
  CHECK(refusal("{}" + std::string(1, '\0')) == "/: expected valid JSON, got a NUL byte at line 1, column 3 (JSON text "
                                                "holds none; what follows it would be ignored)");
  // A NUL where the lexer refuses it already keeps the lexer's message.
  CHECK(refusal(std::string("{\"a\":\"x\0\"}", 10)).find("control character U+0000") != std::string::npos);
}

TEST_CASE("a duplicate key is found in an object of many keys, with its path") {
  // Goal: the check still holds past the scan of small objects, where a hash set takes over. Method: objects of 10 and
  // 5,000 keys, each repeating one early key at the end, nested under an array element; and the same without the repeat.
  for (const int keys : {10, 5000}) {
    CAPTURE(keys);
    std::string obj = "{";
    for (int i = 0; i < keys; ++i) {
      if (i > 0) obj += ',';
      obj += "\"k";
      obj += std::to_string(i);
      obj += "\": 1";
    }
    CHECK(refusal(R"({"a": [0, )" + obj + "}]}").empty());
    std::string path;
    CHECK(refusal(R"({"a": [0, )" + obj + R"(, "k3": 1}]})", &path) ==
          "/a/1/k3: expected each key once in an object, got \"k3\" a second time");
    CHECK(path == "/a/1/k3");
  }
}

TEST_CASE("the depth bound, number overflow and control characters keep their messages") {
  // Goal: the parser's own refusals name a path as before. Method: one document each; exact messages.
  std::string deep;
  for (int i = 0; i < 65; ++i) deep += "[";
  CHECK(refusal(deep) == "/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/"
                         "0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0: expected values nested at most 64 deep, got deeper nesting");
  std::string ok_deep;
  for (int i = 0; i < 64; ++i) ok_deep += "[";
  for (int i = 0; i < 64; ++i) ok_deep += "]";
  CHECK(refusal(ok_deep).empty());
  CHECK(refusal(R"({"a": {"b~/": [1, 1e400]}})") ==
        "/a/b~0~1/1: expected a number within range, got a number overflow parsing '1e400'");
  CHECK(refusal("{\"a\\nb\": 1, \"a\\nb\": 2}") ==
        "/a\\x0ab: expected each key once in an object, got \"a\\x0Ab\" a second time");
  CHECK(refusal("{\"a\": }").rfind("/: expected valid JSON, got a parse error at line 1, column 7: syntax error", 0) == 0);
}
