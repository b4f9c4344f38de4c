// queue_order: the tickets one FIFO gate holds in its queue, in the order
// they queued, as its monitors see them (monitors.hpp judges fifo_order by it).
//
// Tickets only grow within a gate's lifetime, so the order is increasing
// ticket order and a ticket is found by binary search. A ticket that left
// the queue by timeout or cancellation is marked, not removed: the front is
// dropped while marked, so the front is always the ticket that has waited
// longest.
#pragma once

#include <algorithm>
#include <deque>

#include "gate/admit_assert.hpp"
#include "gate/fifo/fifo_gate.hpp"

namespace admit::world::fifo_world {

class queue_order {
 public:
  struct queued_ticket {
    fifo::ticket_id ticket;
    bool left;
  };

  // A ticket joined the queue. Checked against the last ticket that queued
  // (not the back of the queue, which may have been promoted away): every
  // ticket of a lifetime is newer than all before it.
  void queued(fifo::ticket_id t) {
    ADMIT_ASSERT(t != fifo::no_ticket, "a queued ticket is a real ticket");
    ADMIT_ASSERT(last_queued_ == fifo::no_ticket || last_queued_ < t, "tickets queue in increasing order");
    last_queued_ = t;
    tickets_.push_back(queued_ticket{t, false});
  }
  // The entry of a ticket still queued, or nullptr.
  queued_ticket* still_queued(fifo::ticket_id t) {
    auto it = std::lower_bound(tickets_.begin(), tickets_.end(), t,
                               [](const queued_ticket& q, fifo::ticket_id v) { return q.ticket < v; });
    return it != tickets_.end() && it->ticket == t && !it->left ? &*it : nullptr;
  }
  // The ticket that has waited longest, or nullptr when none waits.
  const queued_ticket* oldest() {
    while (!tickets_.empty() && tickets_.front().left) tickets_.pop_front();
    return tickets_.empty() ? nullptr : &tickets_.front();
  }
  // The oldest ticket was promoted.
  void pop_oldest() {
    ADMIT_ASSERT(!tickets_.empty(), "a promotion takes a ticket that queued");
    tickets_.pop_front();
  }
  // Whether any queued ticket is still recorded, left or not.
  bool any_recorded() const noexcept { return !tickets_.empty(); }

  // A new gate lifetime: its tickets start over.
  void clear() noexcept {
    tickets_.clear();
    last_queued_ = fifo::no_ticket;
  }

 private:
  std::deque<queued_ticket> tickets_;
  fifo::ticket_id last_queued_ = fifo::no_ticket;  // none yet
};

}  // namespace admit::world::fifo_world
