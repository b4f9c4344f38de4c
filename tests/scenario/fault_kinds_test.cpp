// Tests that the fault kind table (sim/scenario/fault_kinds.hpp) is the one
// description of the kinds: the loader, docs/scenarios.md and the schema say
// what its rows say. Method: a minimal fault of each row built from the row
// alone loads in each world the row names and is refused in the others; the
// docs tables and the schema's fault definitions list exactly the rows.
#include <catch2/catch.hpp>
#include <set>
#include <string>
#include <vector>

#include "sim/scenario/fault_kinds.hpp"
#include "tests/scenario/scenario_test_support.hpp"

namespace {

using namespace admit::scenario;
using admit::test::read_bytes;
using admit::test::rejection;
using admit::test::source_path;
namespace check = admit::check;

constexpr unsigned worlds[] = {check::world_fifo, check::world_lease};

std::string doc_in(unsigned world, const std::string& faults) {
  const std::string gate = world == check::world_lease ? R"({"kind": "lease", "limit": 1})"
                                                       : R"({"kind": "fifo", "max_active": 1})";
  return R"({"name": "t", "gate": )" + gate + R"(, "workload": {"requests": [{"id": "a", "at": "0ms"}]}, "faults": )" +
         faults + "}";
}

std::string first_node(unsigned bits) {
  if (bits & node_worker) return "\"worker:0\"";
  if (bits & node_redis) return "\"redis\"";
  return "\"portal\"";
}

// The smallest fault the row allows in `world`: every required field, nothing else.
std::string minimal_fault(const fault_kind_info& row, unsigned world) {
  const fault_targets& t = targets_in(row, world);
  std::string f = R"({"at": "1s", "kind": ")" + std::string(row.name) + "\"";
  if (t.rule == target_rule::required || t.rule == target_rule::target_or_link)
    f += ", \"target\": " + first_node(t.target);
  if (row.duration == fault_duration::required) f += R"(, "duration": "1s")";
  if (row.params & param_step) f += R"(, "step": "1s")";
  if (row.params & param_client_timeout) f += R"(, "client_timeout": "1s")";
  return f + "}";
}

// The first cells ("`name`") of the rows of the first table after `heading`.
std::vector<std::string> table_names(const std::string& text, const std::string& heading) {
  std::size_t at = text.find("\n" + heading + "\n");
  REQUIRE(at != std::string::npos);
  at = text.find("\n|---", at);
  REQUIRE(at != std::string::npos);
  std::vector<std::string> names;
  at = text.find('\n', at + 1) + 1;
  while (text.compare(at, 3, "| `") == 0) {
    const std::size_t end = text.find("` |", at + 3);
    REQUIRE(end != std::string::npos);
    names.push_back(text.substr(at + 3, end - at - 3));
    at = text.find('\n', at) + 1;
  }
  return names;
}

}  // namespace

TEST_CASE("every fault kind names a world, and its row alone describes a fault that loads") {
  for (const fault_kind_info& row : fault_kind_table) {
    CAPTURE(row.name);
    CHECK(row.worlds != 0);
    CHECK(find_fault_kind(row.name) == &row);
    CHECK(fault_kind_names[static_cast<std::size_t>(row.kind)] == std::string(row.name));
    for (const unsigned world : worlds) {
      CAPTURE(world);
      const std::string schedule = R"({"schedule": [)" + minimal_fault(row, world) + "]}";
      const std::string message = rejection(doc_in(world, schedule));
      if (applies(row, world)) {
        CHECK(message.empty());
      } else {
        CHECK(message.rfind("/faults/schedule/0/kind: expected a fault kind a " + std::string(check::world_name(world)) +
                                " scenario honours (",
                            0) == 0);
        CHECK(message.find(std::string("is refused: ") + row.refused_why) != std::string::npos);
      }
      if (!drawable(row)) continue;
      const std::string rates = R"({"rates": {")" + std::string(row.rate.key) + R"(": 1, "until": "1h"}})";
      const std::string rate_message = rejection(doc_in(world, rates));
      if (applies(row, world)) {
        CHECK(rate_message.empty());
      } else {
        CHECK(rate_message == "/faults/rates/" + std::string(row.rate.key) + ": " + row.rate_refused_why +
                                  "; expected 0 or no key");
      }
    }
  }
  // A kind rates cannot draw has no key there.
  for (const fault_kind_info& row : fault_kind_table)
    if (!drawable(row))
      CHECK(rejection(doc_in(check::world_lease, R"({"rates": {")" + std::string(row.name) + R"(_per_hour": 1}})"))
                .rfind("/faults/rates/" + std::string(row.name) + "_per_hour: unknown key", 0) == 0);
}

TEST_CASE("docs/scenarios.md lists exactly the table's fault kinds") {
  // Goal: a kind added to the table is documented, and the docs name no kind the table lacks.
  // Method: the first cells of the "Faults" table (every kind) and of the FIFO one (the kinds a FIFO world honours).
  const std::string text = read_bytes(source_path("docs/scenarios.md"));
  std::vector<std::string> every;
  std::vector<std::string> fifo;
  for (const fault_kind_info& row : fault_kind_table) {
    every.emplace_back(row.name);
    if (applies(row, check::world_fifo)) fifo.emplace_back(row.name);
  }
  CHECK(table_names(text, "## Faults") == every);
  CHECK(table_names(text, "### Faults in a FIFO scenario") == fifo);
}

TEST_CASE("scenarios/schema.json defines exactly the table's fault kinds and their fields") {
  // Goal: the schema cannot drift from the table. Method: each row has a fault_<name> definition in the
  // "fault" choice, in table order, whose properties are the fields the row takes; the rates name its key.
  const auto schema = admit::test::read_json(source_path("scenarios/schema.json"));
  const auto& defs = schema["$defs"];
  const auto& choice = defs["fault"]["oneOf"];
  REQUIRE(choice.size() == fault_kind_count);
  for (std::size_t i = 0; i < fault_kind_count; ++i) {
    const fault_kind_info& row = fault_kind_table[i];
    CAPTURE(row.name);
    const std::string def = "fault_" + std::string(row.name);
    CHECK(choice[i]["$ref"] == "#/$defs/" + def);
    REQUIRE(defs.contains(def));
    CHECK(defs[def]["properties"]["kind"]["const"] == row.name);
    std::set<std::string> expected{"at", "kind", "target"};
    if (row.fifo.rule == target_rule::target_or_link || row.lease.rule == target_rule::target_or_link)
      expected.insert("between");
    if (row.duration != fault_duration::none) expected.insert("duration");
    if (row.params & param_persistence) expected.insert("persistence");
    if (row.params & param_replication_lag) expected.insert("replication_lag");
    if (row.params & param_client_timeout) expected.insert("client_timeout");
    if (row.params & param_step) expected.insert("step");
    // A kind that can strike Redis names the node (gate.redis_nodes).
    if ((row.lease.target | row.lease.link_end_a | row.lease.link_end_b) & node_redis) expected.insert("node");
    std::set<std::string> got;
    for (auto it = defs[def]["properties"].begin(); it != defs[def]["properties"].end(); ++it) got.insert(it.key());
    CHECK(got == expected);
    if (drawable(row)) CHECK(defs["rates"]["properties"].contains(row.rate.key));
  }
}
