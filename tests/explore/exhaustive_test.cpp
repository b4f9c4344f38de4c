// Exhaustive same-instant orders (sim::tie_chooser, explore --exhaustive):
// the scheduler offers every candidate, a search over the choices visits every
// order within its delay bound exactly once, an order replays, and a race the
// default order hides is found in every variant of the search where sampling
// needs luck.
#include <catch2/catch.hpp>

#include <set>

#include "sim/explore/exhaustive.hpp"
#include "sim/kernel/scheduler.hpp"
#include "tests/explore/explore_test_support.hpp"

namespace {

using namespace admit;

// Follows a fixed list of choices, then the default; records the candidate counts it was offered.
struct scripted_chooser final : sim::tie_chooser {
  std::vector<std::size_t> script;
  std::vector<std::size_t> offered;
  std::uint64_t fingerprint = 0;
  std::size_t choose(std::size_t n) override {
    const std::size_t i = offered.size();
    offered.push_back(n);
    return i < script.size() ? script[i] : 0;
  }
  void finished(std::uint64_t fp) override { fingerprint = fp; }
};

// Three timers due at one instant; the first to run posts two entries. The order in which all five ran.
std::vector<int> run_three(scripted_chooser& c) {
  sim::tie_choice_scope scope(c);
  std::vector<int> order;
  {
    sim::scheduler s;
    for (int i = 0; i < 3; ++i)
      s.schedule_at(10, [&order, &s, i] {
        if (order.empty()) {
          s.post([&order] { order.push_back(100); });
          s.post([&order] { order.push_back(101); });
        }
        order.push_back(i);
      });
    s.schedule_at(20, [&order] { order.push_back(200); });  // alone at its instant: never a choice
    s.run();
  }
  return order;
}

// Every order of run_three that a depth-first walk over the choices reaches, within `max_delays`.
std::set<std::vector<int>> all_orders(std::size_t max_delays, std::size_t& runs) {
  std::set<std::vector<int>> seen;
  std::vector<std::size_t> prefix;
  runs = 0;
  for (;;) {
    scripted_chooser c;
    c.script = prefix;
    seen.insert(run_three(c));
    ++runs;
    // Advance: the deepest point with an untried candidate within the bound.
    std::vector<std::size_t> path = c.script;
    path.resize(c.offered.size(), 0);
    bool advanced = false;
    while (!path.empty()) {
      std::size_t delays = 0;
      for (std::size_t i = 0; i + 1 < path.size(); ++i) delays += path[i];
      if (path.back() + 1 < c.offered[path.size() - 1] && delays + path.back() + 1 <= max_delays) {
        ++path.back();
        advanced = true;
        break;
      }
      path.pop_back();
    }
    if (!advanced) return seen;
    prefix = path;
  }
}

scenario::scenario hidden_race(const std::string& mutation) {
  // A holder and a waiter arrive together; the waiter's cancellation lands on the holder's release
  // (tests/explore/tie_order_test.cpp samples the same race).
  return scenario::load_scenario_text(R"({"name": "hidden_race",
    "gate": {"kind": "fifo", "max_active": 1, "max_waiting": 1, "wait_deadline": "1s", "mutation": ")" +
                                      mutation + R"("},
    "workload": {"requests": [{"id": "holder", "at": "0ms", "service": "100ms"},
                              {"id": "waiter", "at": "0ms", "cancel_at": "100ms"}]}})");
}

}  // namespace

TEST_CASE("a chooser that always picks 0 runs the default order", "[explore][exhaustive]") {
  // Goal: choice 0 is the default (time, sequence) order. Method: compare with no chooser at all.
  scripted_chooser c;
  CHECK(run_three(c) == std::vector<int>{0, 1, 2, 100, 101, 200});
  // Offered: 3 timers; then 2 timers + the oldest post; then 1 timer + a post; then the two posts one at a time.
  CHECK(c.offered == std::vector<std::size_t>{3, 3, 2});
}

TEST_CASE("the scheduler offers every same-instant candidate and posts keep their order", "[explore][exhaustive]") {
  // Goal: the candidate set is every due timer plus the oldest post. Method: enumerate every order with no
  // bound; count them by hand: the first timer is any of 3, then the two other timers (in either order) and
  // the two posts (kept in order) make 4! / 2 = 12 sequences; 3 * 12 = 36 orders, each run once.
  std::size_t runs = 0;
  const auto orders = all_orders(100, runs);
  CHECK(orders.size() == 36);
  CHECK(runs == 36);
  for (const auto& o : orders) {
    CHECK(o.back() == 200);
    CHECK(std::find(o.begin(), o.end(), 100) < std::find(o.begin(), o.end(), 101));
  }
}

TEST_CASE("a delay bound keeps the orders with few delays", "[explore][exhaustive]") {
  // Goal: the bound counts delays as the sum of choices. Method: with 0 delays only the default order;
  // with 1 delay, the default plus one order per point that has a second candidate (3 points).
  std::size_t runs = 0;
  CHECK(all_orders(0, runs).size() == 1);
  CHECK(all_orders(1, runs).size() == 4);
  CHECK(runs == 4);
}

