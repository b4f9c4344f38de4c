// process_messages: the line protocol of process gates (docs/process-gate.md,
// version 1), one codec per message type beside the type: a request's
// to_json, an answer's from_json. The readers are the codecs' shared ones
// (sim/codec/json_codec.hpp); an answer is read strictly (exactly its keys,
// each of its type), and what does not fit is a codec_error naming the JSON
// path and what was expected: a child's answer is input, so nothing here
// asserts on it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "gate/fifo/fifo_gate.hpp"
#include "sim/codec/json_codec.hpp"

namespace admit::world::fifo_world::msg {

inline constexpr int protocol_version = 1;

// --- requests (admitsim to the child) --------------------------------------

// Opens a gate for one run.
struct start {
  std::string gate;
  std::uint64_t seed = 0;
  fifo::config cfg;
  nlohmann::ordered_json to_json() const;
};

// acquire, claim, expire and cancel: a call about one ticket.
struct ticket_call {
  enum class kind : std::uint8_t { acquire, claim, expire, cancel };
  kind k = kind::acquire;
  fifo::ticket_id ticket = 0;
  std::int64_t now_ns = 0;
  nlohmann::ordered_json to_json() const;
};

// release and stop: a call about the gate.
struct gate_call {
  enum class kind : std::uint8_t { release, stop };
  kind k = kind::release;
  std::int64_t now_ns = 0;
  nlohmann::ordered_json to_json() const;
};

// --- answers (the child to admitsim) ---------------------------------------

// {"error": TEXT}: the child cannot go on. The text, if `a` is one.
std::optional<std::string> error_of(const nlohmann::ordered_json& a);

// start, stop: {"ok": true}.
void read_ok(const nlohmann::ordered_json& a);

// acquire: {"result": "admitted" | "queue_full"} or {"result": "queued", "deadline": D | null}; a
// deadline before `now_ns` is refused; null is `never_ns`.
inline constexpr std::int64_t never_ns = INT64_MAX / 2;  // after any horizon
fifo::acquire_result read_acquire(const nlohmann::ordered_json& a, std::int64_t now_ns);

// release: {"ok": BOOL, "promoted": T | null}.
fifo::release_result read_release(const nlohmann::ordered_json& a);

// claim: {"claimed": BOOL}.
bool read_claim(const nlohmann::ordered_json& a);

// expire, cancel: {"result": "removed" | "handover_released" | "not_waiting", "promoted": T | null}.
fifo::leave_result read_leave(const nlohmann::ordered_json& a);

}  // namespace admit::world::fifo_world::msg
