// Tests that docs/scenarios.md matches the code: every ```json block in it is
// a complete scenario that the loader and the schema accept, and every error
// line it quotes is the message the malformed table pins for that file; and
// the invariant tables of docs/report.md and docs/scenarios.md list exactly
// the rows of sim/check/invariants.hpp.
#include <algorithm>
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "sim/check/invariants.hpp"
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

namespace {

// The first cell of every table row under `heading` (up to the next heading) whose cell is a `name`.
std::vector<std::string> named_rows(const std::string& text, const std::string& heading) {
  std::vector<std::string> out;
  std::size_t at = text.find("\n" + heading + "\n");
  REQUIRE(at != std::string::npos);
  const std::size_t end = text.find("\n#", at + heading.size() + 2);
  while ((at = text.find("\n| `", at)) != std::string::npos && at < end) {
    const std::size_t name = at + 4;
    out.push_back(text.substr(name, text.find('`', name) - name));
    at = name;
  }
  return out;
}

// The table's names, in its order.
std::vector<std::string> table_names() {
  std::vector<std::string> out;
  for (const auto& row : admit::check::invariant_table) out.emplace_back(row.name);
  return out;
}

std::vector<std::string> sorted(std::vector<std::string> v) {
  std::sort(v.begin(), v.end());
  return v;
}

}  // namespace

TEST_CASE("the invariant tables of the docs list exactly the rows of sim/check/invariants.hpp") {
  const std::string report = read_bytes(source_path("docs/report.md"));
  CHECK(sorted(named_rows(report, "## Invariants")) == sorted(table_names()));
  // The table of which world checks what: one row per invariant, with the worlds the row names.
  const std::string scenarios = read_bytes(source_path("docs/scenarios.md"));
  const std::size_t at = scenarios.find("\n| invariant | FIFO scenarios | lease scenarios |");
  REQUIRE(at != std::string::npos);
  std::size_t rows = 0;
  for (const auto& row : admit::check::invariant_table) {
    const std::string fifo = (row.worlds & admit::check::world_fifo) != 0 ? "yes" : "refused";
    const std::string lease = (row.worlds & admit::check::world_lease) != 0 ? "yes" : "refused";
    INFO(row.name);
    CHECK(scenarios.find("\n| `" + std::string(row.name) + "` | " + fifo + " | " + lease + " |", at) !=
          std::string::npos);
    ++rows;
  }
  const std::size_t end = scenarios.find("\n\n", at + 1);
  std::size_t listed = 0;
  for (std::size_t p = scenarios.find("\n| `", at); p != std::string::npos && p < end; p = scenarios.find("\n| `", p + 1))
    ++listed;
  CHECK(listed == rows);
}
