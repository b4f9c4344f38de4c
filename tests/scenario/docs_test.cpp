// Tests that docs/scenarios.md matches the code: every ```json block in it is
// a complete scenario that the loader and the schema accept, and every error
// line it quotes is the message the malformed table pins for that file.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "sim/scenario/loader.hpp"
#include "tests/scenario/json_schema_subset.hpp"
#include "tests/scenario/scenario_test_support.hpp"

namespace {

using json = nlohmann::ordered_json;
using admit::test::read_bytes;
using admit::test::read_json;
using admit::test::source_path;

// The bodies of the fenced blocks that open with "```<lang>".
std::vector<std::string> fenced_blocks(const std::string& text, const std::string& lang) {
  std::vector<std::string> blocks;
  const std::string open = "```" + lang + "\n";
  std::size_t at = 0;
  while ((at = text.find(open, at)) != std::string::npos) {
    const std::size_t body = at + open.size();
    const std::size_t end = text.find("\n```", body);
    REQUIRE(end != std::string::npos);
    blocks.push_back(text.substr(body, end - body + 1));
    at = end + 4;
  }
  return blocks;
}

}  // namespace

TEST_CASE("every example in docs/scenarios.md loads and is valid against the schema") {
  // Goal: the documentation cannot drift from the format. Method: load and validate each ```json block.
  const std::string doc = read_bytes(source_path("docs/scenarios.md"));
  const admit::test::schema_subset_validator validator(read_json(source_path("scenarios/schema.json")));
  const auto blocks = fenced_blocks(doc, "json");
  CHECK(blocks.size() >= 11);
  for (const auto& b : blocks) {
    CAPTURE(b);
    CHECK(admit::test::rejection(b) == "");
    CHECK(validator.validate(json::parse(b)).value_or("") == "");
  }
}

TEST_CASE("every error line quoted in docs/scenarios.md is the table's message for its file") {
  // Goal: the documented messages are the real ones. Method: each "admitsim: FILE: MESSAGE" line of the ```console
  // blocks against tests/scenario/malformed/expected.json.
  const std::string doc = read_bytes(source_path("docs/scenarios.md"));
  const json expected = read_json(source_path("tests/scenario/malformed/expected.json"));
  std::size_t lines = 0;
  for (const auto& block : fenced_blocks(doc, "console")) {
    std::size_t start = 0;
    while (start < block.size()) {
      const std::size_t end = block.find('\n', start);
      const std::string line = block.substr(start, end - start);
      start = end + 1;
      const std::string prefix = "admitsim: ";
      if (line.rfind(prefix, 0) != 0) continue;
      CAPTURE(line);
      const std::size_t colon = line.find(": ", prefix.size());
      REQUIRE(colon != std::string::npos);
      const std::string file = line.substr(prefix.size(), colon - prefix.size());
      REQUIRE(expected.contains(file));
      CHECK(line.substr(colon + 2) == expected[file]["message"].get<std::string>());
      ++lines;
    }
  }
  CHECK(lines >= 10);
}
