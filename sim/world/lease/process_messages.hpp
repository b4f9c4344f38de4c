// process_messages (lease): the line protocol a fleet worker's lease client
// speaks from a child process (docs/process-gate.md, "A fleet's client",
// version 1), one codec per message type beside the type: a request's
// to_json, an answer's from_json. An answer is read strictly (exactly its
// keys, each of its type); what does not fit is a codec_error naming the
// JSON path and what was expected. Nothing here asserts on a child's answer.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "gate/lease/client_config.hpp"
#include "gate/lease/client_core.hpp"
#include "gate/redis/reply.hpp"
#include "sim/codec/json_codec.hpp"

namespace admit::world::lease::msg {

inline constexpr int protocol_version = 1;

// --- requests (admitsim to the child) --------------------------------------

// A promise the world makes a child with an operation's input (the protocol's "ahead"): until
// `until_ns`, nothing reaches the worker but the operation's own timer, and the worker's wall clock at
// any instant t from now to then reads (t + wall_base_ns) / 1,000,000 ms. A child may then answer a
// wait until T <= until_ns with the step it would answer the wake-up at T (`step::then`), saving the
// round trip of that wake-up. Written {"until":NS,"wall_base":B}, or {"wall_base":B} when the promise
// lasts as long as the wall clock can be read so (until_ns is then last_until(B)).
struct ahead {
  std::int64_t until_ns = 0;
  std::int64_t wall_base_ns = 0;  // >= 0
  std::int64_t wall_ms_at(std::int64_t t_ns) const noexcept { return (t_ns + wall_base_ns) / 1'000'000; }
  // The latest instant whose reading (t + base) does not overflow.
  static std::int64_t last_until(std::int64_t wall_base_ns) noexcept;
  nlohmann::ordered_json to_json() const;
};

// Opens the client of one worker's process (one generation of it: a crash kills the child, and its
// restart opens a new one).
struct start {
  std::uint64_t seed = 0;
  std::size_t worker = 0;
  std::uint64_t generation = 0;
  std::int64_t now_ns = 0;
  std::int64_t wall_ms = 0;
  const gate::lease_client_config* cfg = nullptr;
  nlohmann::ordered_json to_json() const;
};

// acquire, release, renew: an operation begins.
struct op_start {
  gate::client_core::op_kind kind = gate::client_core::op_kind::acquire;
  std::uint64_t op = 0;
  std::string token;
  std::int64_t now_ns = 0;
  std::int64_t wall_ms = 0;
  const ahead* offer = nullptr;  // with the promise, when the world makes one
  nlohmann::ordered_json to_json() const;
};

// The reply to the operation's last command, or that it was lost.
struct op_reply {
  std::uint64_t op = 0;
  bool lost = false;
  const redis::reply* answer = nullptr;  // when not lost
  std::int64_t now_ns = 0;
  std::int64_t wall_ms = 0;
  const ahead* offer = nullptr;  // with the promise, when the world makes one
  nlohmann::ordered_json to_json() const;
};

// The operation's wait is over.
struct op_woke {
  std::uint64_t op = 0;
  std::int64_t now_ns = 0;
  std::int64_t wall_ms = 0;
  const ahead* offer = nullptr;  // with the promise, when the world makes one
  nlohmann::ordered_json to_json() const;
};

// The run is over.
struct stop {
  std::int64_t now_ns = 0;
  nlohmann::ordered_json to_json() const;
};

// A reply as the protocol carries it: {"int":N} {"bulk":S} {"nil":true} {"status":S} {"error":S}
// {"array":[...]}; a bulk that is not UTF-8 text is {"bulk":{"hex":"..."}}.
nlohmann::ordered_json reply_json(const redis::reply& r);

// --- answers (the child to admitsim) ---------------------------------------

// One step of an operation.
struct step {
  enum class kind : std::uint8_t { command, wait, done };
  enum class outcome : std::uint8_t { granted, acquire_timeout, unreachable, released, lost, kept, not_kept };
  kind k = kind::done;
  std::vector<std::string> argv;  // command
  std::optional<std::int64_t> timeout_at_ns;  // command: the operation's own timer, when one is armed
  std::int64_t until_ns = 0;      // wait
  outcome out = outcome::unreachable;  // done
  std::int64_t value = 0;         // done granted: the grant's value (1 when the child says none)
  std::vector<step> then;         // wait, run ahead: the step at the wake-up (none, or one without a `then`)
};

// {"command":[ARG,...]} (each a string, or {"hex":"..."} for bytes; with "timeout_at":NS >= now when the
// operation also has a timer armed, at which admitsim stops waiting for the reply), {"wait_until":NS} (NS >= now), or
// {"done":OUTCOME} with OUTCOME one that `kind` can end in (acquire: granted, acquire_timeout, unreachable;
// release: released, lost, unreachable; renew: kept, not_kept), and "value":N (>= 1) only with granted.
// Where the request carried `offered`, a wait may be {"wait_until":T,"then":STEP} with T <= its until:
// STEP (any of these steps but one with a "then") is the child's answer to the wake-up at T, read as at T.
step read_step(const nlohmann::ordered_json& a, gate::client_core::op_kind kind, std::int64_t now_ns,
               const ahead* offered = nullptr);

}  // namespace admit::world::lease::msg
