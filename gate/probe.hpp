// probe: the one table of coverage probes, and the macro a site hits one with.
//
// A probe counts how often a run went down a rare path: a waiter that timed
// out, an acquire refused at the limit, a key that expired as a command read
// it, a script that ran out of steps. The table below is every probe of
// every part, in report order: the FIFO world's, the FIFO core's
// (gate/fifo), the lease world's, the replica's and the Lua engine's
// (gate/redis); each row names the worlds whose runs report it.
//
// A site writes ADMIT_PROBE(name). It counts into the probe::scope the
// current thread's run installed (a world installs one for the length of its
// run, and freezes it when the run ends, so that its teardown counts
// nothing); with no scope, as in a unit test of a core or a real-Redis
// agreement test, it counts nowhere. Each run runs on one thread, so the
// counts need no atomics, and runs on other threads never share a scope.
//
// A run's record lists its world's probes in table order with their counts
// (probes_of), and explore's coverage counts the seeds that hit each
// (docs/explore.md, "Coverage"; docs/report.md lists them).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace admit::probe {

enum class site : std::uint8_t {
  // The FIFO world (sim/world/fifo): what its monitors see of the gates and the requests.
  fifo_queued,
  fifo_queue_full,
  fifo_wait_timeout,
  fifo_promoted,
  fifo_promotion_beat_deadline,
  fifo_promotion_beat_cancel,
  fifo_cancelled_waiting,
  fifo_cancelled_working,
  fifo_client_gave_up_first,
  fifo_worker_failed_starting,
  fifo_event_log_wrapped,
  // The FIFO core (gate/fifo/fifo_gate.cpp).
  core_handover_released_promoted,
  core_unbalanced_release,
  // The lease world (sim/world/lease): its monitors.
  lease_refused_at_limit,
  lease_granted_after_backoff,
  lease_deferred,
  lease_deferred_unreachable,
  lease_lost_reply,
  lease_reaped_live,
  lease_failed_release,
  lease_renewal_lost,
  lease_crash_while_holding,
  lease_portal_429,
  lease_client_read_timeout,
  lease_regranted,
  // The replica (gate/redis/replica.cpp).
  replica_key_expired_on_read,
  replica_range_removed,
  replica_wrong_type,
  // The Lua engine (gate/redis/lua_engine.cpp).
  lua_step_limit,
  lua_call_error_raised,
  lua_pcall_error_returned,
  lua_noscript,
  count
};

inline constexpr std::size_t site_count = static_cast<std::size_t>(site::count);

// The worlds a probe is reported in.
inline constexpr std::uint8_t in_fifo = 1;
inline constexpr std::uint8_t in_lease = 2;

struct row {
  site s;
  std::string_view name;  // as reports and coverage tables print it
  std::uint8_t worlds;
};

inline constexpr std::array<row, site_count> table = {{
    {site::fifo_queued, "queued", in_fifo},
    {site::fifo_queue_full, "queue_full", in_fifo},
    {site::fifo_wait_timeout, "wait_timeout", in_fifo},
    {site::fifo_promoted, "promoted", in_fifo},
    {site::fifo_promotion_beat_deadline, "promotion beat the deadline", in_fifo},
    {site::fifo_promotion_beat_cancel, "promotion beat a cancellation", in_fifo},
    {site::fifo_cancelled_waiting, "cancelled while waiting", in_fifo},
    {site::fifo_cancelled_working, "cancelled while working (lease held to the end)", in_fifo},
    {site::fifo_client_gave_up_first, "client gave up before the answer", in_fifo},
    {site::fifo_worker_failed_starting, "worker failed while starting", in_fifo},
    {site::fifo_event_log_wrapped, "event log wrapped around", in_fifo},
    {site::core_handover_released_promoted, "core: a handed-over lease, released as its ticket left, promoted the next waiter", in_fifo},
    {site::core_unbalanced_release, "core: a release with no lease active, refused", in_fifo},
    {site::lease_refused_at_limit, "acquire refused at the limit", in_lease},
    {site::lease_granted_after_backoff, "granted after backing off", in_lease},
    {site::lease_deferred, "item deferred at the acquire timeout", in_lease},
    {site::lease_deferred_unreachable, "item deferred: Redis unreachable", in_lease},
    {site::lease_lost_reply, "a script ran but its reply was lost", in_lease},
    {site::lease_reaped_live, "lease reaped while its holder worked", in_lease},
    {site::lease_failed_release, "release failed (expiry is the backstop)", in_lease},
    {site::lease_renewal_lost, "renewal found the lease gone", in_lease},
    {site::lease_crash_while_holding, "crash while holding a permit", in_lease},
    {site::lease_portal_429, "portal answered 429", in_lease},
    {site::lease_client_read_timeout, "client read timeout at the portal", in_lease},
    {site::lease_regranted, "a held token granted again (no second permit)", in_lease},
    {site::replica_key_expired_on_read, "replica: a key expired as a command read it", in_lease},
    {site::replica_range_removed, "replica: ZREMRANGEBYSCORE removed members", in_lease},
    {site::replica_wrong_type, "replica: a command met a key of another type (WRONGTYPE)", in_lease},
    {site::lua_step_limit, "lua: a script ran out of steps", in_lease},
    {site::lua_call_error_raised, "lua: redis.call raised a command's error", in_lease},
    {site::lua_pcall_error_returned, "lua: redis.pcall returned a command's error", in_lease},
    {site::lua_noscript, "lua: EVALSHA of a script not in the cache (NOSCRIPT)", in_lease},
}};

constexpr bool table_in_site_order() {
  for (std::size_t i = 0; i < site_count; ++i)
    if (static_cast<std::size_t>(table[i].s) != i || table[i].name.empty() || table[i].worlds == 0) return false;
  return true;
}
static_assert(table_in_site_order(), "one row a site, in the enum's order, each named and in some world");

struct counts {
  std::array<std::uint64_t, site_count> n{};
};

// The counts of the run on this thread, or null.
inline thread_local counts* current = nullptr;

inline void hit(site s) noexcept {
  if (counts* c = current) ++c->n[static_cast<std::size_t>(s)];
}

// A run's counts, current on this thread from construction until freeze() or destruction.
class scope {
 public:
  scope() noexcept : prev_(current) { current = &counts_; }
  ~scope() {
    if (current == &counts_) current = prev_;
  }
  scope(const scope&) = delete;
  scope& operator=(const scope&) = delete;

  // The run ended: later hits (its teardown) count elsewhere, or nowhere.
  void freeze() noexcept {
    if (current == &counts_) current = prev_;
  }
  const counts& get() const noexcept { return counts_; }

 private:
  counts counts_;
  counts* prev_;
};

}  // namespace admit::probe

#define ADMIT_PROBE(name) ::admit::probe::hit(::admit::probe::site::name)
