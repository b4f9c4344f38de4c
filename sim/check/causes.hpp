// causes: the one table of why an invariant can break, in the domain's words.
//
// A world names the cause of each violation it reports (check::cause, a row
// of this table and one sentence with the figures) from what it knows: the
// permit that left the set and what removed it, the lease released early,
// the gate that forgot its leases. The report groups an invariant's
// violations by cause and, for each, names the designs of the catalogue that
// address it. A world names a kind through `cause_kind("...")`, which does not
// compile for a kind missing from the table, and the report asserts the same
// of every kind it reads, so the table and the worlds cannot drift apart.
//
// A design is something a user picks in a scenario: a lease variant (`seed`,
// `server_time`, `renewal`, `fencing`, `fair`), a protocol's client policy
// (`on_client_timeout: hold_to_end`), a protocol of scenarios/designs/
// (`restart_grace`), the portal's setting (`on_client_close: free_slot`),
// Redis persistence (`persistence: aof_everysec`), the gate's kind (`kind: lease`). A design is named only
// where a catalogue run shows it removing the cause (docs/report.md,
// "Causes", names the scenario); "" where no shipped design does. The
// mutants' causes (docs/mutants.md) name none: the real code is the remedy.
#pragma once

#include <cstddef>
#include <string_view>

namespace admit::check {

struct cause_info {
  const char* kind;
  const char* title;    // what happened, for a report's per-cause table
  const char* designs;  // the designs of the catalogue that address it, ", "-separated ("" when none does)
};

inline constexpr cause_info cause_table[] = {
    {"unexplained", "no cause the world could name", ""},

    // --- the lease world: why a connection at the portal had no permit in the set ---
    {"caller_clock_skew",
     "a caller's clock, passed to the acquire as its now, reaped a lease still in use (or kept one past its lease)",
     "server_time, renewal, fencing, fair"},
    {"stale_caller_now",
     "an acquire carried its caller's now, taken when the call was sent, and ran later (a paused Redis, a slow link): its "
     "scores or its reaping lagged the server's clock",
     "server_time, renewal, fencing"},
    {"server_clock_jump", "the Redis server's clock jumped forward and aged leases still in use", ""},
    {"lease_outlived", "a request outlasted its lease, and nothing renewed it", "renewal"},
    {"holder_paused",
     "a holder paused (a stop-the-world pause) past its lease: its permit ran out though its request was shorter than the "
     "lease", ""},
    {"renewal_missed", "a renewing holder's lease ran out between two renewals (a pause, too little slack)", ""},
    {"crashed_holder", "a holder crashed with its request at the portal, and its lease ran out under the request", ""},
    {"client_timeout_release", "a client timeout released the permit while the connection stayed open at the portal",
     "on_client_timeout: hold_to_end, on_client_close: free_slot"},
    {"restart_forgot", "a Redis restart without persistence forgot the permit",
     "persistence: aof_everysec, persistence: aof_always, restart_grace, process_grace"},
    {"setup_removed",
     "the protocol's set-up, run again after a restart or failover, removed a permit its holder still used", ""},
    {"quorum_restart_forgot",
     "a node of a quorum restarted without persistence and forgot the permit, leaving fewer than a majority holding it: "
     "the restarted node can join a second majority",
     "quorum_grace"},
    {"quorum_spread",
     "a quorum over several nodes with a limit above 1: the nodes' sets differed, and more tokens than the limit each "
     "held a majority while every node stayed within its limit",
     ""},
    {"restart_lost_last_second",
     "a Redis restart lost a permit granted (or a renewal kept) after the last second the AOF had written",
     "persistence: aof_always, process_grace"},
    {"failover_unreplicated", "a failover promoted a replica that had not received the grant (or a renewal) yet",
     "wait_ack, process_grace"},
    {"limit_above_cap", "the lease limit is above the portal's cap", ""},
    {"failed_open", "a client that could not reach Redis sent its request without a permit (mutation fail_open)", ""},

    // --- the lease world: the set itself, grants, reaping, liveness ---
    {"check_then_add", "the acquire counted, then added in a second round trip, and others added in between (mutation check_then_add)", ""},
    {"protocol_over_limit", "the protocol's script left more live permits in the set than the limit",
     "seed, server_time, renewal, fencing, fair"},
    {"acquire_does_not_reap", "the acquire left a permit past its lease in the set",
     "seed, server_time, renewal, fencing, fair"},
    {"no_worker_left", "items were still queued, but every worker had crashed for good or stopped taking work", ""},
    {"fleet_exhausted",
     "every worker had exited after an acquire timeout (fleet.on_acquire_timeout requeue_and_exit), leaving items in the queue",
     "fleet.on_acquire_timeout: defer"},
    {"permits_never_expire", "permits left in the set by holders that never released them, under a key that never expires",
     "seed, server_time, renewal, fencing, fair"},
    {"work_outstanding", "work still queued or in progress at checks.liveness_horizon", ""},
    {"permit_lost", "a command left fewer permits free and held than the limit: capacity lost for good", ""},
    {"permit_surplus", "a command left more permits free and held than the limit: room to grant above it", ""},
    {"never_granted", "work arrived, and no acquire was ever granted (every reply read as a refusal, or none came)", ""},
    {"refused_with_free_capacity",
     "acquires were refused for longer than the progress bound while fewer permits than the limit were live", ""},

    // --- the FIFO world ---
    {"crashed_process_work", "work a crashed process started still ran at the portal while the restarted process's gate admitted anew",
     "kind: lease"},
    {"gate_caps_above_portal", "the gates' caps add up to more than the portal's cap", ""},
    {"mutant_release_before_work_ends", "the handler freed its lease as soon as the work started (mutation release_before_work_ends)", ""},
    {"mutant_admit_off_by_one", "the gate admitted while active <= max_active (mutation admit_off_by_one)", ""},
    {"mutant_newcomers_jump_queue", "a release left the slot free for a newcomer past older waiters (mutation newcomers_jump_queue)", ""},
    {"mutant_leak_handover_on_cancel", "a lease handed to a waiter that was cancelled was never released (mutation leak_handover_on_cancel)", ""},
    {"mutant_double_release_on_timeout", "a lease handed to a waiter whose deadline passed was released twice (mutation double_release_on_timeout)", ""},
    {"own_core", "the gate core under test, a core of its user's (sim/world/own_gate.hpp), broke an invariant or its contract", ""},
};

// The row of `kind`, or nullptr.
constexpr const cause_info* find_cause(std::string_view kind) {
  for (const auto& row : cause_table)
    if (kind == row.kind) return &row;
  return nullptr;
}

// Whether `kind` is a row of the table. Written without find_cause's
// pointer: a sanitizer build does not take a comparison of a pointer into the
// table as a constant expression.
constexpr bool is_cause_kind(std::string_view kind) {
  for (const auto& row : cause_table)
    if (kind == row.kind) return true;
  return false;
}

// `kind`, checked at compile time to be a row of the table.
consteval const char* cause_kind(const char* kind) {
  if (!is_cause_kind(kind)) throw "a cause's kind is a row of check::cause_table";
  return kind;
}

}  // namespace admit::check
