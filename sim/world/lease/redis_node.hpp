// redis_node: the lease world's Redis server.
//
// The in-memory replica runs the protocol's commands (its scripts through the
// Lua engine) atomically on the server's own clock: the epoch plus virtual time plus an offset that clock
// steps move. Persistence is none, AOF every second (a restart keeps what
// was written before the last whole second of activity), or AOF always (a
// restart keeps every write). A failover promotes
// an asynchronously replicated follower that has applied every write older
// than its lag and loses the newer ones (kept in the replication log until
// then); WAIT answers once the follower has applied what the primary wrote
// before it. A pause makes the server run what reaches it late; a restart or a
// failover takes it down for a while (the network then loses every call).
//
// Besides running scripts the node answers what the monitors ask of the key
// at one instant (who is a member, which permits an acquire will reap).
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "gate/redis/lease_scripts.hpp"
#include "gate/redis/lua_engine.hpp"
#include "gate/redis/protocol.hpp"
#include "gate/redis/replica.hpp"
#include "gate/redis/write_effects.hpp"
#include "sim/kernel/vtime.hpp"
#include "sim/scenario/scenario.hpp"
#include "sim/world/lease_world.hpp"

namespace admit::world::lease {

using sim::vtime_ns;

class redis_node {
 private:
  // A view of the holders as a sorted set, rebuilt only when what it is made
  // of changed: a pure function's memo (the source's content, compared in
  // full, and the names' version), so a view is always what a rebuild would give.
  struct hash_memo {
    std::vector<redis::hash_value::field> source;  // the fields the set was made of
    redis::sorted_set set;
  };
  struct named_memo {
    std::vector<redis::sorted_set::entry> source;  // the entries the set was made of
    std::uint64_t names_version = 0;                // names_version_ when it was made
    bool made = false;
    redis::sorted_set set;
  };
  // A hash's fields as a sorted set (a value that is no number scores +inf: a
  // permit the checkers cannot see expire). nullptr for none.
  static const redis::sorted_set* as_set(const redis::hash_value* h, hash_memo& memo);
  redis::holders_shape shape_ = redis::holders_shape::sorted_set;
  // A hash's holders as sets, one per view; mutable: an observer's view of a hash is built when asked.
  mutable hash_memo view_, expiring_, peeked_;
  // Permit ids (a protocol whose acquire answers one): each view names a member by the token it was granted to.
  const redis::sorted_set* named(const redis::sorted_set* s, named_memo& memo) const;
  bool permit_ids_ = false;
  std::map<std::string, std::string, std::less<>> token_of_permit_;
  std::map<std::string, std::string, std::less<>> permit_of_token_;
  std::uint64_t names_version_ = 0;  // counts the changes of the two maps above
  mutable named_memo named_view_, named_expiring_, named_peeked_;

 public:
  // What the fault schedule will ask of the node decides what it keeps: an
  // AOF copy only if a restart recovers one, a replication log only if a
  // failover reads it.
  explicit redis_node(std::span<const scenario::fault_spec> faults);

  std::int64_t server_now_us(vtime_ns now) const {
    return (lease_world_epoch_ms * 1'000'000 + now + offset_ns_) / 1'000;
  }
  bool down(vtime_ns now) const noexcept { return now < down_until_ns_; }
  vtime_ns paused_until() const noexcept { return paused_until_ns_; }

  // check_then_add's second round trip (the mutant's client adds what its count allowed): ZADD of `token`
  // at `score_ms` and PEXPIRE of the key, as two commands. Returns the members after them.
  std::int64_t add_after_check(vtime_ns now, std::int64_t now_us, std::string_view key, std::string_view token,
                               std::int64_t score_ms, std::int64_t lease_ms);
  // Where the permits live: a sorted set (the default, and every built-in
  // variant's), or a hash whose fields are the tokens and whose values are
  // the scores (a protocol's holders.kind "hash"). The views below read
  // either as a sorted set; a key of another type (a protocol's holders that
  // name the wrong key) reads as no permits, never as an error of the
  // world's.
  void set_holders_shape(redis::holders_shape shape) noexcept { shape_ = shape; }

