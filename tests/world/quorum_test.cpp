// The quorum design (scenarios/designs/quorum/, docs/designs.md) over several
// Redis nodes: the count and validity rule, and the world's verdicts with
// three nodes — a one-node failover and partition held, a one-node restart
// without persistence broken unless every node keeps the restart grace — and
// the deliberately broken count (mutation quorum_off_by_one) caught.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "gate/asio/lease_client.hpp"
#include "sim/world/fault_draw.hpp"
#include "world_test_support.hpp"

namespace {

using json = nlohmann::ordered_json;
using admit::world::run_record;

std::vector<run_record> run_file(const std::string& path, const json* patch = nullptr) {
  json doc = json::parse(admit::test::slurp(path));
  doc.erase("expect");
  if (patch != nullptr) doc.merge_patch(*patch);
  json parsed;
  const admit::scenario::scenario sc = admit::scenario::load_scenario_text(
      doc.dump(2), parsed, {admit::scenario::directory_of(path), admit::scenario::plain_file_reader()});
  return admit::world::run_all(sc, doc.value("seed", std::uint64_t{0}));
}

bool holds(const run_record& r, const std::string& name) {
  for (const auto& i : r.invariants)
    if (i.name == name) return i.holds;
  FAIL("no invariant " << name);
  return false;
}

}  // namespace

