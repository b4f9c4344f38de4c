// Unit tests of the sans-IO FIFO gate core, one transition at a time.
#include <catch2/catch.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "gate/admit_assert.hpp"
#include "gate/fifo/fifo_gate.hpp"
#include "tests/gate/fifo_test_support.hpp"

using namespace admit::fifo;
using admit::fifo::test::lab_view;

namespace {

constexpr std::int64_t ms = 1'000'000;

config lab_config() { return config{}; }  // 1 active, 1 waiting, 150 ms, 128 events

config caps(std::int64_t max_active, std::int64_t max_waiting) {
  config c;
  c.max_active = max_active;
  c.max_waiting = max_waiting;
  return c;
}

std::optional<ticket_id> id(ticket_id t) { return t; }

}  // namespace

TEST_CASE("lab defaults", "[fifo]") {
  // Goal: the default config is the lab's fixture. Method: compare each field.
  const config c;
  CHECK(c.max_active == 1);
  CHECK(c.max_waiting == 1);
  CHECK(c.wait_deadline_ns == 150 * ms);
  CHECK(c.event_log_capacity == 128);
  CHECK(c.mut == mutation::none);
  CHECK_NOTHROW(validate(c));
}

TEST_CASE("status strings are the lab's", "[fifo]") {
  // Goal: reports can print statuses exactly as the lab does. Method: map every enumerator.
  CHECK(to_string(status::admitted) == "admitted");
  CHECK(to_string(status::queued) == "queued");
  CHECK(to_string(status::promoted) == "promoted");
  CHECK(to_string(status::released) == "released");
  CHECK(to_string(status::queue_full) == "queue_full");
  CHECK(to_string(status::wait_timeout) == "wait_timeout");
  CHECK(to_string(status::wait_cancelled) == "wait_cancelled");
  CHECK(to_string(mutation::double_release_on_timeout) == "double_release_on_timeout");
  CHECK(to_string(acquire_outcome::queue_full) == "queue_full");
  CHECK(to_string(leave_outcome::handover_released) == "handover_released");
}

TEST_CASE("a free slot admits at once", "[fifo]") {
  // Goal: acquire with a free slot and nobody waiting admits. Method: one acquire, inspect all state.
  fifo_gate gate(lab_config());
  const acquire_result r = gate.acquire(7, 10);
  CHECK(r.outcome == acquire_outcome::admitted);
  CHECK(r.deadline_ns == 0);
  CHECK(gate.active() == 1);
  CHECK(gate.waiting() == 0);
  CHECK_FALSE(gate.is_waiting(7));
  CHECK_FALSE(gate.next_deadline_ns().has_value());
  const snapshot s = gate.snap();
  REQUIRE(s.events.size() == 1);
  CHECK(s.events[0] == event{1, status::admitted, 1, 0, 10, 7});
  CHECK(gate.totals().admitted == 1);
  CHECK(gate.last_order() == 1);
}

TEST_CASE("a busy gate queues with a deadline", "[fifo]") {
  // Goal: acquire with no free slot queues and returns now + wait deadline. Method: fill, then acquire.
  fifo_gate gate(lab_config());
  gate.acquire(1, 0);
  const acquire_result r = gate.acquire(2, 5 * ms);
  CHECK(r.outcome == acquire_outcome::queued);
  CHECK(r.deadline_ns == 155 * ms);
  CHECK(gate.active() == 1);
  CHECK(gate.waiting() == 1);
  CHECK(gate.is_waiting(2));
  CHECK(gate.next_deadline_ns() == std::optional<std::int64_t>(155 * ms));
  CHECK(gate.snap().events.back() == event{2, status::queued, 1, 1, 5 * ms, 2});
  CHECK(gate.totals().queued == 1);
}

TEST_CASE("a full queue refuses with queue_full", "[fifo]") {
  // Goal: acquire with a full queue is refused and logged without changing counts. Method: fill slot and queue.
  fifo_gate gate(lab_config());
  gate.acquire(1, 0);
  gate.acquire(2, 0);
  const acquire_result r = gate.acquire(3, 1);
  CHECK(r.outcome == acquire_outcome::queue_full);
  CHECK(gate.active() == 1);
  CHECK(gate.waiting() == 1);
  CHECK_FALSE(gate.is_waiting(3));
  CHECK(gate.snap().events.back() == event{3, status::queue_full, 1, 1, 1, 3});
  CHECK(gate.totals().queue_full == 1);
  // The refused ticket is unknown to the gate afterwards.
  CHECK(gate.cancel(3, 2).outcome == leave_outcome::not_waiting);
}

