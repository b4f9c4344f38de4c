// The explorer: seeds and shards, the swarm, classification, and findings
// that do not depend on how many threads ran them.
#include <catch2/catch.hpp>

#include <atomic>

#include "sim/explore/explorer.hpp"
#include "sim/explore/swarm.hpp"
#include "tests/explore/explore_test_support.hpp"

namespace {

using namespace admit;

// What a search found, as text: seeds, swarm and every run's classification, in seed order.
std::string findings_text(const explore::explore_summary& s) {
  std::string out;
  for (const auto& o : s.seeds) {
    out += std::to_string(o.seed) + " " + explore::swarm_summary(o.swarm) + " drawn=" + std::to_string(o.faults_drawn);
    for (const auto& r : o.runs) {
      out += " [" + r.variant + (r.counterexample ? " CE" : "") + " " + r.run_status + " " +
             std::to_string(r.requests) + " " + std::to_string(r.events);
      for (const auto& b : r.broken) out += " " + b.name + "@" + std::to_string(b.at_ns);
      out += "]";
    }
    out += "\n";
  }
  return out;
}

explore::explore_summary search(const scenario::scenario& sc, std::uint64_t count, unsigned jobs,
                                std::uint64_t shard_index = 0, std::uint64_t shard_count = 1) {
  explore::explore_options opt;
  opt.seeds.count = count;
  opt.seeds.shard_index = shard_index;
  opt.seeds.shard_count = shard_count;
  opt.jobs = jobs;
  return explore::run_explore(sc, opt);
}

using test::catalogue;

}  // namespace

TEST_CASE("a shard takes the seeds congruent to its index", "[explore][seeds]") {
  // Goal: --shard I/N splits a range without gaps or overlaps. Method: enumerate three shards of a range.
  std::vector<std::uint64_t> all;
  for (std::uint64_t i = 0; i < 3; ++i) {
    explore::seed_range r;
    r.first = 10;
    r.count = 17;
    r.shard_index = i;
    r.shard_count = 3;
    std::uint64_t k = 0;
    while (auto s = r.at(k++)) {
      CHECK(*s % 3 == i);
      all.push_back(*s);
    }
    CHECK(r.size() == k - 1);
  }
  std::sort(all.begin(), all.end());
  std::vector<std::uint64_t> want(17);
  for (std::uint64_t i = 0; i < 17; ++i) want[i] = 10 + i;
  CHECK(all == want);
  explore::seed_range top;
  top.first = UINT64_MAX - 1;
  CHECK(top.at(1) == UINT64_MAX);
  CHECK_FALSE(top.at(2).has_value());  // no wrap-around
}

TEST_CASE("the swarm stays inside the bounds and varies with the seed", "[explore][swarm]") {
  // Goal: swarm testing as documented. Method: many seeds of the clock-step scenario; every derived value within
  // its bound, kinds without a bound off, and both on and off seen.
  const auto sc = catalogue("explore_clock_steps");
  const auto& b = *sc.faults.rates;
  int on = 0, off = 0;
  for (std::uint64_t seed = 0; seed < 200; ++seed) {
    const auto s = explore::derive_swarm(sc, seed);
    REQUIRE(s.bounded);
    CHECK(s.rates.per_hour_of(admit::scenario::fault_kind::crash) == 0);
    CHECK(s.rates.per_hour_of(admit::scenario::fault_kind::pause) == 0);
    CHECK(s.rates.per_hour_of(admit::scenario::fault_kind::partition) == 0);
    CHECK(s.rates.per_hour_of(admit::scenario::fault_kind::clock_step) <= b.per_hour_of(admit::scenario::fault_kind::clock_step));
    CHECK(s.rates.max_step_ns >= b.max_step_ns / 10);
    CHECK(s.rates.max_step_ns <= b.max_step_ns);
    CHECK(s.rates.until_ns == b.until_ns);
    (s.rates.per_hour_of(admit::scenario::fault_kind::clock_step) > 0 ? on : off) += 1;
    // The explored scenario is the seed's run with the rates written out.
    const auto e = explore::explore_seed(sc, seed);
    CHECK_FALSE(e.sc.faults.rates.has_value());
    CHECK(e.sc.seed == seed);
    CHECK(e.sc.faults.schedule.size() == e.faults_drawn);
  }
  CHECK(on > 50);
  CHECK(off > 50);
}