TEST_CASE("the quorum rule: a majority of the nodes, within the lease less the round and the drift", "[world][quorum]") {
  // Goal: the count and validity rule of gate::quorum_holds. Method: its edges for 1 to 5 nodes and a 10s lease.
  using admit::gate::quorum_holds;
  using admit::gate::quorum_of;
  CHECK(quorum_of(1) == 1);
  CHECK(quorum_of(2) == 2);
  CHECK(quorum_of(3) == 2);
  CHECK(quorum_of(4) == 3);
  CHECK(quorum_of(5) == 3);
  CHECK(quorum_of(3, true) == 1);  // the broken count
  CHECK(quorum_of(3, false, true) == 3);  // the rule "all"
  CHECK(quorum_of(5, false, true) == 5);
  const std::int64_t lease = 10'000'000'000;
  const std::int64_t drift = admit::gate::quorum_drift_ns(lease);
  CHECK(drift == 102'000'000);  // lease / 100 + 2ms
  CHECK(quorum_holds(3, 2, lease, 0));
  CHECK(quorum_holds(3, 3, lease, 1'000'000'000));
  CHECK_FALSE(quorum_holds(3, 1, lease, 0));
  CHECK_FALSE(quorum_holds(5, 2, lease, 0));
  CHECK(quorum_holds(5, 3, lease, 0));
  // Validity: the lease must outlive the round by more than the drift.
  CHECK(quorum_holds(3, 2, lease, lease - drift - 1));
  CHECK_FALSE(quorum_holds(3, 2, lease, lease - drift));
  CHECK_FALSE(quorum_holds(3, 3, lease, lease));
  // The rule "all": every node, within the same validity.
  CHECK_FALSE(quorum_holds(3, 2, lease, 0, false, true));
  CHECK(quorum_holds(3, 3, lease, 0, false, true));
  CHECK_FALSE(quorum_holds(3, 3, lease, lease - drift, false, true));
}

TEST_CASE("three nodes, four permits: the rule all holds where the majority spreads", "[world][quorum]") {
  // Goal: with every node granting every permit, each node's limit bounds the holders whatever the limit.
  // Method: quorum_spread, whose seed breaks the majority quorum (six holders at a portal of four); the same
  // faults under quorum_all keep the portal within its cap and end every item (deferred while a node is cut off).
  const auto runs = run_file("scenarios/quorum_spread.json");
  REQUIRE(runs.size() == 2);
  CHECK_FALSE(holds(runs[0], "portal_inflight_le_cap"));
  CHECK(runs[1].variant == "quorum_all");
  CHECK(holds(runs[1], "portal_inflight_le_cap"));
  CHECK(holds(runs[1], "liveness"));
  CHECK_FALSE(runs[1].any_violation());
  CHECK_FALSE(runs[1].inconclusive.has_value());
}

TEST_CASE("three nodes: the quorum holds a failover of one node", "[world][quorum]") {
  // Goal: one node forgetting the grants cannot make a majority. Method: quorum_failover (redis_failover's fault on
  // node 0 of three); the second four requests are granted only after the first four end.
  const auto runs = run_file("scenarios/quorum_failover.json");
  REQUIRE(runs.size() == 1);
  CHECK(holds(runs.front(), "portal_inflight_le_cap"));
  CHECK(holds(runs.front(), "gate_inflight_le_cap"));
  CHECK_FALSE(runs.front().any_violation());
  CHECK_FALSE(runs.front().inconclusive.has_value());
  CHECK(runs.front().lease->deferred == 0);
}

TEST_CASE("three nodes: the broken count (N/2) does not hold the failover", "[world][quorum]") {
  // Goal: the world test can fail. Method: quorum_failover with the mutation quorum_off_by_one (one grant of three
  // counts): the failed-over node alone grants the second four.
  const json patch = json::parse(R"({"gate": {"mutation": "quorum_off_by_one"}})");
  const auto runs = run_file("scenarios/quorum_failover.json", &patch);
  REQUIRE(runs.size() == 1);
  CHECK_FALSE(holds(runs.front(), "portal_inflight_le_cap"));
}

TEST_CASE("three nodes: a partition and a pause of one node each leave a majority", "[world][quorum]") {
  // Goal: the quorum keeps serving and holds while one node is cut off or paused. Method: quorum_partition_pause.
  const auto runs = run_file("scenarios/quorum_partition_pause.json");
  REQUIRE(runs.size() == 1);
  CHECK_FALSE(runs.front().any_violation());
  CHECK_FALSE(runs.front().inconclusive.has_value());
  CHECK(runs.front().lease->redis_errors > 0);  // the faulted node's calls ended at the socket timeout
}

TEST_CASE("three nodes: a restart without persistence of one node breaks the quorum; the grace on every node holds",
          "[world][quorum]") {
  // Goal: the known limit and its fix. Method: quorum_restart runs quorum (a second majority forms with the node
  // that forgot its grants) and quorum_grace (that node grants nothing for one lease).
  const auto runs = run_file("scenarios/quorum_restart.json");
  REQUIRE(runs.size() == 2);
  CHECK(runs[0].variant == "quorum");
  CHECK_FALSE(holds(runs[0], "portal_inflight_le_cap"));
  CHECK(runs[1].variant == "quorum_grace");
  CHECK_FALSE(runs[1].any_violation());
  CHECK_FALSE(runs[1].inconclusive.has_value());
}

TEST_CASE("drawn faults on Redis draw their node only when there are several", "[world][quorum]") {
  // Goal: one-node draws are unchanged, and N-node draws name nodes in range, from the seed. Method: the same rates
  // and seed drawn for one node and for three; the times and kinds agree where the node is the only difference.
  admit::scenario::fault_rates rates;
  rates.per_hour_of(admit::scenario::fault_kind::pause) = 600;
  rates.per_hour_of(admit::scenario::fault_kind::partition) = 600;
  rates.per_hour_of(admit::scenario::fault_kind::redis_restart) = 600;
  rates.per_hour_of(admit::scenario::fault_kind::redis_failover) = 600;
  rates.until_ns = 600LL * 1'000'000'000;
  admit::world::fault_nodes one;
  one.workers = 4;
  one.has_redis = true;
  admit::world::fault_nodes three = one;
  three.redis_nodes = 3;
  const auto a = admit::world::draw_faults(rates, one, 5);
  const auto b = admit::world::draw_faults(rates, three, 5);
  const auto b_again = admit::world::draw_faults(rates, three, 5);
  REQUIRE(!a.empty());
  REQUIRE(b.size() == b_again.size());
  std::size_t on_other_nodes = 0;
  for (const auto& f : a) CHECK(f.node == 0);
  for (std::size_t i = 0; i < b.size(); ++i) {
    CHECK(b[i].node == b_again[i].node);
    CHECK(b[i].node >= 0);
    CHECK(b[i].node < 3);
    on_other_nodes += b[i].node != 0;
  }
  CHECK(on_other_nodes > 0);
  // Crashes draw no node, so a crash-only draw is the same for one node and three.
  admit::scenario::fault_rates crashes;
  crashes.per_hour_of(admit::scenario::fault_kind::crash) = 600;
  crashes.until_ns = rates.until_ns;
  const auto c1 = admit::world::draw_faults(crashes, one, 5);
  const auto c3 = admit::world::draw_faults(crashes, three, 5);
  REQUIRE(c1.size() == c3.size());
  for (std::size_t i = 0; i < c1.size(); ++i) CHECK(c1[i].at_ns == c3[i].at_ns);
}
