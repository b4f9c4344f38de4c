// ring_gate: a small FIFO admission gate of "our own", the kind of core a
// team writes for its service, judged by admitsim through the
// fifo::gate_core contract (gate/fifo/gate_core.hpp in the installed headers).
//
// Waiters sit in a ring buffer sized to max_waiting; a waiter that leaves
// mid-queue is marked gone and skipped when it reaches the front. A promoted
// waiter is remembered until its caller claims the lease, or gives up, in
// which case the gate releases the lease itself and promotes the next one.
//
// RING_GATE_BROKEN builds the copy with one deliberate bug: a waiter whose
// deadline passes after it was promoted, before it resumed, is dropped
// without releasing the lease it was handed: the lease leaks, and every
// later request waits for a slot that never frees.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "gate/fifo/fifo_gate.hpp"

namespace example {

class ring_gate {
 public:
  using ticket = admit::fifo::ticket_id;

  explicit ring_gate(const admit::fifo::config& cfg)
      : max_active_(cfg.max_active), wait_ns_(cfg.wait_deadline_ns),
        ring_(static_cast<std::size_t>(cfg.max_waiting)) {}

  admit::fifo::acquire_result acquire(ticket t, std::int64_t now_ns) {
    skip_gone();
    if (active_ < max_active_ && live_ == 0) {
      ++active_;
      return {admit::fifo::acquire_outcome::admitted, 0};
    }
    if (live_ + gone_ == ring_.size()) compact();
    if (ring_.empty() || live_ + gone_ == ring_.size()) return {admit::fifo::acquire_outcome::queue_full, 0};
    ring_[(head_ + live_ + gone_) % ring_.size()] = slot{t, false};
    ++live_;
    return {admit::fifo::acquire_outcome::queued, now_ns + wait_ns_};
  }

  admit::fifo::release_result release(std::int64_t) {
    if (active_ == 0) return {false, std::nullopt};
    --active_;
    return {true, promote()};
  }

  bool claim(ticket t, std::int64_t) { return forget_handed(t); }

  admit::fifo::leave_result expire(ticket t, std::int64_t) { return leave(t, true); }
  admit::fifo::leave_result cancel(ticket t, std::int64_t) { return leave(t, false); }

 private:
  struct slot {
    ticket t = 0;
    bool gone = true;
  };

  // The oldest live waiter gets the free slot.
  std::optional<ticket> promote() {
    skip_gone();
    if (live_ == 0 || active_ >= max_active_) return std::nullopt;
    const ticket t = ring_[head_].t;
    pop_front();
    --live_;
    ++active_;
    handed_.push_back(t);
    return t;
  }

  admit::fifo::leave_result leave(ticket t, bool deadline) {
    for (std::size_t i = 0; i < live_ + gone_; ++i) {
      slot& s = ring_[(head_ + i) % ring_.size()];
      if (s.gone || s.t != t) continue;
      s.gone = true;
      --live_;
      ++gone_;
      skip_gone();
      return {admit::fifo::leave_outcome::removed, std::nullopt};
    }
    if (forget_handed(t)) {
#ifdef RING_GATE_BROKEN
      if (deadline) return {admit::fifo::leave_outcome::removed, std::nullopt};  // the bug: the lease is kept
#else
      (void)deadline;
#endif
      --active_;  // promotion won the race: the lease it was handed ends here, once
      return {admit::fifo::leave_outcome::handover_released, promote()};
    }
    return {admit::fifo::leave_outcome::not_waiting, std::nullopt};
  }

  bool forget_handed(ticket t) {
    for (std::size_t i = 0; i < handed_.size(); ++i) {
      if (handed_[i] != t) continue;
      handed_[i] = handed_.back();
      handed_.pop_back();
      return true;
    }
    return false;
  }

  void pop_front() {
    ring_[head_].gone = true;
    head_ = (head_ + 1) % ring_.size();
  }
  void skip_gone() {
    while (gone_ > 0 && ring_[head_].gone) {
      head_ = (head_ + 1) % ring_.size();
      --gone_;
    }
  }
  // Squeezes out the gone slots, keeping the order.
  void compact() {
    std::vector<slot> kept;
    for (std::size_t i = 0; i < live_ + gone_; ++i)
      if (const slot& s = ring_[(head_ + i) % ring_.size()]; !s.gone) kept.push_back(s);
    for (auto& s : ring_) s = slot{};
    for (std::size_t i = 0; i < kept.size(); ++i) ring_[i] = kept[i];
    head_ = 0;
    gone_ = 0;
  }

  std::int64_t max_active_;
  std::int64_t wait_ns_;
  std::int64_t active_ = 0;
  std::vector<slot> ring_;
  std::size_t head_ = 0, live_ = 0, gone_ = 0;  // live and gone slots from head_ on, in queue order
  std::vector<ticket> handed_;                 // promoted, not yet claimed
};

}  // namespace example
