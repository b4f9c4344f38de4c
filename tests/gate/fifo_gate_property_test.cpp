// Stateful property tests of the FIFO gate core: random command sequences run
// against the core and a plain std::deque reference model side by side.
//
// The same property runs against every mutation. For the real gate it must
// hold; for each deliberately broken variant RapidCheck must find a
// counterexample, which proves the property can still fail.
#include <catch2/catch.hpp>
#include <rapidcheck.h>
#include <rapidcheck/state.h>

#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "gate/fifo/fifo_gate.hpp"
#include "tests/gate/fifo_reference_model.hpp"
#include "tests/common/rapidcheck_support.hpp"
#include "tests/gate/fifo_test_support.hpp"

using namespace admit::fifo;
using admit::fifo::test::reference_model;

namespace {

// Each check names the property it guards, so a counterexample says which one
// broke (the mutation test below relies on these names).
constexpr const char* prop_active_bound = "active never above max_active";
constexpr const char* prop_waiting_bound = "waiting never above max_waiting";
constexpr const char* prop_fifo = "promotion in FIFO order";
constexpr const char* prop_released_once = "every lease released exactly once";
constexpr const char* prop_granted_once = "no lease granted twice";
constexpr const char* prop_idle = "idle after draining";
constexpr const char* prop_model = "gate agrees with the model";
constexpr const char* prop_log = "event log counts without gaps";

#define FIFO_PROPERTY(cond, property)                              \
  do {                                                             \
    if (!(cond)) RC_FAIL(std::string(property) + " [" #cond "]");  \
  } while (false)

constexpr std::int64_t wait_deadline_ns = 100;

// The system under test: the core, a shadow of the model that follows the
// same commands (so the final drain knows who holds what), and a per-ticket
// ledger of grants and releases read back from the core's own event log.
struct harness {
  harness(const config& cfg, const reference_model& initial) : gate(cfg), shadow(initial) {}

  fifo_gate gate;
  reference_model shadow;
  std::map<ticket_id, int> grants;
  std::map<ticket_id, int> releases;
  std::uint64_t seen_order = 0;
  std::set<std::string> probes;  // rare paths this sequence reached

  void sync(const reference_model& s0) const { FIFO_PROPERTY(shadow == s0, "harness follows the model"); }

  void acquire() {
    const ticket_id t = shadow.next_ticket++;
    const acquire_outcome want = shadow.acquire(t);
    const acquire_result got = gate.acquire(t, shadow.now_ns);
    observe(no_ticket);
    FIFO_PROPERTY(got.outcome == want, prop_model);
    if (want == acquire_outcome::queued) {
      FIFO_PROPERTY(got.deadline_ns == shadow.deadline_ns.at(t), prop_model);
    }
    compare_state();
  }

  void release(std::size_t holder_index) {
    const ticket_id t = shadow.holders.at(holder_index);
    const std::optional<ticket_id> want = shadow.release(holder_index);
    const release_result got = gate.release(shadow.now_ns);
    observe(t);
    FIFO_PROPERTY(got.ok, prop_released_once);
    FIFO_PROPERTY(got.promoted == want, prop_fifo);
    compare_state();
  }

  void release_unbalanced() {
    shadow.release_unbalanced();
    const release_result got = gate.release(shadow.now_ns);
    observe(no_ticket);
    FIFO_PROPERTY(!got.ok, prop_model);
    probes.insert("unbalanced release");
    compare_state();
  }

  void claim(ticket_id t) {
    const bool want = shadow.claim(t);
    const bool got = gate.claim(t, shadow.now_ns);
    observe(no_ticket);
    FIFO_PROPERTY(got == want, prop_model);
    compare_state();
  }

  void leave(ticket_id t, bool timeout) {
    if (timeout) shadow.now_ns = shadow.timer_fires_at(t);
    const leave_result want = shadow.leave(t, timeout);
    const leave_result got = timeout ? gate.expire(t, shadow.now_ns) : gate.cancel(t, shadow.now_ns);
    observe(no_ticket);
    FIFO_PROPERTY(got.outcome == want.outcome, prop_model);
    FIFO_PROPERTY(got.promoted == want.promoted, prop_fifo);
    if (want.outcome == leave_outcome::handover_released) {
      // The handed-over lease ended with the ticket's departure: exactly once.
      FIFO_PROPERTY(grants[t] == 1, prop_released_once);
      FIFO_PROPERTY(releases[t] == 1, prop_released_once);
      probes.insert(timeout ? "promotion beat the deadline" : "promotion beat the cancel");
    }
    if (want.outcome == leave_outcome::not_waiting) probes.insert("leave not_waiting");
    compare_state();
  }

  void advance(std::int64_t dt_ns) {
    const std::vector<ticket_id> want = shadow.advance_to(shadow.now_ns + dt_ns);
    std::vector<ticket_id> got;
    gate.expire_due(shadow.now_ns, [&](ticket_id t) { got.push_back(t); });
    observe(no_ticket);
    FIFO_PROPERTY(got == want, prop_model);
    if (!got.empty()) probes.insert("expire_due expired");
    compare_state();
  }

  // Releases everything, claiming handovers as they come, then the gate must
  // be idle and every lease it ever granted released exactly once.
  void drain() {
    while (!shadow.handed.empty() || !shadow.holders.empty()) {
      if (!shadow.handed.empty()) {
        claim(shadow.handed.front());
      } else {
        release(0);
      }
    }
    FIFO_PROPERTY(shadow.queue.empty(), "the model never waits while idle");
    FIFO_PROPERTY(gate.active() == 0, prop_idle);
    FIFO_PROPERTY(gate.waiting() == 0, prop_idle);
    FIFO_PROPERTY(gate.handed_over() == 0, prop_idle);
    FIFO_PROPERTY(!gate.next_deadline_ns().has_value(), prop_idle);
    for (const auto& [t, n] : grants) {
      FIFO_PROPERTY(n == 1, prop_granted_once);
      FIFO_PROPERTY(releases[t] == 1, prop_released_once);
    }
  }

 private:
  // Bounds first, then the ledger: every event logged since the last command,
  // attributed to a ticket. A plain release names no ticket in the log, so
  // the caller says whose lease it ended.
  void observe(ticket_id releaser) {
    const config& cfg = gate.cfg();
    FIFO_PROPERTY(gate.active() <= cfg.max_active, prop_active_bound);
    FIFO_PROPERTY(gate.waiting() <= cfg.max_waiting, prop_waiting_bound);
    FIFO_PROPERTY(gate.active() >= 0, prop_released_once);
    const snapshot s = gate.snap();
    for (const event& e : s.events) {
      if (e.order <= seen_order) continue;
      FIFO_PROPERTY(e.order == seen_order + 1, prop_log);
      seen_order = e.order;
      FIFO_PROPERTY(e.active <= cfg.max_active, prop_active_bound);
      FIFO_PROPERTY(e.waiting <= cfg.max_waiting, prop_waiting_bound);
      FIFO_PROPERTY(e.at_ns == gate.now_ns(), prop_log);
      probes.insert(std::string(to_string(e.st)));
      if (e.st == status::admitted || e.st == status::promoted) {
        FIFO_PROPERTY(grants[e.ticket] == 0, prop_granted_once);
        ++grants[e.ticket];
      } else if (e.st == status::released) {
        const ticket_id t = e.ticket == no_ticket ? releaser : e.ticket;
        FIFO_PROPERTY(releases[t] < grants[t], prop_released_once);
        ++releases[t];
      }
    }
    FIFO_PROPERTY(seen_order == gate.last_order(), prop_log);
  }

  void compare_state() const {
    const counters& got = gate.totals();
    const counters& want = shadow.totals;
    // Every release the driver asked for happened once: no more, no fewer.
    FIFO_PROPERTY(got.released + got.unbalanced_release == want.released + want.unbalanced_release,
                  prop_released_once);
    FIFO_PROPERTY(gate.active() == shadow.active(), prop_model);
    FIFO_PROPERTY(gate.waiting() == shadow.waiting(), prop_model);
    FIFO_PROPERTY(gate.handed_over() == static_cast<std::int64_t>(shadow.handed.size()), prop_model);
    FIFO_PROPERTY(got == want, prop_model);
    FIFO_PROPERTY(gate.next_deadline_ns() == shadow.next_deadline(), prop_model);
  }
};

using command = rc::state::Command<reference_model, harness>;

// Picks a ticket to leave: half the time one that is waiting or handed over
// (the interesting cases), otherwise any id issued so far.
ticket_id pick_leaver(const reference_model& m) {
  RC_PRE(m.next_ticket > 1);
  std::vector<ticket_id> live(m.queue.begin(), m.queue.end());
  live.insert(live.end(), m.handed.begin(), m.handed.end());
  if (!live.empty() && *rc::gen::arbitrary<bool>()) {
    return live[*rc::gen::inRange<std::size_t>(0, live.size())];
  }
  return *rc::gen::inRange<ticket_id>(1, m.next_ticket);
}

struct acquire_cmd : command {
  void apply(reference_model& m) const override { m.acquire(m.next_ticket++); }
  void run(const reference_model& s0, harness& h) const override {
    h.sync(s0);
    h.acquire();
  }
  void show(std::ostream& os) const override { os << "acquire"; }
};

struct release_cmd : command {
  std::size_t index;
  explicit release_cmd(const reference_model& m)
      : index(m.holders.empty() ? 0 : *rc::gen::inRange<std::size_t>(0, m.holders.size())) {}
  void checkPreconditions(const reference_model& m) const override { RC_PRE(index < m.holders.size()); }
  void apply(reference_model& m) const override { m.release(index); }
  void run(const reference_model& s0, harness& h) const override {
    h.sync(s0);
    h.release(index);
  }
  void show(std::ostream& os) const override { os << "release holder #" << index; }
};

struct unbalanced_release_cmd : command {
  void checkPreconditions(const reference_model& m) const override { RC_PRE(m.active() == 0); }
  void apply(reference_model& m) const override { m.release_unbalanced(); }
  void run(const reference_model& s0, harness& h) const override {
    h.sync(s0);
    h.release_unbalanced();
  }
  void show(std::ostream& os) const override { os << "release with nothing active"; }
};

struct claim_cmd : command {
  std::size_t index;
  explicit claim_cmd(const reference_model& m)
      : index(m.handed.empty() ? 0 : *rc::gen::inRange<std::size_t>(0, m.handed.size())) {}
  void checkPreconditions(const reference_model& m) const override { RC_PRE(index < m.handed.size()); }
  void apply(reference_model& m) const override { m.claim(m.handed[index]); }
  void run(const reference_model& s0, harness& h) const override {
    h.sync(s0);
    h.claim(s0.handed[index]);
  }
  void show(std::ostream& os) const override { os << "claim handed-over #" << index; }
};

struct expire_cmd : command {
  ticket_id ticket;
  explicit expire_cmd(const reference_model& m) : ticket(pick_leaver(m)) {}
  void checkPreconditions(const reference_model& m) const override { RC_PRE(ticket < m.next_ticket); }
  void apply(reference_model& m) const override {
    m.now_ns = m.timer_fires_at(ticket);
    m.leave(ticket, true);
  }
  void run(const reference_model& s0, harness& h) const override {
    h.sync(s0);
    h.leave(ticket, true);
  }
  void show(std::ostream& os) const override { os << "deadline timer of ticket " << ticket << " fires"; }
};

struct cancel_cmd : command {
  ticket_id ticket;
  explicit cancel_cmd(const reference_model& m) : ticket(pick_leaver(m)) {}
  void checkPreconditions(const reference_model& m) const override { RC_PRE(ticket < m.next_ticket); }
  void apply(reference_model& m) const override { m.leave(ticket, false); }
  void run(const reference_model& s0, harness& h) const override {
    h.sync(s0);
    h.leave(ticket, false);
  }
  void show(std::ostream& os) const override { os << "cancel ticket " << ticket; }
};

struct advance_cmd : command {
  std::int64_t dt_ns = *rc::gen::inRange<std::int64_t>(0, 2 * wait_deadline_ns + 1);
  void apply(reference_model& m) const override { m.advance_to(m.now_ns + dt_ns); }
  void run(const reference_model& s0, harness& h) const override {
    h.sync(s0);
    h.advance(dt_ns);
  }
  void show(std::ostream& os) const override { os << "advance " << dt_ns << " ns, expire due"; }
};

// The whole property, for one variant of the gate. Small caps make the
// crowded paths (full queue, races with promotion) common.
auto gate_property(mutation mut) {
  return [mut] {
    config cfg;
    cfg.max_active = *rc::gen::inRange<std::int64_t>(1, 4);
    cfg.max_waiting = *rc::gen::inRange<std::int64_t>(0, 4);
    cfg.wait_deadline_ns = wait_deadline_ns;
    cfg.event_log_capacity = *rc::gen::inRange<std::int64_t>(8, 17);
    cfg.mut = mut;
    reference_model initial;
    initial.max_active = cfg.max_active;
    initial.max_waiting = cfg.max_waiting;
    initial.wait_deadline_ns = cfg.wait_deadline_ns;

    harness h(cfg, initial);
    // Acquire and release are listed twice to weigh them up.
    rc::state::check(initial, h,
                     rc::state::gen::execOneOfWithArgs<acquire_cmd, acquire_cmd, release_cmd, release_cmd,
                                                       unbalanced_release_cmd, claim_cmd, claim_cmd,
                                                       expire_cmd, cancel_cmd, advance_cmd>());
    h.drain();
    for (const std::string& probe : h.probes) RC_TAG(probe);
  };
}

rc::detail::TestParams params_for(int max_success, bool scalable = false) {
  return admit::test::property_params(0x5EED'F1F0'0002ull, max_success, 100,  // up to 100 commands per sequence
                               scalable ? admit::test::budget::scalable : admit::test::budget::fixed);
}

rc::detail::TestResult run_property(mutation mut, const rc::detail::TestParams& params) {
  return admit::test::check_property("fifo_gate/" + std::string(to_string(mut)), gate_property(mut), params,
                              mut != mutation::none);
}

using admit::test::describe;

}  // namespace

TEST_CASE("the real gate keeps every property", "[fifo][property]") {
  // Goal: random command sequences never break a property of the real gate. Method: rc::state against the model, then drain.
  const rc::detail::TestParams params = params_for(1000, true);
  const rc::detail::TestResult result = run_property(mutation::none, params);
  INFO("seed " << params.seed << "; replay with RC_PARAMS=\"seed=" << params.seed << "\"\n"
               << describe(result));
  REQUIRE(result.is<rc::detail::SuccessResult>());

  // Coverage probes: a generator change that stops reaching a rare path
  // must not pass silently.
  rc::detail::SuccessResult success;
  result.match(success);
  std::map<std::string, int> cases_per_probe;
  for (const auto& [tags, count] : success.distribution) {
    // RapidCheck shows a string tag quoted; strip the quotes.
    for (const std::string& tag : tags) cases_per_probe[tag.substr(1, tag.size() - 2)] += count;
  }
  for (const char* probe : {"admitted", "queued", "promoted", "released", "queue_full", "wait_timeout",
                            "wait_cancelled", "promotion beat the deadline", "promotion beat the cancel",
                            "expire_due expired", "leave not_waiting", "unbalanced release"}) {
    INFO("probe: " << probe);
    CHECK(cases_per_probe[probe] > 0);
    std::cout << "probe " << probe << ": reached in " << cases_per_probe[probe] << " of "
              << success.numSuccess << " cases\n";
  }
}

TEST_CASE("every broken variant is caught by the property", "[fifo][property][mutation]") {
  // Goal: the property can fail, and fails for the intended reason. Method: run it against each mutation, expect a counterexample.
  struct expectation {
    mutation mut;
    const char* property;
  };
  const expectation expectations[] = {
      {mutation::leak_handover_on_cancel, prop_released_once},
      {mutation::admit_off_by_one, prop_active_bound},
      {mutation::newcomers_jump_queue, prop_fifo},
      {mutation::double_release_on_timeout, prop_released_once},
  };
  const rc::detail::TestParams params = params_for(300);
  for (const expectation& e : expectations) {
    const rc::detail::TestResult result = run_property(e.mut, params);
    const std::string text = describe(result);
    INFO("mutation " << to_string(e.mut) << ", seed " << params.seed << "\n" << text);
    rc::detail::FailureResult failure;
    REQUIRE(result.match(failure));
    CHECK_THAT(failure.description, Catch::Contains(e.property));
    std::cout << "mutation " << to_string(e.mut) << ": counterexample after " << failure.numSuccess
              << " passing cases, violated: " << e.property << "\n";
    for (const auto& [what, value] : failure.counterExample) std::cout << "  " << what << ": " << value << "\n";
  }
}
