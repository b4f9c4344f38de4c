// faults.rates drawn into a schedule (sim/world/fault_draw.hpp): the rule,
// its determinism, and the world really running the drawn faults.
#include <catch2/catch.hpp>

#include "sim/world/fault_draw.hpp"
#include "tests/explore/explore_test_support.hpp"

namespace {

using namespace admit;
using scenario::fault_kind;

constexpr sim::vtime_ns sec = sim::sec;

scenario::fault_rates rates_of(std::int64_t crash, std::int64_t partition, std::int64_t pause, std::int64_t step) {
  scenario::fault_rates r;
  r.per_hour_of(admit::scenario::fault_kind::crash) = crash;
  r.per_hour_of(admit::scenario::fault_kind::partition) = partition;
  r.per_hour_of(admit::scenario::fault_kind::pause) = pause;
  r.per_hour_of(admit::scenario::fault_kind::clock_step) = step;
  r.max_step_ns = 2 * sec;
  r.mean_duration_ns = 3 * sec;
  r.until_ns = 3600 * sec;
  return r;
}

}  // namespace

TEST_CASE("drawn faults follow the rates, the targets and the bounds", "[explore][fault_draw]") {
  // Goal: the documented rule. Method: one hour at known rates; counts near the rate, every field in range.
  world::fault_nodes nodes;
  nodes.workers = 4;
  nodes.has_redis = true;
  const auto faults = world::draw_faults(rates_of(60, 30, 120, 90), nodes, 7);
  std::map<fault_kind, int> per_kind;
  sim::vtime_ns last = 0;
  for (const auto& f : faults) {
    ++per_kind[f.kind];
    CHECK(f.at_ns >= last);  // time order
    last = f.at_ns;
    CHECK(f.at_ns < 3600 * sec);
    switch (f.kind) {
      case fault_kind::crash:
        REQUIRE(f.target);
        CHECK(f.target->k == scenario::node_ref::kind::worker);
        REQUIRE(f.duration_ns);  // drawn crashes restart
        CHECK(*f.duration_ns >= 1);
        break;
      case fault_kind::clock_step:
        REQUIRE(f.target);
        CHECK(f.target->k == scenario::node_ref::kind::worker);
        CHECK(f.step_ns != 0);
        CHECK(f.step_ns >= -2 * sec);
        CHECK(f.step_ns <= 2 * sec);
        break;
      case fault_kind::partition:
        CHECK(f.target.has_value() != f.between.has_value());
        REQUIRE(f.duration_ns);
        break;
      case fault_kind::pause:
        REQUIRE(f.duration_ns);
        CHECK(*f.duration_ns <= 24 * 3600 * sec);
        break;
      default:
        FAIL("a kind rates do not draw");
    }
    if (f.target && f.target->k == scenario::node_ref::kind::worker) CHECK(f.target->worker < 4);
  }
  // Poisson counts: mean = rate, standard deviation sqrt(rate); 5 sigma either way.
  CHECK(per_kind[fault_kind::crash] > 60 - 40);
  CHECK(per_kind[fault_kind::crash] < 60 + 40);
  CHECK(per_kind[fault_kind::pause] > 120 - 55);
  CHECK(per_kind[fault_kind::pause] < 120 + 55);
}

TEST_CASE("drawn faults depend on the seed and on nothing else", "[explore][fault_draw][determinism]") {
  // Goal: determinism and separate streams. Method: same seed twice; another seed; a change to one kind's rate.
  world::fault_nodes nodes;
  nodes.workers = 3;
  nodes.has_redis = true;
  const auto a = world::draw_faults(rates_of(10, 10, 10, 10), nodes, 1);
  const auto b = world::draw_faults(rates_of(10, 10, 10, 10), nodes, 1);
  const auto other_seed = world::draw_faults(rates_of(10, 10, 10, 10), nodes, 2);
  REQUIRE(a.size() == b.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    CHECK(a[i].at_ns == b[i].at_ns);
    CHECK(a[i].kind == b[i].kind);
  }
  CHECK((other_seed.size() != a.size() || other_seed.front().at_ns != a.front().at_ns));
  // Doubling the crash rate leaves the pauses where they were.
  const auto more_crashes = world::draw_faults(rates_of(20, 10, 10, 10), nodes, 1);
  auto pauses = [](const std::vector<scenario::fault_spec>& fs) {
    std::vector<sim::vtime_ns> at;
    for (const auto& f : fs)
      if (f.kind == fault_kind::pause) at.push_back(f.at_ns);
    return at;
  };
  CHECK(pauses(more_crashes) == pauses(a));
}

