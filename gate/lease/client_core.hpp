// client_core: the lease client's logic, sans IO.
//
// Model. A lease client runs operations on a permit: acquire (poll until
// granted, backing off between attempts, until the acquire timeout), release
// (once, not retried: the lease's expiry is the backstop) and renew (once).
// Each operation is a `client_core::op`, a small state machine. The driver
// starts it and then feeds it what happened: the reply to the call it asked
// for (or that the call was lost: no reply came, so the call may or may not
// have run), or that the wait it asked for is over. Each input carries the
// client's clocks as the driver read them at that instant (`moment`: the
// monotonic clock, which deadlines and backoff run on, and the caller's wall
// clock, which {now_ms} sends). Each answer is the next step: send this
// command, wait until
// this instant (listening on a channel when the protocol has `wake_on`), or
// done with an outcome. An operation asks for one thing at a time; several
// operations of one client may run at once (a renewal while the release
// starts), each with its own state.
//
// The core reads no clock, arms no timer and touches no socket; the only
// thing it draws on is the backoff jitter the driver gives it at
// construction (a deterministic source in the simulator). The drivers are
// gate/asio/lease_client.hpp, on the simulator's executor (sim/world/lease)
// or on a real io_context over a real Redis (gate/asio/resp_transport.hpp).
//
// The acquire, in full (the seed document's design, with the protocol
// format's options):
//   attempt   the acquire call (a protocol's command: EVALSHA first; a
//             NOSCRIPT answer is followed by one EVAL of the body with the
//             same values, as script clients do). With a quorum rule the
//             attempt is the acquire on every node in turn, and the permit
//             counts when quorum_holds; a round that does not hold releases
//             on every node. With `acknowledge`, a grant counts only after
//             WAIT replicas timeout_ms answers >= replicas; fewer (or an
//             error, or a lost call) releases the permit once and counts the
//             attempt as not granted.
//   lost      an attempt whose reply never came is retried as any other
//             under the same token, or (on_lost_acquire "new_token") under
//             a fresh one (the given token + ".<n>": the grant reports it),
//             or (on_lost_acquire "give_up") ends the acquire at once as
//             unreachable.
//   give up   once an attempt that did not grant ends at or past the
//             deadline (now + acquire_timeout at the start, on the monotonic
//             clock, or on the caller's wall clock with deadline_on_wall_clock,
//             so that a step of it moves the deadline): acquire_timeout,
//             or unreachable when that attempt could not reach Redis (a lost
//             call or an error reply; for a quorum, fewer than a quorum of
//             nodes answered). With on_give_up "release" the release runs
//             once first (every node for a quorum), its outcome not reported.
//   backoff   otherwise wait the policy's ceiling for this attempt (full
//             jitter draws in [0, ceiling]), cut to end at the deadline (as
//             far off as the deadline's clock reads it), so that the last
//             attempt comes at the deadline.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "gate/admit_assert.hpp"
#include "gate/lease/client_config.hpp"
#include "gate/redis/protocol.hpp"
#include "gate/redis/reply.hpp"

namespace admit::gate {

// The client's clocks at one input, as the driver read them.
struct moment {
  std::int64_t mono_ns = 0;  // monotonic: the acquire deadline, the backoff, a quorum round's elapsed time
  std::int64_t wall_ms = 0;  // the caller's wall clock: a protocol's {now_ms}
};

// How an operation failed.
enum class lease_failure : std::uint8_t {
  none,
  acquire_timeout,  // the acquire gave up: Redis answered, the permit never came
  unreachable,      // Redis could not confirm: an error reply, or (acquire) a lost call at the last attempt
  lost,             // a release whose call was lost (the driver reports that call's own error)
  not_done,         // a set-up call answered, and its rule read the answer as not done
};

// What the driver does next for an operation.
struct lease_step {
  enum class kind : std::uint8_t {
    command,  // send op.command() to node `node` (one_node: the client's only node); then replied()
    wait,     // wait until `until_ns` on the monotonic clock (with `wake`, also until a message on
              // op.wake_channel()); then woke()
    done,     // the operation is over: `failure`, `value`, `attempts`
  };
  static constexpr std::size_t one_node = static_cast<std::size_t>(-1);