TEST_CASE("max_waiting 0 refuses as soon as the slots are taken", "[fifo]") {
  // Goal: a zero-length queue never queues. Method: max_waiting 0, acquire past max_active.
  fifo_gate gate(caps(2, 0));
  CHECK(gate.acquire(1, 0).outcome == acquire_outcome::admitted);
  CHECK(gate.acquire(2, 0).outcome == acquire_outcome::admitted);
  CHECK(gate.acquire(3, 0).outcome == acquire_outcome::queue_full);
  CHECK(lab_view(gate) == std::vector<std::string>{"1 admitted 1/0", "2 admitted 2/0", "3 queue_full 2/0"});
  CHECK(gate.release(1).ok);
  CHECK(gate.acquire(4, 1).outcome == acquire_outcome::admitted);
}

TEST_CASE("a waiter whose deadline passes leaves with wait_timeout", "[fifo]") {
  // Goal: expire of a waiting ticket removes it. Method: queue, expire at the deadline, inspect.
  fifo_gate gate(lab_config());
  gate.acquire(1, 0);
  const std::int64_t deadline_ns = gate.acquire(2, 0).deadline_ns;
  const leave_result r = gate.expire(2, deadline_ns);
  CHECK(r.outcome == leave_outcome::removed);
  CHECK_FALSE(r.promoted.has_value());
  CHECK(gate.waiting() == 0);
  CHECK(gate.active() == 1);
  CHECK_FALSE(gate.is_waiting(2));
  CHECK(gate.snap().events.back() == event{3, status::wait_timeout, 1, 0, deadline_ns, 2});
  CHECK(gate.totals().wait_timeout == 1);
}

TEST_CASE("expiring a waiter before its deadline is a driver bug", "[fifo]") {
  // Goal: the core rejects an early expiry. Method: expire one nanosecond early, expect the assertion.
  fifo_gate gate(lab_config());
  gate.acquire(1, 0);
  const std::int64_t deadline_ns = gate.acquire(2, 0).deadline_ns;
  CHECK_THROWS_AS(gate.expire(2, deadline_ns - 1), admit::assertion_failure);
  CHECK(gate.is_waiting(2));
}

TEST_CASE("a waiter whose caller gives up leaves with wait_cancelled", "[fifo]") {
  // Goal: cancel of a waiting ticket removes it at any time. Method: queue two, cancel the first.
  fifo_gate gate(caps(1, 2));
  gate.acquire(1, 0);
  gate.acquire(2, 1);
  gate.acquire(3, 2);
  const leave_result r = gate.cancel(2, 3);
  CHECK(r.outcome == leave_outcome::removed);
  CHECK(gate.waiting() == 1);
  CHECK(gate.snap().events.back() == event{4, status::wait_cancelled, 1, 1, 3, 2});
  CHECK(gate.totals().wait_cancelled == 1);
  // The remaining waiter keeps its place and its own deadline.
  CHECK(gate.next_deadline_ns() == std::optional<std::int64_t>(2 + 150 * ms));
}

TEST_CASE("release promotes waiters oldest first", "[fifo]") {
  // Goal: promotion is FIFO, also around a waiter that left. Method: queue four, cancel one, release repeatedly.
  fifo_gate gate(caps(1, 4));
  gate.acquire(10, 0);
  for (ticket_id t = 11; t <= 14; ++t) gate.acquire(t, static_cast<std::int64_t>(t));
  gate.cancel(12, 20);
  std::vector<ticket_id> order;
  for (int i = 0; i < 3; ++i) {
    const release_result r = gate.release(30 + i);
    REQUIRE(r.ok);
    REQUIRE(r.promoted.has_value());
    order.push_back(*r.promoted);
    CHECK(gate.claim(*r.promoted, 30 + i));
  }
  CHECK(order == std::vector<ticket_id>{11, 13, 14});
  const release_result last = gate.release(40);
  CHECK(last.ok);
  CHECK_FALSE(last.promoted.has_value());
  CHECK(gate.active() == 0);
  CHECK(gate.totals().promoted == 3);
}

