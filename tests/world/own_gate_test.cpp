// Goal: the FIFO world judges a team's own gate core (sim/world/own_gate.hpp)
// as it judges admitsim's: a core that behaves as fifo_gate gets the same
// report, byte for byte but for its `gate_core` key; a core that breaks the
// gate's rules or its contract is caught, with the invariant and a cause that
// names the core; what cannot run with a core of one's own is refused.
//
// Method. The differential: each FIFO scenario of the catalogue without a
// core mutation, run with admitsim's core and with two own cores, fifo_gate
// through the type-erased path and `plain_fifo`, written here from the
// contract alone; then a RapidCheck property over the same scenarios and
// drawn seeds. The property's counterpart runs the same check with a
// deliberately broken core (`newest_first`), and must find a difference:
// the property can fail. Then one scenario per broken core, each naming the
// invariant it breaks.
#include <catch2/catch.hpp>
#include <rapidcheck.h>

#include <algorithm>
#include <cstdlib>
#include <deque>
#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "gate/fifo/gate_core.hpp"
#include "reports/report.hpp"
#include "reports/sha256.hpp"
#include "sim/explore/explorer.hpp"
#include "sim/scenario/loader.hpp"
#include "sim/world/own_gate.hpp"
#include "sim/world/world.hpp"
#include "tests/common/rapidcheck_support.hpp"
#include "world_test_support.hpp"

namespace {

using namespace admit;
using fifo::acquire_outcome;
using fifo::leave_outcome;
using fifo::ticket_id;

// A FIFO gate core written from gate/fifo/gate_core.hpp's contract alone: a
// deque of waiters, a set of handed-over tickets in a vector.
class plain_fifo {
 public:
  explicit plain_fifo(const fifo::config& cfg) : cfg_(cfg) {}

  fifo::acquire_result acquire(ticket_id t, std::int64_t now) {
    if (active_ < cfg_.max_active && queue_.empty()) {
      ++active_;
      return {acquire_outcome::admitted, 0};
    }
    if (static_cast<std::int64_t>(queue_.size()) >= cfg_.max_waiting) return {acquire_outcome::queue_full, 0};
    queue_.push_back(t);
    return {acquire_outcome::queued, now + cfg_.wait_deadline_ns};
  }
  fifo::release_result release(std::int64_t) {
    if (active_ == 0) return {false, std::nullopt};
    --active_;
    return {true, promote()};
  }
  bool claim(ticket_id t, std::int64_t) { return take_handed(t); }
  fifo::leave_result expire(ticket_id t, std::int64_t) { return leave(t); }
  fifo::leave_result cancel(ticket_id t, std::int64_t) { return leave(t); }

 protected:
  std::optional<ticket_id> promote() {
    if (queue_.empty() || active_ >= cfg_.max_active) return std::nullopt;
    const ticket_id next = pick_next();
    ++active_;
    handed_.push_back(next);
    return next;
  }
  virtual ticket_id pick_next() {
    const ticket_id t = queue_.front();
    queue_.pop_front();
    return t;
  }
  bool take_handed(ticket_id t) {
    const auto it = std::find(handed_.begin(), handed_.end(), t);
    if (it == handed_.end()) return false;
    handed_.erase(it);
    return true;
  }
  virtual fifo::leave_result leave(ticket_id t) {
    if (const auto it = std::find(queue_.begin(), queue_.end(), t); it != queue_.end()) {
      queue_.erase(it);
      return {leave_outcome::removed, std::nullopt};
    }
    if (take_handed(t)) {
      --active_;
      return {leave_outcome::handover_released, promote()};
    }
    return {leave_outcome::not_waiting, std::nullopt};
  }

 public:
  virtual ~plain_fifo() = default;

 protected:
  fifo::config cfg_;
  std::int64_t active_ = 0;
  std::deque<ticket_id> queue_;
  std::vector<ticket_id> handed_;
};

// Broken on purpose: a release hands the slot to the newest waiter.
class newest_first final : public plain_fifo {
 public:
  using plain_fifo::plain_fifo;

 private:
  ticket_id pick_next() override {
    const ticket_id t = queue_.back();
    queue_.pop_back();
    return t;
  }
};

// Broken on purpose: admits while active <= max_active.
class one_over final : public plain_fifo {
 public:
  using plain_fifo::plain_fifo;
  fifo::acquire_result acquire(ticket_id t, std::int64_t now) {
    if (active_ <= cfg_.max_active && queue_.empty()) {
      ++active_;
      return {acquire_outcome::admitted, 0};
    }
    return plain_fifo::acquire(t, now);
  }
};

// Broken on purpose: a waiter that leaves after promotion won keeps its
// lease (the seeds' race, lost), and the core says it was only removed.
class keeps_handover final : public plain_fifo {
 public:
  using plain_fifo::plain_fifo;

