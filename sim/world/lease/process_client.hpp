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
//
// Running ahead (the protocol's "ahead"): with an input of an acquire, the
// only operation open, the client offers what the world promises about the
// worker (`set_promise`: until when nothing but the operation's own timer
// reaches it, and how its wall clock reads until then). A child may answer a
// wait within the promise with the step it would answer that wake-up; the
// wake-up then comes with no message, its step the one already answered. The
// world keeps its promise by construction (an acquire's wait ends only at its
// timer or with the worker's crash, which kills the child), and asserts it at
// the wake-up.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "gate/lease/client_config.hpp"
#include "gate/lease/remote_logic.hpp"
#include "sim/kernel/scheduler.hpp"
#include "sim/scenario/scenario.hpp"
#include "sim/world/lease/process_messages.hpp"
#include "sim/world/process/session.hpp"

namespace admit::world::lease {

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

  // What the world can promise the worker's child at `now` (msg::ahead), if anything.
  using promise_fn = std::function<std::optional<msg::ahead>(std::int64_t now_ns)>;
  void set_promise(promise_fn promise) { promise_ = std::move(promise); }
  // The wake-ups whose step the child had answered ahead (no message went for them).
  std::uint64_t wakes_ahead() const noexcept { return wakes_ahead_; }
  // The requests sent to this worker's children (their starts included, their stops not).
  std::uint64_t messages() const noexcept { return messages_; }

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
    // Its wait's wake-up, answered ahead: at `at_ns` (the worker's wall clock then `wall_ms`), `step`.
    struct answered_ahead {
      std::int64_t at_ns = 0;
      std::int64_t wall_ms = 0;
      msg::step step;
    };
    std::optional<answered_ahead> ahead;
  };
  op_state& state_of(op_id id);
  // The promise `op`'s next input carries: an acquire's, while it is the only operation open.
  std::optional<msg::ahead> offer_for(const op_state& op, const gate::moment& m) const;
  // An input reached `op` at `m` (its wall reading kept for the calls it sends).
  void note_input(op_state& op, const gate::moment& m);
  // Sends `request` for `op` (which carried `offer`, if any) and turns the child's answer into the
  // operation's next step.
  gate::lease_step ask(op_state& op, const nlohmann::ordered_json& request, const gate::moment& m,
                       const std::optional<msg::ahead>& offer);
  gate::lease_step step_of(op_state& op, const msg::step& s, const gate::moment& m,
                           const std::optional<msg::ahead>& offer);
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
  promise_fn promise_;
  std::uint64_t wakes_ahead_ = 0;
  std::uint64_t messages_ = 0;
};

}  // namespace admit::world::lease
