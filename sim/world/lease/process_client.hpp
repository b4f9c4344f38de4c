// process_client: a fleet worker's lease client that runs in a child process
// (docs/process-gate.md, "A fleet's client"), as gate::remote_logic: the
// worker's lease_client drives each operation (acquire, release, renew) as it
// drives its own core, and this class carries each input to the child as a
// message and reads the child's next step back: a Redis command to send (the
// world routes it through the network, the faults and the node like any
// call), a wait until an instant of virtual time, or the operation's end.
//
// One child per worker: a worker is a process of its own, with its own clock
// (every message carries the worker's monotonic and wall clocks), and a crash
// of the worker kills its child; the restarted worker's first operation
// starts a new one (`generation` counts them). A worker that never acquires
// never starts a child. Children come from this thread's pool
// (process/session.hpp).
//
// The child's word is checked, never trusted: a step that does not fit the
// operation (process_messages.hpp), a grant without a call to Redis, an
// exit, a hang or an error answer makes the client failed(): the run stops
// there (the world ends it inconclusive) and every operation ends unreachable.
// A release the child says was lost, when none of its calls was, ends
// unreachable. Whether the child's grants are real the world judges from the
// node's holders (server_side's process mode), not from the child.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "gate/lease/client_config.hpp"
#include "gate/lease/remote_logic.hpp"
#include "sim/kernel/scheduler.hpp"
#include "sim/scenario/scenario.hpp"
#include "sim/world/process/session.hpp"

namespace admit::world::lease {

namespace msg {
struct step;
}

class process_client final : public gate::remote_logic {
 public:
  process_client(const scenario::process_spec& spec, std::size_t worker, std::uint64_t seed,
                 const gate::lease_client_config& cfg, sim::scheduler& sched);
  ~process_client() override;
  process_client(const process_client&) = delete;
  process_client& operator=(const process_client&) = delete;

  op_id open(gate::client_core::op_kind kind, const std::string& token) override;
  gate::lease_step start(op_id op, const gate::moment& m) override;
  gate::lease_step replied(op_id op, const gate::moment& m, bool lost, const redis::reply& answer) override;
  gate::lease_step woke(op_id op, const gate::moment& m) override;
  const gate::command_request& command(op_id op) const noexcept override;
  void close(op_id op) noexcept override;

  // The worker crashed: its child is killed, and its operations still open end unreachable without a word
  // to any child (their generation is gone).
  void crashed();
  // Why the child could not go on (the run stopped there), if it could not.
  const process::session_failure* failed() const noexcept { return failure_ ? &*failure_ : nullptr; }

 private:
  struct op_state {
    gate::client_core::op_kind kind = gate::client_core::op_kind::acquire;
    std::string token;
    std::uint64_t generation = 0;
    std::int64_t commands = 0;  // calls it sent
    bool any_lost = false;      // one of them was lost
    std::optional<std::int64_t> timeout_at_ns;  // the command in flight: its operation's own timer
    std::vector<std::int64_t> walls_ms;  // the wall clock at each of its inputs, latest last (the last 64)
    gate::command_request cmd;
  };
  op_state& state_of(op_id id);
  // Sends `request` for `op` and turns the child's answer into the operation's next step.
  gate::lease_step ask(op_state& op, const nlohmann::ordered_json& request, const gate::moment& m);
  gate::lease_step step_of(op_state& op, const msg::step& s, const gate::moment& m);
  // Ends the run: the child failed (or broke the protocol); every operation ends unreachable from now on.
  gate::lease_step fail(std::string kind, std::string detail);
  static gate::lease_step unreachable();
  // The session of this generation, opened (with its start) at the first operation; nullptr once failed.
  process::session* session_for(const gate::moment& m);

  scenario::process_spec spec_;
  std::size_t worker_;
  std::uint64_t seed_;
  gate::lease_client_config cfg_;
  sim::scheduler& sched_;
  std::optional<process::session> session_;
  std::uint64_t generation_ = 0;
  std::optional<process::session_failure> failure_;
  std::map<op_id, op_state> ops_;
  op_id next_op_ = 1;
  std::int64_t last_now_ns_ = 0;
};

}  // namespace admit::world::lease