 private:
  fifo::leave_result leave(ticket_id t) override {
    if (take_handed(t)) return {leave_outcome::removed, std::nullopt};
    return plain_fifo::leave(t);
  }
};

// Broken on purpose: claim answers true for any ticket.
class claims_anything final : public plain_fifo {
 public:
  using plain_fifo::plain_fifo;
  bool claim(ticket_id t, std::int64_t now) {
    plain_fifo::claim(t, now);
    return true;
  }
};

// Broken on purpose: a release frees the slot and promotes nobody (waiters wait for their deadline).
class never_promotes final : public plain_fifo {
 public:
  using plain_fifo::plain_fifo;
  fifo::release_result release(std::int64_t) {
    if (active_ == 0) return {false, std::nullopt};
    --active_;
    return {true, std::nullopt};
  }
};

// Broken on purpose: queues a request when one slot is still free.
class queues_early final : public plain_fifo {
 public:
  using plain_fifo::plain_fifo;
  fifo::acquire_result acquire(ticket_id t, std::int64_t now) {
    if (active_ + 1 >= cfg_.max_active && queue_.empty() && active_ < cfg_.max_active &&
        static_cast<std::int64_t>(queue_.size()) < cfg_.max_waiting) {
      queue_.push_back(t);
      return {acquire_outcome::queued, now + cfg_.wait_deadline_ns};
    }
    return plain_fifo::acquire(t, now);
  }
};

static_assert(fifo::gate_core<plain_fifo> && fifo::gate_core<newest_first> && fifo::gate_core<one_over>);

const world::own_gate fifo_through_iface = world::own_gate_of<fifo::fifo_gate>("fifo_gate_erased");
const world::own_gate plain = world::own_gate_of<plain_fifo>("plain_fifo");

struct loaded_file {
  std::string path, text;
  nlohmann::ordered_json doc;
  scenario::scenario sc;
};

loaded_file load(const std::string& path) {
  loaded_file l;
  l.path = path;
  l.text = test::slurp(path);
  l.sc = scenario::load_scenario_text(l.text, l.doc, {scenario::directory_of(path), scenario::plain_file_reader()});
  return l;
}

// The report of `l` with `seed`, run with `og` (null: admitsim's core), as the CLI renders it.
nlohmann::ordered_json report_of(const loaded_file& l, std::uint64_t seed, const world::own_gate* og) {
  const std::vector<world::run_record> runs = world::run_all(l.sc, seed, {}, nullptr, og);
  reports::report_input in;
  in.sc = &l.sc;
  in.source = &l.doc;
  in.file = l.path;
  in.sha256 = reports::sha256_hex(l.text);
  for (const auto& r : runs) in.runs.push_back(&r);
  return reports::build_report(in);
}

// The catalogue's FIFO scenarios that an own core can run, but the benchmark.
std::vector<loaded_file> fifo_catalogue() {
  std::vector<std::string> paths;
  for (const auto& e : std::filesystem::directory_iterator("scenarios"))
    if (e.path().extension() == ".json" && e.path().filename().string().rfind("bench_", 0) != 0 &&
        e.path().filename() != "schema.json")
      paths.push_back(e.path().string());
  std::sort(paths.begin(), paths.end());
  std::vector<loaded_file> out;
  for (const auto& p : paths) {
    loaded_file l = load(p);
    if (world::own_gate_refusal(l.sc).empty()) out.push_back(std::move(l));
  }
  return out;
}

// "" when the own core's report is admitsim's but for `gate_core`; else what differs first.
std::string difference(const loaded_file& l, std::uint64_t seed, const world::own_gate& og) {
  const nlohmann::ordered_json ours = test::without_diagnostics(report_of(l, seed, nullptr));
  nlohmann::ordered_json theirs = test::without_diagnostics(report_of(l, seed, &og));
  if (!theirs.contains("gate_core") || theirs["gate_core"]["name"] != og.name) return "no gate_core key naming " + og.name;
  theirs.erase("gate_core");
  if (ours == theirs) return "";
  const nlohmann::json patch = nlohmann::json::diff(nlohmann::json(ours), nlohmann::json(theirs));
  return l.path + " seed " + std::to_string(seed) + ": " + patch.dump().substr(0, 400);
}

const world::run_record only_run(const std::string& text, const world::own_gate& og) {
  nlohmann::ordered_json doc;
  const scenario::scenario sc = scenario::load_scenario_text(text, doc);
  std::vector<world::run_record> runs = world::run_all(sc, sc.seed, {}, nullptr, &og);
  REQUIRE(runs.size() == 1);
  return runs.front();
}

const check::invariant_result& invariant(const world::run_record& r, const std::string& name) {
  for (const auto& i : r.invariants)
    if (i.name == name) return i;
  FAIL("no invariant " << name);
  throw std::logic_error("unreachable");
}

bool has_cause(const check::invariant_result& i, const std::string& kind) {
  for (const auto& c : i.causes)
    if (c.kind == kind) return true;
  return false;
}

std::string first_detail(const check::invariant_result& i) { return i.first ? i.first->detail : std::string(); }

// Two requests on a gate of 1 with a queue of 1: the second waits; the first
// ends at 50 ms, promoting the second; a third request queues behind it.
const char* const two_on_one = R"({
  "name": "own_gate_two_on_one", "seed": 1,
  "gates": [{"name": "gate", "kind": "fifo", "max_active": 1, "max_waiting": 2, "wait_deadline": "1s"}],
  "service": {"service_time": "50ms", "portal_cap": 1},
  "workload": {"requests": [
    {"id": "a", "at": "0ms"},
    {"id": "b", "at": "10ms"},
    {"id": "c", "at": "20ms"}]}
})";