  kind k = kind::done;
  std::size_t node = one_node;
  std::int64_t until_ns = 0;
  bool wake = false;
  lease_failure failure = lease_failure::none;
  std::int64_t value = 0;     // done: the grant's value (the fencing number for `fencing`); renew: 1 when kept
  std::int64_t attempts = 0;  // done (acquire): the attempts it made
};

class client_core {
 public:
  // `jitter_ns(ceiling)` draws a full-jitter wait in [0, ceiling].
  client_core(lease_client_config cfg, std::function<std::int64_t(std::int64_t)> jitter_ns);

  const lease_client_config& cfg() const noexcept { return cfg_; }
  // When a holder granted at `granted_ns` first renews.
  std::int64_t first_renewal_ns(std::int64_t granted_ns) const noexcept {
    ADMIT_ASSERT(cfg_.renew_every_ns > 0, "only a client that renews asks when to renew");
    return granted_ns + cfg_.renew_every_ns;
  }
  // When the renewal after the one due at `due_ns`, answered at `now_ns`, is due: renew_every after the
  // answer (fixed delay), or after `due_ns` (fixed rate: a renewal already late is due at once).
  std::int64_t next_renewal_ns(std::int64_t due_ns, std::int64_t now_ns) const noexcept {
    ADMIT_ASSERT(cfg_.renew_every_ns > 0, "only a client that renews asks when to renew");
    ADMIT_ASSERT(now_ns >= due_ns, "a renewal is answered after it was due");
    return cfg_.renew_at_fixed_rate ? due_ns + cfg_.renew_every_ns : now_ns + cfg_.renew_every_ns;
  }

  // setup: the protocol's set-up calls, in order (each script call as EVAL of its body: a deployment may have
  // loaded nothing yet); the first that fails ends it: unreachable (an error reply, a lost call) or not_done.
  enum class op_kind : std::uint8_t { acquire, release, renew, setup };

  // One operation on one token. It keeps a reference to its core, which must outlive it.
  class op {
   public:
    // `nodes`: the nodes a quorum client's transport reaches as the operation starts (1 for any other client).
    op(client_core& core, op_kind kind, std::string token, std::size_t nodes = 1);
    op(const op&) = delete;
    op& operator=(const op&) = delete;

    lease_step start(const moment& m);
    // After a command step: the server's answer, or `lost` (no answer came; `answer` is not read).
    lease_step replied(const moment& m, bool lost, const redis::reply& answer);
    // After a wait step: its time came, or (with `wake`) a message did.
    lease_step woke(const moment& m);

    // The call a command step sends; valid until the next input.
    const command_request& command() const noexcept { return command_; }
    // The channel a wait step with `wake` listens on.
    const std::string& wake_channel() const noexcept { return channel_; }
    // Whether that channel is a shard channel (SSUBSCRIBE) rather than a plain one (SUBSCRIBE).
    bool wake_sharded() const noexcept { return core_.cfg_.proto->client.wake_sharded; }
    // The token the operation calls under now: the one it was given, or (an acquire whose policy is
    // on_lost_acquire "new_token", after a lost attempt) that token with ".<n>" appended, n = 1, 2, ...
    const std::string& token() const noexcept { return token_; }

    // What the last replied() read, for liveness's progress rule (a real run's watch, sim/confirm): an
    // answer to one node's acquire call read by its rule as a grant or a refusal; `none` for anything else
    // (a lost call, an error reply such as NOSCRIPT, a release, WAIT, a quorum's node).
    enum class reading : std::uint8_t { none, granted, refused };
    reading last_reading() const noexcept { return reading_; }

