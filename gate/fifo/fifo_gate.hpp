// fifo_gate: the sans-IO core of the FIFO admission gate.
//
// Protocol model. The gate bounds how much work runs at once. It holds up to
// `max_active` leases; a lease stands for work that has not finished yet. A
// request that finds a free slot and nobody ahead of it is admitted on the
// spot. Otherwise it takes a place at the back of a queue of at most
// `max_waiting` tickets, or is refused with `queue_full` (HTTP 429) when the
// queue has no room. A queued ticket waits until one of three things happens:
//   * a lease ends (release): the slot goes straight to the oldest waiter,
//     which is `promoted`; the lease is now its own, but its caller has not yet
//     seen it ("handed over, unclaimed") until the driver reports `claim`;
//   * its wait deadline (`wait_deadline_ns` after queueing) passes: it leaves
//     with `wait_timeout` (HTTP 503) without ever starting work;
//   * its caller stops waiting: it leaves with `wait_cancelled`.
// Promotion can win the race against the deadline or the cancellation: the
// lease was handed over but the waiter gives up before claiming it. Then the
// gate releases that handed-over lease exactly once (which may promote the
// next waiter) before logging the timeout or cancellation, so no capacity
// leaks. A lease whose work cannot be stopped stays held until the driver
// calls release; the gate never takes a lease back on its own.
//
// Sans-IO. Every input is a call carrying `now_ns` (virtual nanoseconds since
// the run started, never decreasing) and every effect comes back as a value:
// the gate reads no clock, arms no timer, logs nothing and draws no random
// numbers. The driver arms a timer for the deadline returned by `acquire`
// (or polls `next_deadline_ns` / `expire_due`) and completes the waiter's
// handler when `release` or a leave names a promoted ticket.
//
// Event log. Every transition that changes or refuses something gets the next
// `order` number and the active/waiting counts after it. Only the latest
// `event_log_capacity` entries are kept (a ring); `order` keeps counting. An
// unbalanced release changes nothing and is only counted.
//
// Cost. Every operation is O(1) amortised and, once the gate has seen its
// peak number of waiters, allocates nothing: the queue is a linked list in a
// slab, tickets are found through an open-addressing index, and the event log
// is a ring that stops growing at its capacity.
//
// Mutations. `config::mut` selects a deliberately broken variant so that the
// property tests can prove they catch each kind of bug; `mutation::none` is
// the real gate. Under a mutation the gate's own invariant assertions are off,
// so the bug surfaces in the tests' properties rather than here.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "gate/fifo/ticket_index.hpp"
#include "gate/fifo/waiter_queue.hpp"

namespace admit::fifo {

// Caller-chosen id of one request. `no_ticket` is reserved: it marks events
// that no single ticket caused (a plain `release`).
using ticket_id = std::uint64_t;
inline constexpr ticket_id no_ticket = ~ticket_id{0};

enum class status : std::uint8_t {
  admitted,
  queued,
  promoted,
  released,
  queue_full,
  wait_timeout,
  wait_cancelled,
};
// Inline: the simulator names the status of every gate event it traces.
inline std::string_view to_string(status st) noexcept {
  switch (st) {
    case status::admitted: return "admitted";
    case status::queued: return "queued";
    case status::promoted: return "promoted";
    case status::released: return "released";
    case status::queue_full: return "queue_full";
    case status::wait_timeout: return "wait_timeout";
    case status::wait_cancelled: return "wait_cancelled";
  }
  return "unknown_status";
}

enum class mutation : std::uint8_t {
  none,                       // the real gate
  leak_handover_on_cancel,    // a handed-over lease is never released when its waiter leaves
  admit_off_by_one,           // admits while active <= max_active
  newcomers_jump_queue,       // release leaves the slot free; a newcomer takes it past older waiters
  double_release_on_timeout,  // a handed-over lease is released twice when its deadline passes
  // Tests only (no scenario file can name it): a release drives the active
  // count negative with the invariant checks still on, so ADMIT_ASSERT fires
  // inside the release, as a real bug there would.
  corrupt_on_release,
};
std::string_view to_string(mutation m) noexcept;
inline constexpr mutation all_mutations[] = {
    mutation::none,
    mutation::leak_handover_on_cancel,
    mutation::admit_off_by_one,
    mutation::newcomers_jump_queue,
    mutation::double_release_on_timeout,
};

struct config {
  std::int64_t max_active = 1;                   // 1 .. 1'000'000
  std::int64_t max_waiting = 1;                  // 0 .. 10'000'000
  std::int64_t wait_deadline_ns = 150'000'000;   // 1 .. 24 h (the lab waits 0.15 s)
  std::int64_t event_log_capacity = 128;         // 0 .. 1'000'000; 0 keeps no entries
  mutation mut = mutation::none;