// b is promoted at 50 ms and its client gives up at 50 ms, before it resumes: promotion wins the race.
const char* const cancel_race = R"({
  "name": "own_gate_cancel_race", "seed": 1,
  "gates": [{"name": "gate", "kind": "fifo", "max_active": 1, "max_waiting": 1, "wait_deadline": "1s"}],
  "service": {"service_time": "50ms", "portal_cap": 1},
  "workload": {"requests": [
    {"id": "a", "at": "0ms"},
    {"id": "b", "at": "10ms", "cancel_at": "50ms"}]}
})";

}  // namespace

TEST_CASE("an own core that behaves as fifo_gate gets admitsim's report", "[own_gate]") {
  const std::vector<loaded_file> cat = fifo_catalogue();
  REQUIRE(cat.size() >= 8);  // lab_fifo, the fifo_* scenarios, explore_handover_race, march1_surge_fifo, ...
  for (const loaded_file& l : cat) {
    INFO(l.path);
    CHECK(difference(l, l.sc.seed, fifo_through_iface).empty());
    CHECK(difference(l, l.sc.seed, plain).empty());
  }
}

TEST_CASE("the differential holds over drawn seeds, and fails for a broken core", "[own_gate][property]") {
  const std::vector<loaded_file> cat = fifo_catalogue();
  // Property: for any catalogue FIFO scenario and seed, `og`'s report is admitsim's.
  const auto same_reports = [&](const world::own_gate& og) {
    return [&cat, &og] {
      const auto& l = cat[*rc::gen::inRange<std::size_t>(0, cat.size())];
      const auto seed = *rc::gen::inRange<std::uint64_t>(0, 1'000'000);
      const std::string diff = difference(l, seed, og);
      RC_ASSERT(diff == "");
    };
  };
  const auto params = test::property_params(20261203, 40, 100);
  const rc::detail::TestResult good = test::check_property("plain_fifo's reports are admitsim's", same_reports(plain), params);
  INFO(test::describe(good));
  REQUIRE(good.is<rc::detail::SuccessResult>());
  // The same property must be able to fail: a core that promotes the newest waiter.
  const world::own_gate broken = world::own_gate_of<newest_first>("newest_first");
  const rc::detail::TestResult bad = test::check_property("newest_first's reports are admitsim's", same_reports(broken),
                                                          test::property_params(20261203, 40, 100, test::budget::fixed),
                                                          true);
  REQUIRE(bad.is<rc::detail::FailureResult>());
}