  // The gate key as a read command sees it at `now_us` (an expired key is
  // dropped first, as the next command would): valid until the next command
  // (and, for a hash, until the next call of set_view).
  const redis::sorted_set* set_view(std::string_view key, std::int64_t now_us) {
    const redis::sorted_set* s = nullptr;
    if (shape_ == redis::holders_shape::hash) [[unlikely]] {
      try {
        s = as_set(primary_.hash_view(key, now_us), view_);
      } catch (const redis::command_error&) {
        return nullptr;  // WRONGTYPE: the holders key holds something else
      }
    } else {
      try {
        s = primary_.zset_view(key, now_us);
      } catch (const redis::command_error&) {
        return nullptr;  // WRONGTYPE: the holders key holds something else
      }
    }
    if (permit_ids_) [[unlikely]] return named(s, named_view_);
    return s;
  }
  // The gate key's set if it is past its deadline and not yet dropped (the
  // next command drops it): the permits its expiry takes.
  const redis::sorted_set* expiring_set(std::string_view key, std::int64_t now_us) const {
    const redis::sorted_set* s = shape_ == redis::holders_shape::hash
                                     ? as_set(primary_.peek_expired<redis::hash_value>(key, now_us), expiring_)
                                     : primary_.peek_expired<redis::sorted_set>(key, now_us);
    if (permit_ids_) [[unlikely]] return named(s, named_expiring_);
    return s;
  }
  // The gate key's live set at `now_us`, changing nothing (for the causes of a violation).
  const redis::sorted_set* peek_set(std::string_view key, std::int64_t now_us, std::int64_t* deadline_ms = nullptr) const {
    const redis::sorted_set* s = shape_ == redis::holders_shape::hash
                                     ? as_set(primary_.peek<redis::hash_value>(key, now_us, deadline_ms), peeked_)
                                     : primary_.peek<redis::sorted_set>(key, now_us, deadline_ms);
    if (permit_ids_) [[unlikely]] return named(s, named_peeked_);
    return s;
  }

  // --- permit ids -------------------------------------------------------------
  // A protocol whose acquire answers a permit id (its rule permit_id) keeps
  // its holders by those ids, which the world's checkers cannot read. The
  // world names them: when an acquire for a token is answered an id, that
  // id is the token's permit (the token's earlier one, if any, no longer
  // is: its client will only ever release the last). The views above show
  // each member by the token its id names, and any other member as
  // "permit:<id>" (a permit no current grant names: a grant whose reply was
  // lost, then retried; it counts, and no worker holds it). The names
  // outlive a restart: they are the world's bookkeeping, not the server's.
  // Before the first command.
  void name_permits() noexcept { permit_ids_ = true; }
  bool names_permits() const noexcept { return permit_ids_; }
  // The token the permit `id` names now, if any.
  const std::string* token_of_permit(std::string_view id) const {
    const auto it = token_of_permit_.find(id);
    return it == token_of_permit_.end() ? nullptr : &it->second;
  }
  // The acquire of `token` was answered the permit `id`.
  void name_permit(std::string_view id, std::string_view token);

  // The integer a string key holds at `now_us` (a protocol's counter of free
  // permits), or nullopt when it is missing, of another type, or no integer.
  std::optional<std::int64_t> peek_integer(std::string_view key, std::int64_t now_us) const;
  // The server's clock against true time.
  vtime_ns server_offset_ns() const noexcept { return offset_ns_; }