  friend bool operator==(const config&, const config&) = default;
};

inline constexpr std::int64_t max_active_limit = 1'000'000;
inline constexpr std::int64_t max_waiting_limit = 10'000'000;
inline constexpr std::int64_t wait_deadline_ns_limit = 24LL * 3600 * 1'000'000'000;
inline constexpr std::int64_t event_log_capacity_limit = 1'000'000;

// A configuration value out of range. `field` names the config member; the
// message reads "<field>: expected ..., got <value>".
class config_error : public std::invalid_argument {
 public:
  config_error(std::string field_name, const std::string& message);
  std::string field;
};

// Throws config_error for the first field out of range, in declaration order.
void validate(const config& cfg);

struct event {
  std::uint64_t order;  // 1, 2, 3, ... across the gate's whole life
  status st;
  std::int64_t active;   // counts after the transition
  std::int64_t waiting;
  std::int64_t at_ns;
  ticket_id ticket;      // the ticket concerned; no_ticket for a plain release

  friend bool operator==(const event&, const event&) = default;
};

// A gate's bounded event log: the latest `capacity` events, the older ones
// overwritten in place once it is full (capacity 0 keeps none). fifo_gate
// keeps its log in one; so does the simulator's recorder of a team's own core
// (sim/world/fifo/recorded_core.hpp), so that both give the same snapshot.
class event_ring {
 public:
  event_ring() = default;
  // A modest capacity (the lab's 128) is allocated up front; a very large
  // one grows on demand and stops growing at its capacity.
  explicit event_ring(std::int64_t capacity) : capacity_(static_cast<std::size_t>(capacity)) {
    constexpr std::size_t eager_entries = 4096;
    log_.reserve(std::min(capacity_, eager_entries));
  }

  void push(const event& e) {
    if (capacity_ == 0) return;
    if (log_.size() < capacity_) {
      log_.push_back(e);
      return;
    }
    log_[next_] = e;
    if (++next_ == capacity_) next_ = 0;
  }

  // The kept events, oldest first.
  std::vector<event> oldest_first() const {
    std::vector<event> out;
    out.reserve(log_.size());
    // Before the ring fills next_ stays 0, so this is oldest-first either way.
    const auto split = log_.begin() + static_cast<std::ptrdiff_t>(next_);
    out.insert(out.end(), split, log_.end());
    out.insert(out.end(), log_.begin(), split);
    return out;
  }

 private:
  std::size_t capacity_ = 0;
  std::vector<event> log_;  // a ring once full
  std::size_t next_ = 0;    // the slot the next event overwrites once the ring is full
};


// Receives every logged event as it happens, including those that later fall
// out of the bounded log; how monitors see each transition. A sink must not
// call back into the gate.
class event_sink {
 public:
  virtual void on_event(const event& e) = 0;

 protected:
  ~event_sink() = default;
};

// The gate's state shaped like the lab's snapshot; events oldest first.
struct snapshot {
  std::int64_t active;
  std::int64_t waiting;
  std::vector<event> events;
  std::int64_t max_active;
  std::int64_t max_waiting;
  std::int64_t wait_deadline_ns;
};

// One count per status (every logged event, including ones that fell out of
// the ring) plus releases refused as unbalanced.
struct counters {
  std::uint64_t admitted = 0;
  std::uint64_t queued = 0;
  std::uint64_t promoted = 0;
  std::uint64_t released = 0;
  std::uint64_t queue_full = 0;
  std::uint64_t wait_timeout = 0;
  std::uint64_t wait_cancelled = 0;
  std::uint64_t unbalanced_release = 0;

  // One more event of status `st`.
  void add(status st) noexcept {
    switch (st) {
      case status::admitted: ++admitted; break;
      case status::queued: ++queued; break;
      case status::promoted: ++promoted; break;
      case status::released: ++released; break;
      case status::queue_full: ++queue_full; break;
      case status::wait_timeout: ++wait_timeout; break;
      case status::wait_cancelled: ++wait_cancelled; break;
    }
  }

