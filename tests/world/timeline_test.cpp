// The timeline's lanes around spans: which later lanes it keeps, its bounds, and that keeping them
// changes nothing else in a run of either world.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "sim/scenario/loader.hpp"
#include "sim/world/timeline.hpp"
#include "sim/world/world.hpp"

namespace {

using admit::world::lane;
using admit::world::time_span;
using admit::world::timeline;

constexpr std::int64_t ms = 1'000'000;

// Requests 1..n, one every 10ms, each over 50ms after its arrival, fed to `tl` as a world does.
void feed(timeline& tl, std::uint64_t n) {
  for (std::uint64_t k = 1; k <= n; ++k) {
    const auto at = static_cast<std::int64_t>(k) * 10 * ms;
    if (lane* l = tl.lane_for(k)) l->arrived_ns = at;
    // Earlier requests end as later ones arrive (in the order a world would see it).
    if (k > 5)
      if (lane* l = tl.lane_for(k - 5)) {
        l->ended_ns = at;
        l->outcome = "completed";
      }
  }
}

}  // namespace

TEST_CASE("without spans only the first lanes are kept", "[world][timeline]") {
  // Goal: a run that asks for nothing records what it always did. Method: 1,000 requests, no spans.
  timeline tl;
  feed(tl, 1000);
  CHECK(tl.lanes().size() == timeline::max_lanes);
  CHECK(tl.span_lanes().empty());
  CHECK(tl.lane_for(timeline::max_lanes + 1) == nullptr);
}

TEST_CASE("the lanes that meet a span are kept, and no others that are over", "[world][timeline]") {
  // Goal: the zoom panels get exactly the requests active in their span. Method: 20,000 requests of
  // 50ms every 10ms (so the store fills and is compacted several times) and a span of 100ms at 100s:
  // the kept lanes that are over meet the span, every request that meets it is there, and none arrived after it.
  timeline tl;
  const time_span span{100'000 * ms, 100'100 * ms};
  tl.keep_lanes_in({span});
  feed(tl, 20'000);
  std::vector<std::uint64_t> meeting;
  for (const lane& l : tl.span_lanes()) {
    CHECK(l.arrived_ns <= span.to_ns);
    if (l.meets(span)) meeting.push_back(l.number);
  }
  // Requests 9,995 (arrived 99.95s, ended at 100s, the span's first instant) to 10,010 (arrived at its last).
  std::vector<std::uint64_t> expected;
  for (std::uint64_t k = 9'995; k <= 10'010; ++k) expected.push_back(k);
  CHECK(meeting == expected);
  CHECK(tl.span_lanes().size() <= timeline::max_span_lanes);
  CHECK_FALSE(tl.span_lanes_dropped());
  CHECK(tl.lanes().size() == timeline::max_lanes);
}

TEST_CASE("a store full of open lanes drops the next and says so", "[world][timeline][limits]") {
  // Goal: the bound holds when no lane can make room. Method: more requests than the store holds, none ending.
  timeline tl;
  tl.keep_lanes_in({time_span{0, INT64_MAX}});
  for (std::uint64_t k = 1; k <= timeline::max_lanes + timeline::max_span_lanes + 10; ++k)
    if (lane* l = tl.lane_for(k)) l->arrived_ns = static_cast<std::int64_t>(k);
  CHECK(tl.span_lanes().size() == timeline::max_span_lanes);
  CHECK(tl.span_lanes_dropped());
}

TEST_CASE("keeping lanes around spans changes nothing else in a run", "[world][timeline][determinism]") {
  // Goal: the page's second run is the same run. Method: a FIFO and a lease scenario of 1,000 requests, run
  // with and without a span late in the run: events, sequence numbers, invariants, metrics and the first
  // lanes are the same, and the second keeps the lanes of requests active in the span.
  const char* fifo = R"({"name": "long_fifo",
    "gate": {"kind": "fifo", "max_active": 4, "max_waiting": 50, "wait_deadline": "5s"},
    "service": {"service_time": {"kind": "uniform", "min": "20ms", "max": "80ms"}},
    "workload": {"arrivals": [{"kind": "poisson", "count": 1000, "mean_gap": "12ms"}]}})";
  const char* lease = R"({"name": "long_lease",
    "gate": {"kind": "lease", "variant": "seed", "limit": 4, "lease": "15s", "acquire_timeout": "30s"},
    "fleet": {"workers": 6},
    "service": {"portal_cap": 4, "service_time": {"kind": "uniform", "min": "20ms", "max": "80ms"}},
    "workload": {"arrivals": [{"kind": "constant", "count": 1000, "every": "15ms"}]}})";
  for (const char* text : {fifo, lease}) {
    const admit::scenario::scenario sc = admit::scenario::load_scenario_text(text);
    INFO(sc.name);
    const auto plain = admit::world::run_all(sc, 3);
    admit::world::lease_run_options opts;
    const time_span span{10'000 * ms, 10'200 * ms};
    opts.lanes_around = {span};
    const auto kept = admit::world::run_all(sc, 3, opts);
    REQUIRE(plain.size() == 1);
    REQUIRE(kept.size() == 1);
    const auto& a = plain.front();
    const auto& b = kept.front();
    CHECK(a.diagnostics.events == b.diagnostics.events);
    CHECK(a.diagnostics.sequence_numbers == b.diagnostics.sequence_numbers);
    CHECK(a.metrics.completed == b.metrics.completed);
    CHECK(a.metrics.wait_ns.max() == b.metrics.wait_ns.max());
    REQUIRE(a.invariants.size() == b.invariants.size());
    for (std::size_t i = 0; i < a.invariants.size(); ++i) CHECK(a.invariants[i].holds == b.invariants[i].holds);
    CHECK(a.series.lanes().size() == b.series.lanes().size());
    CHECK(a.series.span_lanes().empty());
    std::size_t meeting = 0;
    for (const lane& l : b.series.span_lanes()) {
      CHECK(l.number > timeline::max_lanes);
      meeting += l.meets(span) ? 1 : 0;
    }
    CHECK(meeting >= 10);  // about 200ms of arrivals every 12 or 15ms, and those still working then
  }
}