TEST_CASE("release logs released then promoted with the counts after each step", "[fifo]") {
  // Goal: the two events of a promoting release carry their own counts. Method: compare whole events.
  fifo_gate gate(lab_config());
  gate.acquire(1, 0);
  gate.acquire(2, 1);
  const release_result r = gate.release(2);
  CHECK(r.ok);
  CHECK(r.promoted == id(2));
  const snapshot s = gate.snap();
  REQUIRE(s.events.size() == 4);
  CHECK(s.events[2] == event{3, status::released, 0, 1, 2, no_ticket});
  CHECK(s.events[3] == event{4, status::promoted, 1, 0, 2, 2});
  CHECK(gate.is_handed_over(2));
  CHECK(gate.handed_over() == 1);
}

TEST_CASE("release with nothing active is unbalanced", "[fifo]") {
  // Goal: an unbalanced release changes nothing but is counted. Method: release on an idle gate, inspect.
  fifo_gate gate(lab_config());
  const release_result r = gate.release(5);
  CHECK_FALSE(r.ok);
  CHECK_FALSE(r.promoted.has_value());
  CHECK(gate.active() == 0);
  CHECK(gate.last_order() == 0);
  CHECK(gate.snap().events.empty());
  CHECK(gate.totals().unbalanced_release == 1);
  CHECK(gate.totals().released == 0);
  // Balanced use afterwards is unaffected.
  gate.acquire(1, 6);
  CHECK(gate.release(7).ok);
  CHECK_FALSE(gate.release(8).ok);
  CHECK(gate.totals().unbalanced_release == 2);
}

TEST_CASE("claim turns a handed-over ticket into an ordinary lease", "[fifo]") {
  // Goal: after claim, expire and cancel no longer touch the lease. Method: promote, claim, then leave.
  fifo_gate gate(lab_config());
  gate.acquire(1, 0);
  gate.acquire(2, 0);
  gate.release(1);
  CHECK(gate.claim(2, 2));
  CHECK_FALSE(gate.is_handed_over(2));
  CHECK(gate.handed_over() == 0);
  const std::uint64_t order = gate.last_order();
  CHECK(gate.expire(2, 200 * ms).outcome == leave_outcome::not_waiting);
  CHECK(gate.cancel(2, 200 * ms).outcome == leave_outcome::not_waiting);
  CHECK(gate.last_order() == order);
  CHECK(gate.active() == 1);
  // A second claim, or a claim of a ticket never handed over, changes nothing.
  CHECK_FALSE(gate.claim(2, 200 * ms));
  CHECK_FALSE(gate.claim(99, 200 * ms));
  gate.acquire(3, 200 * ms);
  CHECK_FALSE(gate.claim(3, 200 * ms));
  CHECK(gate.is_waiting(3));
}

TEST_CASE("expire after a handover releases that lease once and promotes the next waiter", "[fifo]") {
  // Goal: when promotion wins against the deadline no capacity leaks. Method: promote B, expire B, inspect log.
  fifo_gate gate(caps(1, 2));
  gate.acquire(1, 0);                                 // 1 admitted 1/0
  const std::int64_t b_deadline_ns = gate.acquire(2, 0).deadline_ns;  // 2 queued 1/1
  gate.acquire(3, 1);                                 // 3 queued 1/2
  CHECK(gate.release(b_deadline_ns - 1).promoted == id(2));  // 4 released 0/2, 5 promoted 1/1
  const leave_result r = gate.expire(2, b_deadline_ns);
  CHECK(r.outcome == leave_outcome::handover_released);
  CHECK(r.promoted == id(3));
  CHECK(lab_view(gate) == std::vector<std::string>{
                              "1 admitted 1/0", "2 queued 1/1", "3 queued 1/2", "4 released 0/2",
                              "5 promoted 1/1", "6 released 0/1", "7 promoted 1/0",
                              "8 wait_timeout 1/0"});
  CHECK(gate.totals().released == 2);
  CHECK(gate.active() == 1);
  CHECK(gate.is_handed_over(3));
  CHECK_FALSE(gate.is_handed_over(2));
  // Released exactly once: leaving again is not_waiting and logs nothing.
  CHECK(gate.expire(2, b_deadline_ns).outcome == leave_outcome::not_waiting);
  CHECK(gate.cancel(2, b_deadline_ns).outcome == leave_outcome::not_waiting);
  CHECK(gate.last_order() == 8);
}