  friend bool operator==(const counters&, const counters&) = default;
};

enum class acquire_outcome : std::uint8_t { admitted, queued, queue_full };
std::string_view to_string(acquire_outcome o) noexcept;

struct acquire_result {
  acquire_outcome outcome;
  std::int64_t deadline_ns;  // when queued: now_ns + wait_deadline_ns; otherwise 0
};

struct release_result {
  bool ok;                            // false: unbalanced release; nothing changed, counted
  std::optional<ticket_id> promoted;  // the oldest waiter, now handed over and unclaimed
};

enum class leave_outcome : std::uint8_t {
  removed,            // it was still waiting and left the queue
  handover_released,  // promotion had won; its handed-over lease was released
  not_waiting,        // claimed, unknown or already gone: nothing happened
};
std::string_view to_string(leave_outcome o) noexcept;

struct leave_result {
  leave_outcome outcome;
  std::optional<ticket_id> promoted;  // releasing a handed-over lease may promote the next waiter
};

class fifo_gate {
 public:
  // Validates (throws config_error).
  explicit fifo_gate(config cfg);

  // A new request. The ticket must not be waiting or handed over already.
  acquire_result acquire(ticket_id ticket, std::int64_t now_ns);

  // One active lease ends. With active <= 0 it is unbalanced: ok = false,
  // counted, nothing logged. Otherwise logs `released`, then hands the slot to
  // the oldest waiter, if any, and logs `promoted`.
  release_result release(std::int64_t now_ns);

  // The promoted ticket's caller has taken its lease; from now on expire and
  // cancel of it are not_waiting and the lease ends only through release.
  // Returns false (and changes nothing) if the ticket was not handed over and
  // unclaimed.
  bool claim(ticket_id ticket, std::int64_t now_ns);

  // The ticket's wait deadline passed (now_ns must be at or after it while
  // the ticket still waits). Logs `wait_timeout` unless not_waiting.
  leave_result expire(ticket_id ticket, std::int64_t now_ns);

  // The ticket's caller stopped waiting. Logs `wait_cancelled` unless
  // not_waiting.
  leave_result cancel(ticket_id ticket, std::int64_t now_ns);

  // Expires the oldest waiter if its deadline is <= now_ns and returns it.
  std::optional<ticket_id> expire_one_due(std::int64_t now_ns);

  // Expires every waiter whose deadline is <= now_ns, oldest first, calling
  // on_expired(ticket_id) after each. Returns how many expired. The callback
  // may call back into the gate.
  template <class F>
  std::size_t expire_due(std::int64_t now_ns, F&& on_expired) {
    std::size_t expired = 0;
    while (const std::optional<ticket_id> t = expire_one_due(now_ns)) {
      ++expired;
      on_expired(*t);
    }
    return expired;
  }

  std::int64_t active() const noexcept { return active_; }
  std::int64_t waiting() const noexcept { return waiters_.size(); }
  // Earliest deadline of a ticket still waiting (the queue's front).
  std::optional<std::int64_t> next_deadline_ns() const noexcept;
  bool is_waiting(ticket_id ticket) const noexcept;
  bool is_handed_over(ticket_id ticket) const noexcept;
  std::int64_t handed_over() const noexcept { return handed_over_; }

  snapshot snap() const;
  const counters& totals() const noexcept { return totals_; }
  std::uint64_t last_order() const noexcept { return order_; }
  // The latest time any input carried.
  std::int64_t now_ns() const noexcept { return now_ns_; }
  const config& cfg() const noexcept { return cfg_; }
  // At most one sink; nullptr detaches it.
  void set_event_sink(event_sink* sink) noexcept { sink_ = sink; }

 private:
  // Index values: a waiter's node id, or this marker for a ticket whose lease
  // was handed over and not yet claimed.
  static constexpr ticket_index::value_type handed_over_mark = 0xFFFF'FFFEu;
  static_assert(handed_over_mark >= waiter_queue::max_node_count);

  void advance_to(std::int64_t now_ns);
  void log(status st, ticket_id ticket);
  // Ends one active lease (active_ > 0) and promotes the oldest waiter.
  std::optional<ticket_id> release_one(ticket_id ticket);
  leave_result leave(ticket_id ticket, std::int64_t now_ns, status st);
  void check_invariants() const;

  config cfg_;
  bool checked_;  // invariant assertions on: the real gate only
  std::int64_t now_ns_ = 0;
  std::int64_t active_ = 0;
  std::int64_t handed_over_ = 0;
  waiter_queue waiters_;
  ticket_index index_;  // waiting and handed-over tickets only
  counters totals_;
  std::uint64_t order_ = 0;
  event_ring log_;
  event_sink* sink_ = nullptr;
};

}  // namespace admit::fifo