TEST_CASE("findings do not depend on the number of threads", "[explore][determinism]") {
  // Goal: parallel runs are independent worlds. Method: the same seeds on 1 and 3 threads, and as three shards;
  // the findings, sorted by seed, are identical.
  const auto sc = catalogue("explore_clock_steps");
  const auto one = search(sc, 24, 1);
  const auto three = search(sc, 24, 3);
  REQUIRE(one.seeds.size() == 24);
  CHECK(findings_text(one) == findings_text(three));
  std::string sharded;
  std::vector<explore::seed_outcome> merged;
  for (std::uint64_t i = 0; i < 3; ++i) {
    auto part = search(sc, 24, 2, i, 3);
    for (auto& o : part.seeds) merged.push_back(std::move(o));
  }
  std::sort(merged.begin(), merged.end(), [](const auto& a, const auto& b) { return a.seed < b.seed; });
  explore::explore_summary m;
  m.seeds = std::move(merged);
  CHECK(findings_text(m) == findings_text(one));
}

TEST_CASE("explore finds the seed variant's violations from the bounds alone", "[explore][lease]") {
  // Goal: the issue's bar: no explicit schedule, only rates. Method: 32 seeds of each explore scenario; the seed
  // variant (and, for the crashed renewer, renewal) breaks as its expectation says, the hardened variant does
  // not break where it is expected to hold, and nothing is a counterexample.
  for (const char* name : {"explore_clock_steps", "explore_crashed_renewer"}) {
    INFO(name);
    const auto sc = catalogue(name);
    CHECK(sc.faults.schedule.empty());
    const auto s = search(sc, 32, 2);
    std::map<std::string, int> broke;
    for (const auto& o : s.seeds) {
      CHECK_FALSE(o.error.has_value());
      for (const auto& r : o.runs) {
        CHECK_FALSE(r.counterexample);
        if (!r.broken.empty()) ++broke[r.variant];
      }
    }
    CHECK(broke["seed"] > 0);
    if (std::string(name) == "explore_clock_steps") CHECK(broke["server_time"] == 0);
    if (std::string(name) == "explore_crashed_renewer") CHECK(broke["renewal"] > 0);
  }
}

TEST_CASE("a violation of a run expected to pass is a counterexample", "[explore][classify]") {
  // Goal: the classification the exit code rests on. Method: a mutant scenario that expects pass, and the same
  // with the violation declared.
  auto sc = scenario::load_scenario_text(test::read_bytes(test::source_path("tests/explore/mutants/admit_off_by_one.json")));
  const auto o = explore::explore_one(sc, 0);
  REQUIRE(o.runs.size() == 1);
  REQUIRE_FALSE(o.runs[0].broken.empty());
  CHECK(o.runs[0].counterexample);
  sc.expect.verdict = "violation";
  sc.expect.violated = {"gate_inflight_le_cap"};
  // The run goes on past the gate's violation: the third lease's work reaches the portal too, which
  // breaks its cap, an invariant not declared.
  CHECK(explore::explore_one(sc, 0).runs[0].counterexample);
  sc.expect.violated = {"gate_inflight_le_cap", "portal_inflight_le_cap"};
  const auto declared = explore::explore_one(sc, 0);
  CHECK_FALSE(declared.runs[0].counterexample);
  CHECK(declared.runs[0].met);
  sc.expect.violated = {"fifo_order"};  // a different invariant broke than the one declared
  CHECK(explore::explore_one(sc, 0).runs[0].counterexample);
}