TEST_CASE("cancel after a handover releases that lease once", "[fifo]") {
  // Goal: when promotion wins against a cancellation no capacity leaks. Method: promote B, cancel B, inspect.
  fifo_gate gate(lab_config());
  gate.acquire(1, 0);
  gate.acquire(2, 0);
  gate.release(1);
  const leave_result r = gate.cancel(2, 2);
  CHECK(r.outcome == leave_outcome::handover_released);
  CHECK_FALSE(r.promoted.has_value());
  CHECK(lab_view(gate) == std::vector<std::string>{"1 admitted 1/0", "2 queued 1/1",
                                                   "3 released 0/1", "4 promoted 1/0",
                                                   "5 released 0/0", "6 wait_cancelled 0/0"});
  const snapshot s = gate.snap();
  CHECK(s.events[4].ticket == 2);  // the handover's release names the ticket it came from
  CHECK(gate.active() == 0);
  CHECK_FALSE(gate.release(3).ok);
  CHECK(gate.cancel(2, 3).outcome == leave_outcome::not_waiting);
}

TEST_CASE("leaving is not_waiting for tickets the queue does not hold", "[fifo]") {
  // Goal: unknown, admitted, refused and departed tickets leave nothing behind. Method: try each, check log.
  fifo_gate gate(lab_config());
  gate.acquire(1, 0);  // admitted
  gate.acquire(2, 0);  // queued
  gate.acquire(3, 0);  // queue_full
  gate.cancel(2, 1);   // departed
  const std::uint64_t order = gate.last_order();
  for (const ticket_id t : {ticket_id{1}, ticket_id{2}, ticket_id{3}, ticket_id{42}}) {
    CHECK(gate.expire(t, 500 * ms).outcome == leave_outcome::not_waiting);
    CHECK(gate.cancel(t, 500 * ms).outcome == leave_outcome::not_waiting);
  }
  CHECK(gate.last_order() == order);
  CHECK(gate.active() == 1);
  CHECK(gate.waiting() == 0);
}

TEST_CASE("time must not move backwards", "[fifo]") {
  // Goal: every input asserts monotonic time. Method: advance to t, then call each input with t - 1.
  fifo_gate gate(caps(1, 2));
  gate.acquire(1, 100);
  gate.acquire(2, 100);
  CHECK_THROWS_AS(gate.acquire(3, 99), admit::assertion_failure);
  CHECK_THROWS_AS(gate.release(99), admit::assertion_failure);
  CHECK_THROWS_AS(gate.claim(2, 99), admit::assertion_failure);
  CHECK_THROWS_AS(gate.expire(2, 99), admit::assertion_failure);
  CHECK_THROWS_AS(gate.cancel(2, 99), admit::assertion_failure);
  CHECK_THROWS_AS(gate.expire_one_due(99), admit::assertion_failure);
  CHECK_THROWS_WITH(gate.acquire(3, 0), Catch::Contains("time moved backwards"));
  // Nothing changed, and equal times are fine.
  CHECK(gate.last_order() == 2);
  CHECK(gate.now_ns() == 100);
  CHECK(gate.acquire(3, 100).outcome == acquire_outcome::queued);
}

TEST_CASE("a ticket id may not be waiting twice", "[fifo]") {
  // Goal: duplicate and reserved ids are driver bugs. Method: reuse a waiting id, use no_ticket.
  fifo_gate gate(caps(1, 2));
  gate.acquire(1, 0);
  gate.acquire(2, 0);
  CHECK_THROWS_AS(gate.acquire(2, 0), admit::assertion_failure);
  CHECK_THROWS_AS(gate.acquire(no_ticket, 0), admit::assertion_failure);
  CHECK(gate.waiting() == 1);
}

