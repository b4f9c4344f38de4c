// client_config: what a lease client is configured with, and the requests it
// sends, as plain data shared by the sans-IO core (client_core.hpp) and its
// drivers (gate/asio/lease_client.hpp on the simulator's executor or on a
// real one).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "gate/redis/lease_scripts.hpp"
#include "gate/redis/protocol.hpp"

namespace admit::gate {

struct backoff_policy {
  bool exponential = false;
  std::int64_t delay_ns = 200'000'000;  // fixed
  std::int64_t base_ns = 50'000'000;    // exponential: first wait, doubled per attempt
  std::int64_t max_ns = 2'000'000'000;  // exponential: cap
  bool full_jitter = true;              // exponential: wait uniform in [0, computed]

  // The wait before attempt `attempt + 1` (attempt >= 1), before jitter.
  std::int64_t ceiling_ns(std::int64_t attempt) const noexcept {
    if (!exponential) return delay_ns;
    std::int64_t w = base_ns;
    for (std::int64_t i = 1; i < attempt && w < max_ns; ++i) w = w > max_ns / 2 ? max_ns : w * 2;
    return w < max_ns ? w : max_ns;
  }
};

// Redlock's count and validity rule: a majority of `nodes` granted, and the
// lease outlived the round by more than the clock-drift margin. Every time
// in ns.
// `off_by_one` is broken on purpose (the mutation quorum_off_by_one): N/2.
// With `all` (the rule "all"), every node must grant.
inline std::int64_t quorum_of(std::int64_t nodes, bool off_by_one = false, bool all = false) noexcept {
  if (all) return nodes;
  return off_by_one ? nodes / 2 : nodes / 2 + 1;
}
inline std::int64_t quorum_drift_ns(std::int64_t lease_ns) noexcept { return lease_ns / 100 + 2'000'000; }
inline bool quorum_holds(std::int64_t nodes, std::int64_t granted, std::int64_t lease_ns, std::int64_t elapsed_ns,
                         bool off_by_one = false, bool all = false) noexcept {
  return granted >= quorum_of(nodes, off_by_one, all) && lease_ns - elapsed_ns - quorum_drift_ns(lease_ns) > 0;
}

struct lease_client_config {
  std::string key = "admitsim:inflight";
  std::int64_t limit = 1;
  std::int64_t lease_ms = 15'000;
  std::int64_t acquire_timeout_ns = 30'000'000'000;
  std::int64_t queue_timeout_ms = 0;  // fair, and a protocol's {queue_timeout_ms}
  backoff_policy backoff;
  std::int64_t renew_every_ns = 0;    // keep_renewed's interval (0: the client does not renew)
  bool renew_at_fixed_rate = false;   // renewals due every renew_every from the grant (else after each answer)
  bool deadline_on_wall_clock = false;  // the acquire deadline on the caller's wall clock (else monotonic)
  // An acquire that gives up: stop polling, or release once first (redis::give_up_action).
  redis::give_up_action on_give_up = redis::give_up_action::stop;
  // The protocol to run (a built-in variant's file, or a team's own). Required.
  std::shared_ptr<const redis::protocol> proto;
  // A protocol's client.quorum "majority" or "all": acquire and release on every node of the transport.
  bool quorum = false;
  bool quorum_all = false;  // "all": every node must grant
  bool quorum_off_by_one = false;  // broken on purpose (mutation quorum_off_by_one)
};

// One protocol call as the transport sends it: the whole command
// ("EVALSHA", sha, numkeys, keys..., args... / "EVAL", body, ... / a plain
// command). `op` and `token` say what it is for, to a simulated server's
// monitors; a real transport sends `argv` only.
struct command_request {
  redis::script_op op = redis::script_op::acquire;
  const redis::protocol* proto = nullptr;
  std::string token;
  std::vector<std::string> argv;
  // How long the client waits for the reply: -1 the transport's own timeout, 0 for ever, else ns.
  std::int64_t timeout_ns = -1;
  // A client in a child process (remote_logic.hpp): its wall clock, in ms, at each input its operation was
  // given so far, latest last (what its time.time() read then: a call may carry a now read steps before, as
  // a script client's NOSCRIPT retry does), so that a simulated server can tell which argument is the
  // caller's now. Empty for admitsim's own client, whose calls say where their now is.
  std::vector<std::int64_t> caller_walls_ms;
};

}  // namespace admit::gate
