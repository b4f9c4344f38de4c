#include "gate/fifo/fifo_gate.hpp"

#include <algorithm>
#include <limits>
#include <string>
#include <utility>

#include "gate/admit_assert.hpp"
#include "gate/probe.hpp"

namespace admit::fifo {

std::string_view to_string(mutation m) noexcept {
  switch (m) {
    case mutation::none: return "none";
    case mutation::leak_handover_on_cancel: return "leak_handover_on_cancel";
    case mutation::admit_off_by_one: return "admit_off_by_one";
    case mutation::newcomers_jump_queue: return "newcomers_jump_queue";
    case mutation::double_release_on_timeout: return "double_release_on_timeout";
    case mutation::corrupt_on_release: return "corrupt_on_release";
  }
  return "unknown_mutation";
}

std::string_view to_string(acquire_outcome o) noexcept {
  switch (o) {
    case acquire_outcome::admitted: return "admitted";
    case acquire_outcome::queued: return "queued";
    case acquire_outcome::queue_full: return "queue_full";
  }
  return "unknown_acquire_outcome";
}

std::string_view to_string(leave_outcome o) noexcept {
  switch (o) {
    case leave_outcome::removed: return "removed";
    case leave_outcome::handover_released: return "handover_released";
    case leave_outcome::not_waiting: return "not_waiting";
  }
  return "unknown_leave_outcome";
}

config_error::config_error(std::string field_name, const std::string& message)
    : std::invalid_argument(field_name + ": " + message), field(std::move(field_name)) {}

namespace {

void check_range(const char* field, std::int64_t value, std::int64_t lo, std::int64_t hi) {
  if (value < lo || value > hi) {
    throw config_error(field, "expected an integer from " + std::to_string(lo) + " to " +
                                  std::to_string(hi) + ", got " + std::to_string(value));
  }
}

}  // namespace

void validate(const config& cfg) {
  check_range("max_active", cfg.max_active, 1, max_active_limit);
  check_range("max_waiting", cfg.max_waiting, 0, max_waiting_limit);
  check_range("wait_deadline_ns", cfg.wait_deadline_ns, 1, wait_deadline_ns_limit);
  check_range("event_log_capacity", cfg.event_log_capacity, 0, event_log_capacity_limit);
  const auto mut = static_cast<std::uint8_t>(cfg.mut);
  if (mut > static_cast<std::uint8_t>(mutation::corrupt_on_release)) {
    throw config_error("mut", "expected a known mutation (none, leak_handover_on_cancel, "
                              "admit_off_by_one, newcomers_jump_queue, "
                              "double_release_on_timeout, corrupt_on_release), got " +
                                  std::to_string(mut));
  }
}

fifo_gate::fifo_gate(config cfg)
    : cfg_(cfg), checked_(cfg.mut == mutation::none || cfg.mut == mutation::corrupt_on_release) {
  validate(cfg_);
  log_ = event_ring(cfg_.event_log_capacity);
}

void fifo_gate::advance_to(std::int64_t now_ns) {
  ADMIT_ASSERT(now_ns >= now_ns_, "time moved backwards: now_ns is before an earlier input's");
  now_ns_ = now_ns;
}

void fifo_gate::log(status st, ticket_id ticket) {
  ++order_;
  totals_.add(st);
  const event e{order_, st, active_, waiters_.size(), now_ns_, ticket};
  if (sink_ != nullptr) sink_->on_event(e);
  log_.push(e);
}

void fifo_gate::check_invariants() const {
  if (!checked_) return;
  ADMIT_ASSERT(active_ >= 0, "active count went negative");
  ADMIT_ASSERT(active_ <= cfg_.max_active, "more leases active than max_active");
  ADMIT_ASSERT(waiters_.size() <= cfg_.max_waiting, "more tickets waiting than max_waiting");
  ADMIT_ASSERT(waiters_.empty() || active_ == cfg_.max_active,
               "a ticket waits while a slot is free");
  ADMIT_ASSERT(handed_over_ >= 0, "handed-over count went negative");
  ADMIT_ASSERT(handed_over_ <= active_,
               "more handed-over leases than active ones: a lease was released before its "
               "promoted ticket claimed it");
  ADMIT_ASSERT(static_cast<std::int64_t>(index_.size()) == waiters_.size() + handed_over_,
               "the ticket index must hold exactly the waiting and handed-over tickets");
}

acquire_result fifo_gate::acquire(ticket_id ticket, std::int64_t now_ns) {
  advance_to(now_ns);
  ADMIT_ASSERT(ticket != no_ticket, "ticket id no_ticket is reserved");
  ADMIT_ASSERT(index_.find(ticket) == nullptr, "ticket is already waiting or handed over");

  bool slot_free = active_ < cfg_.max_active;
  bool nobody_waits = waiters_.empty();
  if (cfg_.mut != mutation::none) [[unlikely]] {
    if (cfg_.mut == mutation::admit_off_by_one) slot_free = active_ <= cfg_.max_active;
    if (cfg_.mut == mutation::newcomers_jump_queue) nobody_waits = true;
  }

  if (slot_free && nobody_waits) {
    ++active_;
    log(status::admitted, ticket);
    check_invariants();
    return {acquire_outcome::admitted, 0};
  }
  if (waiters_.size() >= cfg_.max_waiting) {
    log(status::queue_full, ticket);
    return {acquire_outcome::queue_full, 0};
  }
  ADMIT_ASSERT(now_ns_ <= std::numeric_limits<std::int64_t>::max() - cfg_.wait_deadline_ns,
               "the wait deadline would overflow int64 nanoseconds");
  const std::int64_t deadline_ns = now_ns_ + cfg_.wait_deadline_ns;
  const waiter_queue::node_id node = waiters_.push_back(waiter{ticket, deadline_ns});
  index_.insert(ticket, node);
  log(status::queued, ticket);
  check_invariants();
  return {acquire_outcome::queued, deadline_ns};
}

std::optional<ticket_id> fifo_gate::release_one(ticket_id ticket) {
  ADMIT_ASSERT(active_ > 0, "release_one needs an active lease");
  --active_;
  log(status::released, ticket);
  if (waiters_.empty()) return std::nullopt;
  if (cfg_.mut == mutation::newcomers_jump_queue) [[unlikely]] {
    // Broken on purpose: the slot stays free for whoever acquires next.
    return std::nullopt;
  }
  const waiter w = waiters_.pop_front();
  ticket_index::value_type* slot = index_.find(w.ticket);
  ADMIT_ASSERT(slot != nullptr, "a queued ticket must be in the index");
  *slot = handed_over_mark;
  ++handed_over_;
  ++active_;
  log(status::promoted, w.ticket);
  return w.ticket;
}

release_result fifo_gate::release(std::int64_t now_ns) {
  advance_to(now_ns);
  if (active_ <= 0) {
    ADMIT_PROBE(core_unbalanced_release);
    ++totals_.unbalanced_release;
    return {false, std::nullopt};
  }
  const std::optional<ticket_id> promoted = release_one(no_ticket);
  if (cfg_.mut == mutation::corrupt_on_release) [[unlikely]] active_ = -1;
  check_invariants();
  return {true, promoted};
}

bool fifo_gate::claim(ticket_id ticket, std::int64_t now_ns) {
  advance_to(now_ns);
  const ticket_index::value_type* slot = index_.find(ticket);
  if (slot == nullptr || *slot != handed_over_mark) return false;
  index_.erase(ticket);
  --handed_over_;
  check_invariants();
  return true;
}

leave_result fifo_gate::leave(ticket_id ticket, std::int64_t now_ns, status st) {
  advance_to(now_ns);
  const ticket_index::value_type* slot = index_.find(ticket);
  if (slot == nullptr) return {leave_outcome::not_waiting, std::nullopt};

  if (*slot != handed_over_mark) {
    const waiter_queue::node_id node = *slot;
    if (st == status::wait_timeout) {
      ADMIT_ASSERT(now_ns_ >= waiters_.at(node).deadline_ns,
                   "a waiting ticket expired before its wait deadline");
    }
    waiters_.remove(node);
    index_.erase(ticket);
    log(st, ticket);
    check_invariants();
    return {leave_outcome::removed, std::nullopt};
  }

  // Promotion won the race: the ticket owns a lease its caller will never
  // use. Release it once (which may promote the next waiter), then record
  // why the ticket left.
  index_.erase(ticket);
  --handed_over_;
  std::optional<ticket_id> promoted;
  if (cfg_.mut == mutation::leak_handover_on_cancel) [[unlikely]] {
    // Broken on purpose: the handed-over lease is never released.
  } else {
    promoted = release_one(ticket);
    if (cfg_.mut == mutation::double_release_on_timeout && st == status::wait_timeout) [[unlikely]] {
      // Broken on purpose: the same lease ends a second time.
      if (active_ > 0) {
        const std::optional<ticket_id> again = release_one(ticket);
        if (!promoted) promoted = again;
      } else {
        ++totals_.unbalanced_release;
      }
    }
  }
  if (promoted) ADMIT_PROBE(core_handover_released_promoted);
  log(st, ticket);
  check_invariants();
  return {leave_outcome::handover_released, promoted};
}

leave_result fifo_gate::expire(ticket_id ticket, std::int64_t now_ns) {
  return leave(ticket, now_ns, status::wait_timeout);
}

leave_result fifo_gate::cancel(ticket_id ticket, std::int64_t now_ns) {
  return leave(ticket, now_ns, status::wait_cancelled);
}

std::optional<ticket_id> fifo_gate::expire_one_due(std::int64_t now_ns) {
  advance_to(now_ns);
  if (waiters_.empty() || waiters_.front().deadline_ns > now_ns_) return std::nullopt;
  const waiter w = waiters_.pop_front();
  index_.erase(w.ticket);
  log(status::wait_timeout, w.ticket);
  check_invariants();
  return w.ticket;
}

std::optional<std::int64_t> fifo_gate::next_deadline_ns() const noexcept {
  if (waiters_.empty()) return std::nullopt;
  return waiters_.front().deadline_ns;
}

bool fifo_gate::is_waiting(ticket_id ticket) const noexcept {
  const ticket_index::value_type* slot = index_.find(ticket);
  return slot != nullptr && *slot != handed_over_mark;
}

bool fifo_gate::is_handed_over(ticket_id ticket) const noexcept {
  const ticket_index::value_type* slot = index_.find(ticket);
  return slot != nullptr && *slot == handed_over_mark;
}

snapshot fifo_gate::snap() const {
  snapshot s{active_, waiters_.size(), {}, cfg_.max_active, cfg_.max_waiting,
             cfg_.wait_deadline_ns};
  s.events = log_.oldest_first();
  return s;
}

}  // namespace admit::fifo
