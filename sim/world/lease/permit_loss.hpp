// permit_loss: what the lease world remembers of a permit, so that a
// violation can say why a connection at the portal had none.
//
// A permit's story has a few facts (facts.hpp), each published where it
// happens and only then (so the hot path publishes a handful of integers per
// grant and nothing per step): when the server granted it and last kept it
// renewed (server_side), when its client gave up waiting at the portal (the
// portal), and, rarely, how it left the set while its work went on: reaped
// by a script, gone with the key's expiry, forgotten by a restart, lost in a
// failover (server_side, fault_injector). The causes (lease_causes) keep the
// record of each worker's current item from them, and a copy for a
// connection the worker leaves open (a client timeout, a crash). The
// sentence is made only when a violation asks for it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "sim/kernel/vtime.hpp"

namespace admit::world::lease {

using sim::vtime_ns;

struct permit_loss {
  enum class how : std::uint8_t {
    reaped,            // a script removed it (an acquire, or a renew that reaps)
    expired_with_key,  // the gate key's PEXPIRE deadline passed, and the key went with every permit
    restart,           // a Redis restart came back without it
    failover,          // the promoted replica had never seen it
    setup,             // the protocol's set-up calls, run again after a restart or failover, removed it
  };
  how by = how::reaped;
  vtime_ns at_ns = 0;
  // how::reaped: the worker whose script reaped it, and what the script
  // compared: the permit's score and the script's now (ms since the Unix
  // epoch; the caller's clock for `seed`, the server's otherwise), and
  // whether that now was the caller's clock.
  std::size_t reaper = 0;
  bool reaper_clock = false;
  bool scored = false;  // score_ms and now_ms are known (a built-in variant's reaping)
  std::int64_t score_ms = 0;
  std::int64_t now_ms = 0;
  vtime_ns reaper_offset_ns = 0;  // the reaper's clock against true time, then
  vtime_ns server_offset_ns = 0;  // the server's clock against true time, then
  // The holder's pause last seen, if it paused (renewals wait it out).
  vtime_ns paused_from_ns = -1;
  vtime_ns paused_until_ns = -1;
  // how::restart: whether an AOF copy was recovered; how::failover: the replica's lag.
  bool aof = false;
  vtime_ns replication_lag_ns = 0;
  // Quorum runs: the node whose loss took the permit below a majority (-1: a one-node run).
  std::int64_t node = -1;
};

// A restart or failover that kept a permit but brought back an older score:
// a renewal the server had kept was lost with the state (a replica that had
// not received it, an AOF that had not written it).
struct permit_rollback {
  permit_loss::how by = permit_loss::how::failover;  // restart or failover
  vtime_ns at_ns = 0;
  bool aof = false;                  // restart: an AOF copy was recovered
  vtime_ns replication_lag_ns = 0;   // failover: the replica's lag
  double kept_score = 0;             // the score the node came back with
  double lost_score = 0;             // the score the renewal had set
};

// The permit of one item, as far as the world knows it.
struct permit_record {
  std::uint64_t number = 0;       // the item (its token is "w<worker>-<number>")
  vtime_ns service_ns = 0;        // the item's request, at the portal
  vtime_ns granted_ns = -1;       // when the server granted it (the first grant, for a token granted twice)
  vtime_ns renewed_ns = -1;       // the last renewal the server kept
  vtime_ns server_offset_ns = 0;  // the server's clock against true time at the grant
  vtime_ns clock_step_ns = 0;     // the holder's clock steps at the grant (its offset then, with the spec)
  std::int64_t counted = -1;      // check_then_add: the live members its count saw
  vtime_ns client_left_ns = -1;   // its client stopped waiting at the portal (a read timeout, or it gave up)
  vtime_ns crashed_ns = -1;       // its worker crashed while the connection was open
  std::optional<permit_loss> loss;  // the last way it left the set while its work went on
  std::optional<permit_rollback> rollback;  // the last renewal a restart or failover took back

  // When the lease last started: its grant, or its last renewal.
  vtime_ns lease_start_ns() const noexcept { return renewed_ns > granted_ns ? renewed_ns : granted_ns; }
};

// One connection asked of the portal: whose, for which item, under which permit.
struct portal_connection {
  bool open = false;
  std::size_t worker = 0;
  std::uint64_t number = 0;
  vtime_ns opened_ns = 0;
  const permit_record* attached = nullptr;  // the worker's record while it is on this item
  bool under_permit = true;                 // false: sent without one (mutation fail_open)
  permit_record left;                       // the record as the worker left it (attached == nullptr)

  const permit_record& permit() const noexcept { return attached ? *attached : left; }
};

// What filled the portal when an attempt was refused (reject_429): the
// connections no permit in the set covered then, as they were, and how many
// a permit did cover. Copies, so that the sentences can be made later, only
// if a violation asks (a refused attempt is still counted for a while).
struct refusal_snapshot {
  std::vector<portal_connection> uncovered;
  std::int64_t covered = 0;
};

}  // namespace admit::world::lease