TEST_CASE("broken own cores are caught, naming the core", "[own_gate]") {
  SECTION("newest first breaks fifo_order") {
    const world::run_record r = only_run(two_on_one, world::own_gate_of<newest_first>("newest_first"));
    const auto& i = invariant(r, "fifo_order");
    CHECK_FALSE(i.holds);
    CHECK(has_cause(i, "own_core"));
    CHECK(first_detail(i).find("promoted ticket 3 while ticket 2 had waited longer") != std::string::npos);
    CHECK(std::string(r.verdict()) == "violation");
    CHECK(r.gate_core == "newest_first");
  }
  SECTION("one over the cap breaks gate_inflight_le_cap and the portal's cap") {
    const world::run_record r = only_run(two_on_one, world::own_gate_of<one_over>("one_over"));
    CHECK_FALSE(invariant(r, "gate_inflight_le_cap").holds);
    CHECK(has_cause(invariant(r, "gate_inflight_le_cap"), "own_core"));
    CHECK_FALSE(invariant(r, "portal_inflight_le_cap").holds);
  }
  SECTION("a slot freed while tickets wait, none promoted, breaks fifo_order") {
    const world::run_record r = only_run(two_on_one, world::own_gate_of<never_promotes>("never_promotes"));
    const auto& i = invariant(r, "fifo_order");
    CHECK_FALSE(i.holds);
    CHECK(has_cause(i, "own_core"));
    CHECK(first_detail(i).find("never_promotes broke the FIFO rules: release() freed a slot while 2 tickets waited "
                               "(ticket 2 the oldest), and promoted none") != std::string::npos);
  }
  SECTION("a request queued while a slot is free breaks fifo_order") {
    const world::run_record r = only_run(two_on_one, world::own_gate_of<queues_early>("queues_early"));
    const auto& i = invariant(r, "fifo_order");
    CHECK_FALSE(i.holds);
    CHECK(first_detail(i).find("acquire(ticket 1) queued it while nobody waited and 0 of max_active 1 leases were out") !=
          std::string::npos);
  }
  SECTION("a handed-over lease kept on a cancel is a breach and a leak") {
    const world::run_record fine = only_run(cancel_race, plain);
    CHECK(std::string(fine.verdict()) == "pass");
    const world::run_record r = only_run(cancel_race, world::own_gate_of<keeps_handover>("keeps_handover"));
    const auto& i = invariant(r, "lease_released_once");
    CHECK_FALSE(i.holds);
    CHECK(has_cause(i, "own_core"));
    CHECK(first_detail(i).find("keeps_handover broke its contract") != std::string::npos);
  }
  SECTION("claim answering true for a ticket never promoted is a breach") {
    // The adapter claims only promoted tickets, so claims_anything answers wrongly only for a
    // waiter that left between its promotion and its claim: the cancel race again.
    const world::run_record r = only_run(cancel_race, world::own_gate_of<claims_anything>("claims_anything"));
    const auto& i = invariant(r, "lease_released_once");
    CHECK_FALSE(i.holds);
    CHECK(first_detail(i).find("answered true, but it was not handed over") != std::string::npos);
  }
}

TEST_CASE("explore searches seeds with an own core, on several threads", "[own_gate][explore]") {
  // explore_handover_race with tie orders drawn per seed: in some orders promotion beats the cancel.
  const loaded_file l = load("scenarios/explore_handover_race.json");
  explore::explore_options opts;
  opts.seeds.count = 60;
  opts.jobs = 2;
  opts.mode.perturb_ties = true;
  const auto search = [&](const world::own_gate& og) {
    opts.mode.own = &og;
    return explore::run_explore(l.sc, opts);
  };
  const explore::explore_summary fine = search(plain);
  CHECK(fine.ran == 60);
  CHECK(fine.counterexamples == 0);
  CHECK(fine.errors == 0);
  const explore::explore_summary broken = search(world::own_gate_of<keeps_handover>("keeps_handover"));
  CHECK(broken.counterexamples > 0);
  CHECK(broken.errors == 0);
  // The same search with admitsim's core finds what plain_fifo's does: nothing.
  opts.mode.own = nullptr;
  CHECK(explore::run_explore(l.sc, opts).counterexamples == 0);
}

TEST_CASE("what an own core cannot run is refused", "[own_gate]") {
  const loaded_file lease = load("scenarios/redis_restart.json");
  CHECK_THROWS_WITH(world::run_all(lease.sc, 1, {}, nullptr, &plain),
                    Catch::Contains("/gates/0/kind: expected \"fifo\""));
  nlohmann::ordered_json doc;
  const scenario::scenario mut = scenario::load_scenario_text(R"({
    "name": "m", "gates": [{"name": "g", "kind": "fifo", "max_active": 1, "max_waiting": 1, "mutation": "admit_off_by_one"}],
    "workload": {"requests": [{"id": "a", "at": "0ms"}]}})", doc);
  CHECK_THROWS_WITH(world::run_all(mut, 1, {}, nullptr, &plain),
                    Catch::Contains("/gates/0/mutation: expected \"none\""));
  world::own_gate bad_name = plain;
  bad_name.name = "has space";
  CHECK_THROWS_WITH(world::run_all(mut, 1, {}, nullptr, &bad_name), Catch::Contains("own_gate.name"));
  world::own_gate no_factory{"x", {}};
  CHECK_THROWS_WITH(world::run_all(mut, 1, {}, nullptr, &no_factory), Catch::Contains("own_gate.make"));
}