TEST_CASE("outcomes are handed on in seed order, and a stop keeps a prefix of the seeds", "[explore][stream]") {
  // Goal: the streaming search gives what the summary CLI needs without keeping outcomes. Method: 200 seeds
  // on 3 threads, checking the order of the outcomes as they arrive and that the totals count them; then a
  // stop requested after 40 outcomes of 2000: the search ends with a prefix of the seeds, counted, marked
  // stopped, no longer than the reorder window lets threads run ahead (each takes one more seed at most).
  const auto sc = catalogue("explore_clock_steps");
  explore::explore_options opt;
  opt.seeds.first = 7;
  opt.seeds.count = 200;
  opt.jobs = 3;
  std::vector<std::uint64_t> seen;
  const explore::explore_totals all = explore::run_explore(sc, opt, [&](explore::seed_outcome&& o) { seen.push_back(o.seed); });
  REQUIRE(seen.size() == 200);
  for (std::size_t i = 0; i < seen.size(); ++i) CHECK(seen[i] == 7 + i);
  CHECK(all.ran == 200);
  CHECK(all.first_seed == std::optional<std::uint64_t>(7));
  CHECK(all.last_seed == std::optional<std::uint64_t>(206));
  CHECK_FALSE(all.stopped);

  std::atomic<std::size_t> handed{0};
  opt.stop = [&] { return handed.load() >= 40; };
  opt.seeds.count = 2000;
  seen.clear();
  const explore::explore_totals part = explore::run_explore(sc, opt, [&](explore::seed_outcome&& o) {
    seen.push_back(o.seed);
    ++handed;
  });
  CHECK(part.stopped);
  CHECK(part.ran == seen.size());
  CHECK(seen.size() >= 40);
  CHECK(seen.size() <= 40 + explore::reorder_window_per_job * opt.jobs + opt.jobs);
  for (std::size_t i = 0; i < seen.size(); ++i) CHECK(seen[i] == 7 + i);
}

TEST_CASE("a search that has enough ends at the same seed on any number of threads, its evidence counted",
          "[explore][stream][evidence]") {
  // Goal: --until-bound's rule ends the search at one prefix of the seeds whatever ran beside it.
  // Method: the rule "every variant broke or has 59 clean seeds" (a bound below 5%) over explore_clock_steps,
  // on 1 and on 3 threads: the same seeds handed on, the same totals and evidence; the seed variant broke,
  // server_time ran exactly the 59 clean seeds; and a rule never met runs the whole range, not enough.
  const auto sc = catalogue("explore_clock_steps");
  const std::uint64_t need = reports::seeds_for_bound(50'000);
  REQUIRE(need == 59);
  const auto rule = [need](const explore::explore_totals& t) {
    if (t.by_variant.empty()) return false;
    for (const auto& [variant, e] : t.by_variant)
      if (e.violating == 0 && e.seeds < need) return false;
    return true;
  };
  std::vector<std::vector<std::uint64_t>> seen(2);
  std::vector<explore::explore_totals> totals;
  for (const unsigned jobs : {1u, 3u}) {
    explore::explore_options opt;
    opt.seeds.count = 1'000;
    opt.jobs = jobs;
    opt.enough = rule;
    auto& mine = seen[totals.size()];
    totals.push_back(explore::run_explore(sc, opt, [&](explore::seed_outcome&& o) { mine.push_back(o.seed); }));
  }
  CHECK(seen[0] == seen[1]);
  for (const auto& t : totals) {
    CHECK(t.enough);
    CHECK_FALSE(t.stopped);
    REQUIRE(t.by_variant.count("server_time") == 1);
    CHECK(t.by_variant.at("server_time").seeds == need);
    CHECK(t.by_variant.at("server_time").violating == 0);
    CHECK(t.by_variant.at("seed").violating > 0);
    CHECK(t.ran == need);  // server_time is clean in every seed: the 59th ends it
    CHECK(explore::evidence_of(t).to_json() == explore::evidence_of(totals.front()).to_json());
  }
  explore::explore_options opt;
  opt.seeds.count = 30;
  opt.jobs = 2;
  opt.enough = rule;
  const auto short_of = explore::run_explore(sc, opt, [](explore::seed_outcome&&) {});
  CHECK_FALSE(short_of.enough);
  CHECK(short_of.ran == 30);
}