TEST_CASE("exhaustive search finds the handover race in every order that has it", "[explore][exhaustive][mutant]") {
  // Goal: the race the default order hides is found without luck, and the real gate holds in every order.
  // Method: enumerate with no delay bound; the search is complete; fingerprints confirm distinct orders.
  explore::exhaustive_limits lim;
  lim.max_delays = 1'000;
  const auto mutant = explore::enumerate_orders(hidden_race("leak_handover_on_cancel"), lim);
  REQUIRE(mutant.variants.size() == 1);
  const auto& m = mutant.variants.front();
  CHECK(m.complete);
  CHECK(m.orders > 2);
  CHECK(m.distinct_fingerprints == m.orders);
  CHECK(m.default_outcome.broken.empty());  // the default order hides it
  CHECK(m.violating_orders > 0);
  CHECK(m.counterexample_orders == m.violating_orders);
  REQUIRE_FALSE(m.findings.empty());
  const auto& f = m.findings.front();
  CHECK_FALSE(f.path.empty());
  CHECK(f.delays >= 1);

  // The finding replays: the same order breaks the same invariant; the default order does not.
  const auto again = explore::run_in_order(hidden_race("leak_handover_on_cancel"), "", f.path);
  REQUIRE_FALSE(again.broken.empty());
  CHECK(again.broken.front().name == f.outcome.broken.front().name);
  CHECK(explore::run_in_order(hidden_race("leak_handover_on_cancel"), "", {}).broken.empty());

  const auto real = explore::enumerate_orders(hidden_race("none"), lim);
  const auto& r = real.variants.front();
  CHECK(r.complete);
  CHECK(r.violating_orders == 0);
  CHECK(r.orders > 2);
  // The replayed order runs clean on the real gate.
  CHECK(explore::run_in_order(hidden_race("none"), "", f.path).broken.empty());
}

TEST_CASE("a lease scenario is enumerated per variant", "[explore][exhaustive][lease]") {
  // Goal: one enumeration per variant, each complete within a small bound, with choice points to vary.
  // Method: two workers acquire at the same instant under two variants.
  const auto sc = scenario::load_scenario_text(R"({"name": "twins", "seed": 2,
    "gate": {"kind": "lease", "variant": ["seed", "server_time"], "limit": 1, "lease": "5s", "acquire_timeout": "10s"},
    "fleet": {"workers": 2},
    "service": {"portal_cap": 1, "service_time": "1s"},
    "workload": {"requests": [{"id": "a", "at": "0ms"}, {"id": "b", "at": "0ms"}]}})");
  explore::exhaustive_limits lim;
  lim.max_delays = 1;
  const auto s = explore::enumerate_orders(sc, lim);
  REQUIRE(s.variants.size() == 2);
  CHECK(s.variants[0].variant == "seed");
  CHECK(s.variants[1].variant == "server_time");
  for (const auto& v : s.variants) {
    INFO(v.variant);
    CHECK(v.complete);
    CHECK(v.choice_points_default > 0);
    CHECK(v.orders == v.distinct_fingerprints);
    CHECK(v.orders > 1);
    CHECK(v.violating_orders == 0);
  }
}

TEST_CASE("the order cap stops a search and says it is incomplete", "[explore][exhaustive]") {
  explore::exhaustive_limits lim;
  lim.max_delays = 1'000;
  lim.max_orders = 2;
  const auto s = explore::enumerate_orders(hidden_race("none"), lim);
  CHECK(s.variants.front().orders == 2);
  CHECK_FALSE(s.variants.front().complete);
}

TEST_CASE("orders are written and parsed as POINT:CHOICE lists", "[explore][exhaustive]") {
  std::string err;
  const explore::order o{{3, 1}, {17, 2}};
  CHECK(explore::format_order(o) == "3:1,17:2");
  CHECK(explore::parse_order("3:1,17:2", err) == o);
  CHECK(explore::parse_order("", err) == explore::order{});
  for (const char* bad : {"3", "3:", ":1", "3:0", "3:1,", "3:1,2:1", "3:1;4:1", "a:1", "1234567890:1", "-1:1"}) {
    INFO(bad);
    err.clear();
    CHECK_FALSE(explore::parse_order(bad, err));
    CHECK_FALSE(err.empty());
  }
  // An order that does not fit the run is refused with the reason.
  CHECK_THROWS_WITH(explore::run_in_order(hidden_race("none"), "", {{100000, 1}}),
                    Catch::Contains("does not fit the run"));
  CHECK_THROWS_WITH(explore::run_in_order(hidden_race("none"), "", {{0, 50}}), Catch::Contains("candidates"));
  CHECK_THROWS_WITH(explore::run_in_order(hidden_race("none"), "seed", {}), Catch::Contains("no lease variant"));
}