TEST_CASE("config validation names the field and the allowed range", "[fifo][config]") {
  // Goal: each out-of-range field throws config_error with a precise message. Method: one bad field at a time.
  auto message_for = [](config c) -> std::string {
    try {
      validate(c);
    } catch (const config_error& e) {
      return e.field + " | " + e.what();
    }
    return "valid";
  };
  config c;
  c.max_active = 0;
  CHECK(message_for(c) == "max_active | max_active: expected an integer from 1 to 1000000, got 0");
  c.max_active = 1'000'001;
  CHECK(message_for(c) == "max_active | max_active: expected an integer from 1 to 1000000, got 1000001");
  c = config{};
  c.max_waiting = -1;
  CHECK(message_for(c) == "max_waiting | max_waiting: expected an integer from 0 to 10000000, got -1");
  c.max_waiting = 10'000'001;
  CHECK(message_for(c) == "max_waiting | max_waiting: expected an integer from 0 to 10000000, got 10000001");
  c = config{};
  c.wait_deadline_ns = 0;
  CHECK(message_for(c) == "wait_deadline_ns | wait_deadline_ns: expected an integer from 1 to 86400000000000, got 0");
  c.wait_deadline_ns = 86'400'000'000'001;
  CHECK(message_for(c) == "wait_deadline_ns | wait_deadline_ns: expected an integer from 1 to 86400000000000, got 86400000000001");
  c = config{};
  c.event_log_capacity = -1;
  CHECK(message_for(c) == "event_log_capacity | event_log_capacity: expected an integer from 0 to 1000000, got -1");
  c.event_log_capacity = 1'000'001;
  CHECK(message_for(c) == "event_log_capacity | event_log_capacity: expected an integer from 0 to 1000000, got 1000001");
  c = config{};
  c.mut = static_cast<mutation>(9);
  CHECK(message_for(c).starts_with("mut | mut: expected a known mutation"));
  CHECK(message_for(c).ends_with("got 9"));

  // The edges of each range are valid, including the zero caps.
  c = config{};
  c.max_active = 1'000'000;
  c.max_waiting = 0;
  c.wait_deadline_ns = 86'400'000'000'000;
  c.event_log_capacity = 0;
  CHECK(message_for(c) == "valid");
  c.max_waiting = 10'000'000;
  c.event_log_capacity = 1'000'000;
  c.wait_deadline_ns = 1;
  CHECK(message_for(c) == "valid");

  // The constructor validates, and config_error is an invalid_argument.
  config bad;
  bad.max_active = 0;
  CHECK_THROWS_AS(fifo_gate(bad), config_error);
  CHECK_THROWS_AS(fifo_gate(bad), std::invalid_argument);
}

TEST_CASE("the event log keeps the latest 128 entries while order keeps counting", "[fifo][log]") {
  // Goal: the lab's bounded history. Method: 300 admit/release events through the default log.
  fifo_gate gate(lab_config());
  std::int64_t now_ns = 0;
  for (ticket_id t = 1; t <= 150; ++t) {
    gate.acquire(t, ++now_ns);
    gate.release(++now_ns);
  }
  const snapshot s = gate.snap();
  REQUIRE(s.events.size() == 128);
  CHECK(gate.last_order() == 300);
  for (std::size_t i = 0; i < s.events.size(); ++i) {
    CHECK(s.events[i].order == 173 + i);
    CHECK(s.events[i].at_ns == static_cast<std::int64_t>(173 + i));
  }
  CHECK(s.events.back().st == status::released);
  CHECK(gate.totals().admitted == 150);
  CHECK(gate.totals().released == 150);
}

