// remote_logic: a lease client's logic that runs elsewhere (a child process
// of the simulator: sim/world/lease/process_client.hpp), stepped exactly as
// client_core::op is.
//
// The driver (gate/asio/lease_client.hpp) opens an operation, starts it and
// feeds it what happened, as it does a client_core::op; the logic answers
// each input with the next step. Outside logic is input, never trusted: an
// implementation turns whatever its other side says into a well-formed step
// (a command with a non-empty argv, a wait not before now, an outcome the
// operation can have), and a failure of its other side into `done` with
// unreachable, after which it answers every operation so (the simulator ends
// such a run inconclusive).
#pragma once

#include <cstdint>
#include <string>
#include <utility>

#include "gate/lease/client_core.hpp"

namespace admit::gate {

class remote_logic {
 public:
  using op_id = std::uint64_t;
  virtual ~remote_logic() = default;

  // A new operation of `kind` on `token`; the id names it until close().
  virtual op_id open(client_core::op_kind kind, const std::string& token) = 0;
  virtual lease_step start(op_id op, const moment& m) = 0;
  virtual lease_step replied(op_id op, const moment& m, bool lost, const redis::reply& answer) = 0;
  virtual lease_step woke(op_id op, const moment& m) = 0;
  // The call the last command step of `op` sends; valid until its next input.
  virtual const command_request& command(op_id op) const noexcept = 0;
  // The operation is over (done, or abandoned: a crash cancelled its driver).
  virtual void close(op_id op) noexcept = 0;
};

// One operation of a remote_logic, with client_core::op's interface, for the driver's loop.
class remote_op {
 public:
  remote_op(remote_logic& logic, client_core::op_kind kind, std::string token)
      : logic_(logic), token_(std::move(token)), id_(logic.open(kind, token_)) {}
  ~remote_op() { logic_.close(id_); }
  remote_op(const remote_op&) = delete;
  remote_op& operator=(const remote_op&) = delete;

  lease_step start(const moment& m) { return logic_.start(id_, m); }
  lease_step replied(const moment& m, bool lost, const redis::reply& answer) {
    return logic_.replied(id_, m, lost, answer);
  }
  lease_step woke(const moment& m) { return logic_.woke(id_, m); }
  const command_request& command() const noexcept { return logic_.command(id_); }
  // A remote client never waits on a channel (its waits are timers).
  const std::string& wake_channel() const noexcept { return token_; }
  bool wake_sharded() const noexcept { return false; }
  const std::string& token() const noexcept { return token_; }

 private:
  remote_logic& logic_;
  std::string token_;
  remote_logic::op_id id_;
};

}  // namespace admit::gate