TEST_CASE("Redis restarts and failovers are drawn only where there is a Redis", "[explore][fault_draw]") {
  // Goal: the two Redis kinds follow the rule (target redis, persistence either way, lag within its bound), draw
  // from their own streams (the worker kinds stay where they were), and are skipped without a lease gate.
  world::fault_nodes nodes;
  nodes.workers = 3;
  nodes.has_redis = true;
  auto r = rates_of(10, 0, 10, 0);
  const auto before = world::draw_faults(r, nodes, 11);
  r.per_hour_of(admit::scenario::fault_kind::redis_restart) = 120;
  r.per_hour_of(admit::scenario::fault_kind::redis_failover) = 60;
  r.max_replication_lag_ns = 2 * sec;
  const auto faults = world::draw_faults(r, nodes, 11);
  std::map<fault_kind, int> per_kind;
  std::map<scenario::persistence, int> persist;
  std::vector<scenario::fault_spec> worker_kinds;
  for (const auto& f : faults) {
    ++per_kind[f.kind];
    if (f.kind == fault_kind::redis_restart || f.kind == fault_kind::redis_failover) {
      REQUIRE(f.target);
      CHECK(f.target->k == scenario::node_ref::kind::redis);
      REQUIRE(f.duration_ns);
      CHECK(*f.duration_ns >= 1);
      if (f.kind == fault_kind::redis_restart) ++persist[f.persist];
      if (f.kind == fault_kind::redis_failover) {
        CHECK(f.replication_lag_ns >= 1);
        CHECK(f.replication_lag_ns <= 2 * sec);
      }
    } else {
      worker_kinds.push_back(f);
    }
  }
  // Poisson counts, 5 sigma either way.
  CHECK(per_kind[fault_kind::redis_restart] > 120 - 55);
  CHECK(per_kind[fault_kind::redis_restart] < 120 + 55);
  CHECK(per_kind[fault_kind::redis_failover] > 60 - 40);
  CHECK(per_kind[fault_kind::redis_failover] < 60 + 40);
  CHECK(persist[scenario::persistence::none] > 20);
  CHECK(persist[scenario::persistence::aof_everysec] > 20);
  CHECK(persist[scenario::persistence::aof_always] == 0);  // only a scenario that asks for it draws it
  // rates.restart_persistence: the same restarts at the same times, each with a persistence from the list.
  auto r_always = r;
  r_always.restart_persistence = {scenario::persistence::aof_always};
  const auto always = world::draw_faults(r_always, nodes, 11);
  REQUIRE(always.size() == faults.size());
  for (std::size_t i = 0; i < faults.size(); ++i) {
    CHECK(always[i].at_ns == faults[i].at_ns);
    if (always[i].kind == fault_kind::redis_restart) CHECK(always[i].persist == scenario::persistence::aof_always);
  }
  REQUIRE(worker_kinds.size() == before.size());
  for (std::size_t i = 0; i < before.size(); ++i) {
    CHECK(worker_kinds[i].at_ns == before[i].at_ns);
    CHECK(worker_kinds[i].kind == before[i].kind);
  }
  nodes.has_redis = false;
  for (const auto& f : world::draw_faults(r, nodes, 11)) {
    CHECK(f.kind != fault_kind::redis_restart);
    CHECK(f.kind != fault_kind::redis_failover);
  }
}

TEST_CASE("drawn faults heal by the liveness horizon", "[explore][fault_draw]") {
  // Goal: the loader's rule for scheduled faults holds for drawn ones. Method: long mean durations, a close horizon.
  world::fault_nodes nodes;
  nodes.workers = 2;
  nodes.has_redis = true;
  nodes.heal_by_ns = 60 * sec;
  auto r = rates_of(600, 600, 600, 0);
  r.mean_duration_ns = 3600 * sec;
  r.until_ns = 60 * sec;
  const auto faults = world::draw_faults(r, nodes, 3);
  REQUIRE_FALSE(faults.empty());
  for (const auto& f : faults) {
    REQUIRE(f.duration_ns);
    CHECK(f.at_ns + *f.duration_ns <= 60 * sec);
  }
}

TEST_CASE("a run draws its faults from faults.rates", "[explore][fault_draw][world]") {
  // Goal: the worlds no longer ignore rates. Method: a scenario with rates runs exactly as the same scenario
  // with the drawn schedule written out, and differently from the one without faults.
  const std::string text = R"({"name": "rated", "seed": 5,
    "gate": {"kind": "lease", "variant": "seed", "limit": 2, "lease": "10s", "acquire_timeout": "20s"},
    "fleet": {"workers": 4},
    "service": {"portal_cap": 2, "service_time": {"kind": "uniform", "min": "500ms", "max": "2s"}},
    "workload": {"arrivals": [{"kind": "constant", "count": 80, "every": "400ms"}]},
    "faults": {"rates": {"crash_per_hour": 600, "pause_per_hour": 600, "clock_step_per_hour": 600,
                         "max_step": "15s", "mean_duration": "2s", "until": "30s"}}})";
  const auto sc = scenario::load_scenario_text(text);
  const auto drawn = world::with_drawn_faults(sc, 5);
  CHECK_FALSE(drawn.faults.rates.has_value());
  CHECK(drawn.faults.schedule.size() > 3);
  CHECK(test::outcome_bytes(sc, 5) == test::outcome_bytes(drawn, 5));
  auto none = sc;
  none.faults.rates.reset();
  CHECK(test::outcome_bytes(sc, 5) != test::outcome_bytes(none, 5));
}

TEST_CASE("rates of a FIFO scenario draw faults with FIFO targets", "[explore][fault_draw][fifo]") {
  // Goal: every drawn fault of a FIFO scenario is one the FIFO world honours (the loader's vocabulary).
  // Method: one hour of crashes, partitions and pauses for one process without Redis.
  world::fault_nodes nodes;  // one worker, no Redis: a FIFO scenario
  const auto faults = world::draw_faults(rates_of(30, 30, 30, 0), nodes, 11);
  std::map<fault_kind, int> per_kind;
  for (const auto& f : faults) {
    ++per_kind[f.kind];
    switch (f.kind) {
      case fault_kind::crash:
      case fault_kind::pause:
        REQUIRE(f.target);
        CHECK(scenario::to_string(*f.target) == "worker:0");
        CHECK(f.duration_ns);
        break;
      case fault_kind::partition:
        CHECK_FALSE(f.target);
        REQUIRE(f.between);
        CHECK(scenario::to_string(f.between->first) == "worker:0");
        CHECK(scenario::to_string(f.between->second) == "portal");
        break;
      default:
        FAIL("a kind a FIFO scenario does not draw");
    }
  }
  CHECK(per_kind[fault_kind::crash] > 0);
  CHECK(per_kind[fault_kind::pause] > 0);
  CHECK(per_kind[fault_kind::partition] > 0);
}
