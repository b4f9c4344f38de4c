#include "sim/world/fifo/process_messages.hpp"

namespace admit::world::fifo_world::msg {

namespace {

using json = nlohmann::ordered_json;
using codec::codec_error;

// A ticket (1 to 2^64-1) or null.
std::optional<fifo::ticket_id> read_ticket_or_null(const json& a, const char* key) {
  const std::optional<std::uint64_t> t = codec::read_u64_or_null(a, "", key);
  if (t && *t == 0) throw codec_error(std::string("/") + key, "expected a ticket (1 to 2^64-1) or null, got 0");
  return t;
}

}  // namespace

json start::to_json() const {
  json j;
  j["type"] = "start";
  j["protocol"] = protocol_version;
  j["gate"] = gate;
  j["seed"] = seed;
  j["config"] = json{{"max_active", cfg.max_active},
                     {"max_waiting", cfg.max_waiting},
                     {"wait_deadline_ns", cfg.wait_deadline_ns}};
  j["now"] = 0;
  return j;
}

json ticket_call::to_json() const {
  static constexpr const char* names[] = {"acquire", "claim", "expire", "cancel"};
  json j;
  j["type"] = names[static_cast<int>(k)];
  j["ticket"] = ticket;
  j["now"] = now_ns;
  return j;
}

json gate_call::to_json() const {
  json j;
  j["type"] = k == kind::release ? "release" : "stop";
  j["now"] = now_ns;
  return j;
}

std::optional<std::string> error_of(const json& a) {
  if (!a.is_object() || a.size() != 1) return std::nullopt;
  const auto it = a.find("error");
  if (it == a.end() || !it->is_string()) return std::nullopt;
  return it->get<std::string>();
}

void read_ok(const json& a) {
  codec::expect_only_keys(a, "", {"ok"});
  if (!codec::read_bool(a, "", "ok")) throw codec_error("/ok", "expected true, got false");
}

fifo::acquire_result read_acquire(const json& a, std::int64_t now_ns) {
  codec::expect_only_keys(a, "", {"result", "deadline"});
  const std::string r = codec::read_string(a, "", "result");
  if (r == "admitted" || r == "queue_full") {
    if (a.contains("deadline")) throw codec_error("/deadline", "unexpected key; expected only result (not queued)");
    return {r == "admitted" ? fifo::acquire_outcome::admitted : fifo::acquire_outcome::queue_full, 0};
  }
  if (r != "queued") throw codec_error("/result", "expected \"admitted\", \"queued\" or \"queue_full\", got \"" + r + "\"");
  const json& d = codec::read_field(a, "", "deadline");
  if (d.is_null()) return {fifo::acquire_outcome::queued, never_ns};
  const std::int64_t deadline = codec::read_i64(a, "", "deadline");
  if (deadline < now_ns)
    throw codec_error("/deadline", "expected a time not before now (" + std::to_string(now_ns) + "), got " +
                                       std::to_string(deadline));
  if (deadline > never_ns) throw codec_error("/deadline", "expected a time up to 2^62, got " + std::to_string(deadline));
  return {fifo::acquire_outcome::queued, deadline};
}

fifo::release_result read_release(const json& a) {
  codec::expect_only_keys(a, "", {"ok", "promoted"});
  const bool ok = codec::read_bool(a, "", "ok");
  return {ok, read_ticket_or_null(a, "promoted")};
}

bool read_claim(const json& a) {
  codec::expect_only_keys(a, "", {"claimed"});
  return codec::read_bool(a, "", "claimed");
}

fifo::leave_result read_leave(const json& a) {
  codec::expect_only_keys(a, "", {"result", "promoted"});
  const std::string r = codec::read_string(a, "", "result");
  const std::optional<fifo::ticket_id> p = read_ticket_or_null(a, "promoted");
  if (r == "removed") return {fifo::leave_outcome::removed, p};
  if (r == "handover_released") return {fifo::leave_outcome::handover_released, p};
  if (r == "not_waiting") return {fifo::leave_outcome::not_waiting, p};
  throw codec_error("/result", "expected \"removed\", \"handover_released\" or \"not_waiting\", got \"" + r + "\"");
}

}  // namespace admit::world::fifo_world::msg