  // --- commands (a protocol's scripts through the Lua engine) ----------------
  // The AOF copy and the follower's replication for a command at `now`, and
  // the command itself on the primary: the engine's RESP answer. A command
  // that a failover could lose is logged for the follower after it ran, as
  // the writes it made (Redis 7 replicates a script by its effects: the
  // follower applies them and never runs the script).
  redis::reply run_command(vtime_ns now, std::int64_t now_us, std::span<const std::string> argv);
  // SCRIPT LOAD of each of the protocol's scripts, as a deployment loads them
  // before its clients start (a restart or failover loses them again).
  void deploy(const redis::protocol& proto);
  // Where the primary's PUBLISH delivers (the world's subscribed clients), before the first command.
  void set_pubsub(redis::pubsub* bus) noexcept { bus_ = bus; }
  // Which of the gate's nodes this is (0 unless the gate has several): it names the processes' run ids.
  void set_index(std::size_t index);
  // The process serving as the primary now (what INFO server reports).
  const redis::server_facts& primary_process() const noexcept { return primary_facts_; }
  // Whether the engines may run a shipped script's C++ twin (before the first command).
  void set_native_twins(bool on) noexcept { native_twins_ = on; }
  // The engines' limits (before the first command). A restart or a failover empties the script cache.
  void set_script_limits(const redis::script_limits& limits) { limits_ = limits; }
  // Why the last failed script failed.
  const redis::script_error_info& last_script_error() const;
  // The Lua steps of the last script call (the engine's count).
  std::uint64_t last_script_steps() const;

  // --- WAIT ------------------------------------------------------------------
  // The follower applies each write one replication lag after the primary
  // made it; the lag is the largest `replication_lag` of the scenario's
  // redis_failover faults (0 without one: every write is applied as it is
  // made). A WAIT that reaches the primary at `now` answers when the follower
  // has applied every write made up to `now` (acks 1), or at its timeout if
  // that comes first (acks 0). A failover applies every write older than its
  // own lag, never more than this one: a write a WAIT reported as acked is on
  // the promoted follower.
  struct wait_outcome {
    vtime_ns answer_at_ns = 0;
    std::int64_t acks = 0;
  };
  wait_outcome wait_for_replica(vtime_ns now, vtime_ns timeout_ns) const;
  vtime_ns replication_lag_ns() const noexcept { return max_lag_ns_; }
  // Bumped by every restart and failover: a WAIT blocked across one is lost.
  std::uint64_t generation() const noexcept { return generation_; }

  // Faults.
  void restart(scenario::persistence persist, vtime_ns now, vtime_ns down_ns);
  void failover(vtime_ns replication_lag_ns, vtime_ns now, vtime_ns down_ns);
  void pause_until(vtime_ns until) noexcept { paused_until_ns_ = until; }
  void step_clock(vtime_ns step_ns) noexcept { offset_ns_ += step_ns; }

 private:
  // A command the primary ran: the writes it made (none for a read, which is logged all the same: WAIT
  // waits for it).
  struct logged_op {
    vtime_ns at_ns;
    std::int64_t server_now_us;
    redis::write_effects effects{};
  };
  // The engines over the primary and the follower, made at a protocol's first command.
  redis::script_engine& engine_of(redis::replica& r);
  void aof_tick(vtime_ns now);

  // Applies to the follower every logged write at or before `upto`.
  void replicate_upto(vtime_ns upto);

  redis::replica primary_;
  redis::replica aof_copy_;  // read only by a restart with AOF persistence (keep_aof_)
  bool keep_aof_ = false;
  vtime_ns aof_second_ = -1;
  redis::replica follower_;
  // The two processes. Both start with the run (uptime 0 at 00:00:00); a
  // restart starts a new primary process when the node comes back up; a
  // failover makes the follower's process the primary and starts a new
  // follower process (the old primary, back as a replica) when it comes back.
  std::size_t index_ = 0;
  std::uint64_t processes_ = 2;
  redis::server_facts primary_facts_;
  redis::server_facts follower_facts_;
  std::deque<logged_op> log_;
  vtime_ns max_lag_ns_ = 0;
  std::uint64_t generation_ = 0;
  vtime_ns down_until_ns_ = 0;
  vtime_ns paused_until_ns_ = 0;
  vtime_ns offset_ns_ = 0;
  redis::script_limits limits_;
  redis::pubsub* bus_ = nullptr;
  bool native_twins_ = true;
  std::unique_ptr<redis::script_engine> primary_engine_;
  std::unique_ptr<redis::script_engine> follower_engine_;
};

}  // namespace admit::world::lease