TEST_CASE("a small event log wraps around", "[fifo][log]") {
  // Goal: a capacity of 3 keeps the last three in order at every fill level. Method: check after each event.
  config c = caps(1, 1);
  c.event_log_capacity = 3;
  fifo_gate gate(c);
  gate.acquire(1, 0);
  CHECK(lab_view(gate) == std::vector<std::string>{"1 admitted 1/0"});
  gate.acquire(2, 0);
  gate.acquire(3, 0);
  CHECK(lab_view(gate) == std::vector<std::string>{"1 admitted 1/0", "2 queued 1/1", "3 queue_full 1/1"});
  gate.release(1);
  CHECK(lab_view(gate) == std::vector<std::string>{"3 queue_full 1/1", "4 released 0/1", "5 promoted 1/0"});
  gate.claim(2, 1);
  gate.release(2);
  CHECK(lab_view(gate) == std::vector<std::string>{"4 released 0/1", "5 promoted 1/0", "6 released 0/0"});
  for (ticket_id t = 10; t < 20; ++t) gate.acquire(t, 3);  // 1 admitted, 1 queued, 8 refused
  CHECK(lab_view(gate) == std::vector<std::string>{"14 queue_full 1/1", "15 queue_full 1/1", "16 queue_full 1/1"});
  CHECK(gate.last_order() == 16);
}

TEST_CASE("a zero-capacity event log keeps nothing but counts", "[fifo][log]") {
  // Goal: capacity 0 disables history, not ordering or totals. Method: run the lab sequence with capacity 0.
  config c = lab_config();
  c.event_log_capacity = 0;
  fifo_gate gate(c);
  gate.acquire(1, 0);
  gate.acquire(2, 0);
  gate.acquire(3, 0);
  gate.release(1);
  CHECK(gate.snap().events.empty());
  CHECK(gate.last_order() == 5);
  CHECK(gate.totals().promoted == 1);
}

TEST_CASE("thousands of leases and waiters", "[fifo][large]") {
  // Goal: large caps keep exact counts and FIFO order. Method: 5000 active, 5000 waiting, churn, drain.
  constexpr std::int64_t n = 5000;
  config c = caps(n, n);
  c.event_log_capacity = 64;
  fifo_gate gate(c);
  for (ticket_id t = 0; t < static_cast<ticket_id>(n); ++t) {
    REQUIRE(gate.acquire(t, 0).outcome == acquire_outcome::admitted);
  }
  for (ticket_id t = n; t < static_cast<ticket_id>(2 * n); ++t) {
    REQUIRE(gate.acquire(t, 1).outcome == acquire_outcome::queued);
  }
  CHECK(gate.acquire(2 * n, 2).outcome == acquire_outcome::queue_full);
  CHECK(gate.active() == n);
  CHECK(gate.waiting() == n);
  // Every odd waiter gives up; the rest are promoted in order.
  for (ticket_id t = n + 1; t < static_cast<ticket_id>(2 * n); t += 2) {
    REQUIRE(gate.cancel(t, 3).outcome == leave_outcome::removed);
  }
  CHECK(gate.waiting() == n / 2);
  ticket_id expected = n;
  for (std::int64_t i = 0; i < n; ++i) {
    const release_result r = gate.release(4);
    REQUIRE(r.ok);
    if (i < n / 2) {
      REQUIRE(r.promoted == id(expected));
      REQUIRE(gate.claim(expected, 4));
      expected += 2;
    } else {
      REQUIRE_FALSE(r.promoted.has_value());
    }
  }
  CHECK(gate.active() == n / 2);
  CHECK(gate.waiting() == 0);
  for (std::int64_t i = 0; i < n / 2; ++i) REQUIRE(gate.release(5).ok);
  CHECK(gate.active() == 0);
  CHECK(gate.snap().events.size() == 64);
  CHECK(gate.last_order() == static_cast<std::uint64_t>(n + n + 1 + n / 2 + n + n / 2 + n / 2));
}

TEST_CASE("lab sequence: admit, queue, overflow, deadline, release", "[fifo][lab]") {
  // Goal: reproduce the lab's recorded idle snapshot exactly. Method: drive the same five steps.
  fifo_gate gate(lab_config());
  CHECK(gate.acquire(1, 0).outcome == acquire_outcome::admitted);
  const acquire_result b = gate.acquire(2, 10 * ms);
  CHECK(b.outcome == acquire_outcome::queued);
  CHECK(gate.acquire(3, 20 * ms).outcome == acquire_outcome::queue_full);
  CHECK(gate.expire(2, b.deadline_ns).outcome == leave_outcome::removed);
  CHECK(gate.release(400 * ms).ok);
  CHECK(lab_view(gate) == std::vector<std::string>{"1 admitted 1/0", "2 queued 1/1",
                                                   "3 queue_full 1/1", "4 wait_timeout 1/0",
                                                   "5 released 0/0"});
  const snapshot s = gate.snap();
  CHECK(s.active == 0);
  CHECK(s.waiting == 0);
  CHECK(s.max_active == 1);
  CHECK(s.max_waiting == 1);
  CHECK(s.wait_deadline_ns == 150 * ms);
}

