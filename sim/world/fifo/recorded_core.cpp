#include "sim/world/fifo/recorded_core.hpp"

#include <utility>

namespace admit::world::fifo_world {

namespace {

std::string ticket_text(fifo::ticket_id t) { return "ticket " + std::to_string(t); }

}  // namespace

recorded_core::recorded_core(std::string name, const fifo::config& cfg, std::unique_ptr<fifo::core_iface> core)
    : name_(std::move(name)), cfg_(cfg), core_(std::move(core)), log_(cfg.event_log_capacity) {}

void recorded_core::log(fifo::status st, fifo::ticket_id t) {
  ++order_;
  totals_.add(st);
  const fifo::event e{order_, st, active_, waiting(), now_ns_, t};
  if (sink_ != nullptr) sink_->on_event(e);
  log_.push(e);
}

void recorded_core::breach(std::string what, breach_kind kind) {
  ++breaches_;
  if (breach_to_ != nullptr)
    breach_to_->on_breach(kind, name_ + (kind == breach_kind::lease ? " broke its contract: " : " broke the FIFO rules: ") +
                                    std::move(what));
}

void recorded_core::check_slot_taken(const std::string& call) {
  if (waiting_.empty() || active_ >= cfg_.max_active) return;
  breach(call + " freed a slot while " + std::to_string(waiting()) + " tickets waited (ticket " +
             std::to_string(waiting_.begin()->first) + " the oldest), and promoted none: " + std::to_string(active_) +
             " of max_active " + std::to_string(cfg_.max_active) + " leases out",
         breach_kind::order);
}

bool recorded_core::gone() {
  const fifo::core_failure* f = core_->failed();
  if (f == nullptr) return false;
  if (!failure_told_ && breach_to_ != nullptr) breach_to_->on_failure(*f);
  failure_told_ = true;
  return true;
}

fifo::acquire_result recorded_core::acquire(fifo::ticket_id t, std::int64_t now_ns) {
  advance(now_ns);
  if (gone()) return {fifo::acquire_outcome::queue_full, 0};
  const fifo::acquire_result r = core_->acquire(t, now_ns);
  if (gone()) return {fifo::acquire_outcome::queue_full, 0};
  switch (r.outcome) {
    case fifo::acquire_outcome::admitted:
      ++active_;
      log(fifo::status::admitted, t);
      return r;
    case fifo::acquire_outcome::queued:
      if (waiting_.empty() && active_ < cfg_.max_active)
        breach("acquire(" + ticket_text(t) + ") queued it while nobody waited and " + std::to_string(active_) +
                   " of max_active " + std::to_string(cfg_.max_active) + " leases were out",
               breach_kind::order);
      waiting_.emplace(t, r.deadline_ns);
      log(fifo::status::queued, t);
      return r;
    case fifo::acquire_outcome::queue_full:
      log(fifo::status::queue_full, t);
      return r;
  }
  breach("acquire(" + ticket_text(t) + ") answered an outcome that is none of admitted, queued, queue_full");
  log(fifo::status::queue_full, t);
  return {fifo::acquire_outcome::queue_full, 0};
}

std::optional<fifo::ticket_id> recorded_core::promote(std::optional<fifo::ticket_id> p) {
  if (!p) return std::nullopt;
  ++active_;  // the core granted the slot to p, whatever p is
  const bool was_waiting = waiting_.erase(*p) == 1;
  if (was_waiting) handed_.insert(*p);
  log(fifo::status::promoted, *p);  // fifo_order judges whom it took
  if (!was_waiting) {
    breach("it promoted " + ticket_text(*p) + ", which was not waiting" +
           (handed_.contains(*p) ? " (it had been promoted already)" : ""));
    return std::nullopt;
  }
  return p;
}

fifo::release_result recorded_core::release(std::int64_t now_ns) {
  advance(now_ns);
  if (gone()) return {false, std::nullopt};
  const fifo::release_result r = core_->release(now_ns);
  if (gone()) return {false, std::nullopt};
  if (!r.ok) {
    if (active_ <= 0) {
      ++totals_.unbalanced_release;  // the world released more than was granted: the monitors judge it
    } else {
      breach("release() answered ok = false while its answers had granted " + std::to_string(active_) +
             " leases not yet released");
    }
    if (r.promoted) breach("release() answered ok = false and promoted " + ticket_text(*r.promoted));
    return {false, std::nullopt};
  }
  --active_;
  log(fifo::status::released, fifo::no_ticket);
  const std::optional<fifo::ticket_id> next = promote(r.promoted);
  check_slot_taken("release()");
  return {true, next};
}

bool recorded_core::claim(fifo::ticket_id t, std::int64_t now_ns) {
  advance(now_ns);
  if (gone()) return false;
  const bool said = core_->claim(t, now_ns);
  if (gone()) return false;
  const bool handed = handed_.erase(t) == 1;
  if (said && !handed) {
    breach("claim(" + ticket_text(t) + ") answered true, but it was not handed over");
    return false;
  }
  if (!said && handed) breach("claim(" + ticket_text(t) + ") answered false, but it had been promoted and not claimed");
  return said;
}

fifo::leave_result recorded_core::leave(fifo::ticket_id t, std::int64_t now_ns, fifo::status st) {
  advance(now_ns);
  if (gone()) return {fifo::leave_outcome::not_waiting, std::nullopt};
  const fifo::leave_result r = st == fifo::status::wait_timeout ? core_->expire(t, now_ns) : core_->cancel(t, now_ns);
  if (gone()) return {fifo::leave_outcome::not_waiting, std::nullopt};
  const char* call = st == fifo::status::wait_timeout ? "expire(" : "cancel(";
  const auto w = waiting_.find(t);
  const bool was_waiting = w != waiting_.end();
  const bool was_handed = handed_.contains(t);
  switch (r.outcome) {
    case fifo::leave_outcome::not_waiting:
      if (was_waiting || was_handed)
        breach(call + ticket_text(t) + ") answered not_waiting, but it was " +
               (was_waiting ? "waiting" : "handed over and not claimed"));
      if (r.promoted) breach(call + ticket_text(t) + ") answered not_waiting and promoted " + ticket_text(*r.promoted));
      return {fifo::leave_outcome::not_waiting, std::nullopt};
    case fifo::leave_outcome::removed:
      if (was_waiting) {
        waiting_.erase(w);
      } else if (was_handed) {
        // The lease handed to it stays counted: nobody will ever release it.
        handed_.erase(t);
        breach(call + ticket_text(t) + ") answered removed, but it had been promoted: its lease is never released");
      } else {
        breach(call + ticket_text(t) + ") answered removed, but it was not waiting");
      }
      log(st, t);
      if (r.promoted) breach(call + ticket_text(t) + ") answered removed and promoted " + ticket_text(*r.promoted));
      return {fifo::leave_outcome::removed, std::nullopt};
    case fifo::leave_outcome::handover_released: {
      if (was_handed) {
        handed_.erase(t);
      } else {
        if (was_waiting) waiting_.erase(w);
        breach(call + ticket_text(t) + ") answered handover_released, but it " +
               (was_waiting ? "was still waiting: it held no lease" : "held no handed-over lease"));
      }
      --active_;
      log(fifo::status::released, t);
      const std::optional<fifo::ticket_id> next = promote(r.promoted);
      log(st, t);
      check_slot_taken(call + ticket_text(t) + ")");
      return {fifo::leave_outcome::handover_released, next};
    }
  }
  breach(call + ticket_text(t) + ") answered an outcome that is none of removed, handover_released, not_waiting");
  return {fifo::leave_outcome::not_waiting, std::nullopt};
}

fifo::snapshot recorded_core::snap() const {
  return fifo::snapshot{active_, waiting(), log_.oldest_first(), cfg_.max_active, cfg_.max_waiting, cfg_.wait_deadline_ns};
}

}  // namespace admit::world::fifo_world