   private:
    enum class phase : std::uint8_t {
      start,
      acquire_call,     // one node's acquire
      acknowledge,      // WAIT after a grant
      unacknowledged,   // the release after too few acknowledgements
      quorum_acquire,   // node_'s acquire of a quorum round
      quorum_release,   // node_'s release after a round that did not hold
      backoff,          // waiting before the next attempt
      give_up_release,  // the release once before giving up (node_ for a quorum)
      release_call,     // a release (node_ for a quorum)
      renew_call,
      setup_call,       // set-up call setup_index_
      done,
    };

    // The operation's call `call` on node `node` (one_node: the only node).
    lease_step call(redis::script_op call, std::size_t node, const moment& m);
    // The answer to the current call, read by its rule: `lost`, or the reply as the client reads it.
    lease_step answered(const moment& m, bool lost, const redis::script_reply& read);
    // An attempt that did not grant ended at `m`.
    lease_step attempt_failed(const moment& m, bool unreachable);
    // The acquire ends with `why` (after its give-up release when the policy has one).
    lease_step give_up(const moment& m, lease_failure why);
    lease_step attempt(const moment& m);
    // How long until the acquire's deadline, on its clock (<= 0: past it).
    std::int64_t until_deadline_ns(const moment& m) const noexcept;
    lease_step finish(lease_failure failure, std::int64_t value = 0);
    void build_command(const redis::protocol_call& c, bool by_sha);
    // The values a protocol call fills its templates with.
    redis::call_values values(std::int64_t wall_ms) const;
    void advance_clock(const moment& m);

    client_core& core_;
    op_kind kind_;
    std::size_t nodes_;
    std::string token_;
    phase phase_ = phase::start;
    std::int64_t last_mono_ns_ = 0;
    // The current call.
    redis::script_op call_op_ = redis::script_op::acquire;
    std::size_t node_ = lease_step::one_node;
    std::int64_t call_wall_ms_ = 0;  // {now_ms} of the current call (an EVAL after NOSCRIPT sends the same)
    bool by_eval_ = false;           // the current call was resent as EVAL after NOSCRIPT
    command_request command_;
    // The acquire.
    std::int64_t attempts_ = 0;
    std::int64_t deadline_ns_ = 0;      // on the monotonic clock
    std::int64_t deadline_wall_ms_ = 0;  // on the caller's wall clock (deadline_on_wall_clock)
    std::int64_t fence_ = 0;
    lease_failure give_up_ = lease_failure::none;  // what a give-up release reports once it ends
    bool unreachable_ = false;                     // the attempt in hand could not reach Redis
    std::int64_t round_start_ns_ = 0;
    std::int64_t round_granted_ = 0;
    std::int64_t round_answered_ = 0;
    // A release on every node: the first failure.
    lease_failure first_failure_ = lease_failure::none;
    std::string channel_;
    std::string permit_;  // the permit id the acquire's granting reply carried (a permit_id rule)
    std::size_t base_token_size_ = 0;  // the given token's length (a fresh token extends it)
    std::int64_t fresh_tokens_ = 0;
    std::size_t setup_index_ = 0;
    reading reading_ = reading::none;
    lease_step setup_call(const moment& m);
  };

  // The permit id an acquire of `token` was granted (a protocol whose acquire reads permit ids), or empty.
  std::string_view permit_of(std::string_view token) const {
    const auto it = permits_.find(token);
    return it == permits_.end() ? std::string_view{} : std::string_view(it->second);
  }

 private:
  lease_client_config cfg_;
  std::function<std::int64_t(std::int64_t)> jitter_ns_;
  std::vector<std::string> shas_;  // per protocol script: the SHA-1 EVALSHA names it by
  // Permit ids by token: set by an acquire granted one, read by the token's later calls as {permit}, dropped
  // when its release ends (a client keeps one per permit it holds).
  std::map<std::string, std::string, std::less<>> permits_;
};

}  // namespace admit::gate