TEST_CASE("lab sequence: FIFO promotion", "[fifo][lab]") {
  // Goal: reproduce the lab's fifo_promotion snapshot exactly. Method: admit, queue, release, claim, release.
  config c = lab_config();
  c.wait_deadline_ns = 1'000 * ms;  // the lab's trusted fixture waits 1 s
  fifo_gate gate(c);
  gate.acquire(1, 0);
  gate.acquire(2, 1 * ms);
  const release_result first = gate.release(350 * ms);
  CHECK(first.ok);
  CHECK(first.promoted == id(2));
  CHECK(gate.claim(2, 351 * ms));
  const release_result second = gate.release(700 * ms);
  CHECK(second.ok);
  CHECK_FALSE(second.promoted.has_value());
  CHECK(lab_view(gate) == std::vector<std::string>{"1 admitted 1/0", "2 queued 1/1",
                                                   "3 released 0/1", "4 promoted 1/0",
                                                   "5 released 0/0"});
  CHECK(gate.snap().wait_deadline_ns == 1'000 * ms);
}

TEST_CASE("expire_due expires exactly the due waiters, oldest first", "[fifo][deadline]") {
  // Goal: batch expiry respects FIFO order and the deadline bound. Method: queue at distinct times, expire in two steps.
  fifo_gate gate(caps(1, 5));
  gate.acquire(100, 0);
  gate.acquire(1, 10);
  gate.acquire(2, 20);
  gate.acquire(3, 20);
  gate.acquire(4, 30);
  gate.cancel(2, 30);
  std::vector<ticket_id> expired;
  auto collect = [&](ticket_id t) { expired.push_back(t); };

  CHECK(gate.expire_due(150 * ms + 9, collect) == 0);
  CHECK(gate.expire_due(150 * ms + 20, collect) == 2);
  CHECK(expired == std::vector<ticket_id>{1, 3});
  CHECK(gate.waiting() == 1);
  CHECK(gate.next_deadline_ns() == std::optional<std::int64_t>(150 * ms + 30));
  const snapshot s = gate.snap();
  CHECK(s.events[s.events.size() - 2] == event{7, status::wait_timeout, 1, 2, 150 * ms + 20, 1});
  CHECK(s.events.back() == event{8, status::wait_timeout, 1, 1, 150 * ms + 20, 3});
  CHECK(gate.expire_due(200 * ms, collect) == 1);
  CHECK(expired == std::vector<ticket_id>{1, 3, 4});
  CHECK(gate.waiting() == 0);
  CHECK_FALSE(gate.expire_one_due(300 * ms).has_value());
}

TEST_CASE("expire_due tolerates a callback that re-enters the gate", "[fifo][deadline]") {
  // Goal: a driver may acquire from the expiry callback. Method: re-queue a fresh ticket per expiry.
  fifo_gate gate(caps(1, 2));
  gate.acquire(1, 0);
  gate.acquire(2, 0);
  gate.acquire(3, 0);
  std::vector<ticket_id> expired;
  ticket_id next = 10;
  const std::int64_t now_ns = 150 * ms;
  gate.expire_due(now_ns, [&](ticket_id t) {
    expired.push_back(t);
    REQUIRE(gate.acquire(next++, now_ns).outcome == acquire_outcome::queued);
  });
  // The re-queued tickets are due later, so only the original two expired.
  CHECK(expired == std::vector<ticket_id>{2, 3});
  CHECK(gate.waiting() == 2);
  CHECK(gate.next_deadline_ns() == std::optional<std::int64_t>(300 * ms));
}

TEST_CASE("next_deadline_ns follows the front of the queue", "[fifo][deadline]") {
  // Goal: the driver's next timer is the oldest waiter's deadline. Method: track it through queue, cancel, promote.
  fifo_gate gate(caps(1, 3));
  CHECK_FALSE(gate.next_deadline_ns().has_value());
  gate.acquire(1, 0);
  CHECK_FALSE(gate.next_deadline_ns().has_value());
  gate.acquire(2, 5);
  gate.acquire(3, 6);
  gate.acquire(4, 7);
  CHECK(gate.next_deadline_ns() == std::optional<std::int64_t>(150 * ms + 5));
  gate.cancel(3, 8);  // a middle waiter leaving changes nothing
  CHECK(gate.next_deadline_ns() == std::optional<std::int64_t>(150 * ms + 5));
  gate.release(9);  // promotes 2
  CHECK(gate.next_deadline_ns() == std::optional<std::int64_t>(150 * ms + 7));
  gate.cancel(4, 10);
  CHECK_FALSE(gate.next_deadline_ns().has_value());
}

TEST_CASE("the gate returns to idle and reuses its storage", "[fifo]") {
  // Goal: repeated fill and drain keeps state exact across reuse of queue nodes. Method: ten rounds of churn.
  fifo_gate gate(caps(2, 3));
  std::int64_t now_ns = 0;
  ticket_id next = 1;
  for (int round = 0; round < 10; ++round) {
    std::vector<ticket_id> queued;
    for (int i = 0; i < 6; ++i) {
      const ticket_id t = next++;
      const acquire_outcome o = gate.acquire(t, now_ns).outcome;
      if (o == acquire_outcome::queued) queued.push_back(t);
    }
    REQUIRE(queued.size() == 3);
    gate.cancel(queued[1], ++now_ns);
    for (const ticket_id t : {queued[0], queued[2]}) {
      const release_result r = gate.release(++now_ns);
      REQUIRE(r.promoted == id(t));
      REQUIRE(gate.claim(t, now_ns));
    }
    REQUIRE(gate.release(++now_ns).ok);
    REQUIRE(gate.release(++now_ns).ok);
    REQUIRE(gate.active() == 0);
    REQUIRE(gate.waiting() == 0);
    REQUIRE(gate.handed_over() == 0);
  }
  CHECK(gate.totals().queue_full == 10);
}

TEST_CASE("each mutation breaks the gate the way it says", "[fifo][mutation]") {
  // Goal: the broken variants misbehave on a minimal example. Method: one hand-made scenario per mutation.
  auto gate_with = [](mutation m, std::int64_t max_active) {
    config c = caps(max_active, 1);
    c.mut = m;
    return fifo_gate(c);
  };
  SECTION("leak_handover_on_cancel keeps the handed-over lease") {
    fifo_gate gate = gate_with(mutation::leak_handover_on_cancel, 1);
    gate.acquire(1, 0);
    gate.acquire(2, 0);
    gate.release(1);
    CHECK(gate.cancel(2, 2).outcome == leave_outcome::handover_released);
    CHECK(gate.active() == 1);  // the real gate is idle here
  }
  SECTION("admit_off_by_one admits one lease too many") {
    fifo_gate gate = gate_with(mutation::admit_off_by_one, 1);
    gate.acquire(1, 0);
    CHECK(gate.acquire(2, 0).outcome == acquire_outcome::admitted);
    CHECK(gate.active() == 2);
  }
  SECTION("newcomers_jump_queue lets a newcomer pass an older waiter") {
    fifo_gate gate = gate_with(mutation::newcomers_jump_queue, 1);
    gate.acquire(1, 0);
    gate.acquire(2, 0);
    CHECK_FALSE(gate.release(1).promoted.has_value());
    CHECK(gate.acquire(3, 2).outcome == acquire_outcome::admitted);
    CHECK(gate.is_waiting(2));
  }
  SECTION("double_release_on_timeout frees a slot that is still in use") {
    fifo_gate gate = gate_with(mutation::double_release_on_timeout, 2);
    gate.acquire(1, 0);
    gate.acquire(2, 0);
    const std::int64_t deadline_ns = gate.acquire(3, 0).deadline_ns;
    gate.release(1);  // promotes 3
    CHECK(gate.expire(3, deadline_ns).outcome == leave_outcome::handover_released);
    CHECK(gate.active() == 0);  // yet ticket 2 still holds its lease
    CHECK(gate.totals().released == 3);
  }
}
