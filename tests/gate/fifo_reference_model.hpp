// reference_model: the FIFO gate's semantics written as plainly as possible,
// for the stateful property tests to run beside the real core.
//
// It tracks who holds what by ticket, with a std::deque for the queue and
// linear searches everywhere: slow, obvious, and independent of the core's
// slab, index and ring. It always follows the real (unmutated) semantics.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <vector>

#include "gate/fifo/fifo_gate.hpp"

namespace admit::fifo::test {

struct reference_model {
  std::int64_t max_active = 1;
  std::int64_t max_waiting = 1;
  std::int64_t wait_deadline_ns = 1;

  std::int64_t now_ns = 0;
  ticket_id next_ticket = 1;                   // ids handed to acquire: 1, 2, 3, ...
  std::deque<ticket_id> queue;                 // waiting, oldest first
  std::vector<ticket_id> handed;               // promoted, not yet claimed
  std::vector<ticket_id> holders;              // admitted or claimed, lease not yet released
  std::map<ticket_id, std::int64_t> deadline_ns;  // every ticket that was ever queued
  counters totals;

  friend bool operator==(const reference_model&, const reference_model&) = default;

  std::int64_t active() const { return static_cast<std::int64_t>(holders.size() + handed.size()); }
  std::int64_t waiting() const { return static_cast<std::int64_t>(queue.size()); }

  bool is_queued(ticket_id t) const { return std::find(queue.begin(), queue.end(), t) != queue.end(); }
  bool is_handed(ticket_id t) const { return std::find(handed.begin(), handed.end(), t) != handed.end(); }

  std::optional<std::int64_t> next_deadline() const {
    if (queue.empty()) return std::nullopt;
    return deadline_ns.at(queue.front());
  }

  acquire_outcome acquire(ticket_id t) {
    if (active() < max_active && queue.empty()) {
      holders.push_back(t);
      ++totals.admitted;
      return acquire_outcome::admitted;
    }
    if (waiting() >= max_waiting) {
      ++totals.queue_full;
      return acquire_outcome::queue_full;
    }
    queue.push_back(t);
    deadline_ns[t] = now_ns + wait_deadline_ns;
    ++totals.queued;
    return acquire_outcome::queued;
  }

  // Ends holders[i]'s lease; returns the promoted ticket, if any.
  std::optional<ticket_id> release(std::size_t i) {
    holders.erase(holders.begin() + static_cast<std::ptrdiff_t>(i));
    return lease_ended();
  }

  // A release while nothing is active: counted, nothing else.
  void release_unbalanced() { ++totals.unbalanced_release; }

  bool claim(ticket_id t) {
    const auto it = std::find(handed.begin(), handed.end(), t);
    if (it == handed.end()) return false;
    handed.erase(it);
    holders.push_back(t);
    return true;
  }

  // The time at which the driver's timer for ticket t fires: its deadline,
  // or now if that already passed. Tickets never queued have no timer.
  std::int64_t timer_fires_at(ticket_id t) const {
    const auto it = deadline_ns.find(t);
    return it == deadline_ns.end() ? now_ns : std::max(now_ns, it->second);
  }

  leave_result leave(ticket_id t, bool timeout) {
    if (const auto it = std::find(queue.begin(), queue.end(), t); it != queue.end()) {
      queue.erase(it);
      count_leave(timeout);
      return {leave_outcome::removed, std::nullopt};
    }
    if (const auto it = std::find(handed.begin(), handed.end(), t); it != handed.end()) {
      handed.erase(it);
      const std::optional<ticket_id> promoted = lease_ended();
      count_leave(timeout);
      return {leave_outcome::handover_released, promoted};
    }
    return {leave_outcome::not_waiting, std::nullopt};
  }

  // Moves time to `to_ns` and expires every due waiter, oldest first.
  std::vector<ticket_id> advance_to(std::int64_t to_ns) {
    now_ns = std::max(now_ns, to_ns);
    std::vector<ticket_id> expired;
    while (!queue.empty() && deadline_ns.at(queue.front()) <= now_ns) {
      expired.push_back(queue.front());
      queue.pop_front();
      ++totals.wait_timeout;
    }
    return expired;
  }

 private:
  std::optional<ticket_id> lease_ended() {
    ++totals.released;
    if (queue.empty()) return std::nullopt;
    const ticket_id t = queue.front();
    queue.pop_front();
    handed.push_back(t);
    ++totals.promoted;
    return t;
  }

  void count_leave(bool timeout) {
    if (timeout) {
      ++totals.wait_timeout;
    } else {
      ++totals.wait_cancelled;
    }
  }
};

}  // namespace admit::fifo::test
