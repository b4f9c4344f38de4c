#include "sim/world/fifo/process_core.hpp"

#include <algorithm>
#include <limits>
#include <type_traits>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "gate/admit_assert.hpp"
#include "sim/world/fifo/process_messages.hpp"

namespace admit::world::fifo_world {

namespace {
using json = nlohmann::ordered_json;
}  // namespace

std::string process_core::name_of(const scenario::process_spec& spec) { return process::session::name_of(spec); }

process_core::process_core(const scenario::process_spec& spec, const fifo::config& cfg, std::string_view gate,
                           std::uint64_t seed)
    : session_(spec) {
  if (session_.failed()) return;
  ask(msg::start{std::string(gate), seed, cfg}.to_json(), 0, "{\"ok\":true}", [](const json& a) {
    msg::read_ok(a);
    return true;
  });
}

process_core::~process_core() {
  // The run is over: the session sends this (the latest `now` the child was sent) as it ends.
  session_.set_stop_request(msg::gate_call{msg::gate_call::kind::stop, last_now_ns_}.to_json());
}

const fifo::core_failure* process_core::failed() const noexcept {
  const process::session_failure* f = session_.failed();
  if (f == nullptr) return nullptr;
  if (!failure_) failure_ = fifo::core_failure{f->kind, f->detail};
  return &*failure_;
}

template <class Read>
std::optional<std::invoke_result_t<Read, const nlohmann::ordered_json&>> process_core::ask(
    const nlohmann::ordered_json& request, std::int64_t now_ns, const char* expected, Read read) {
  last_now_ns_ = std::max(last_now_ns_, now_ns);
  return session_.ask(request, expected, read);
}

fifo::acquire_result process_core::acquire(fifo::ticket_id t, std::int64_t now_ns) {
  const auto r = ask(msg::ticket_call{msg::ticket_call::kind::acquire, t, now_ns}.to_json(), now_ns,
                     "{\"result\":\"admitted\"}, {\"result\":\"queue_full\"} or {\"result\":\"queued\",\"deadline\":D} "
                     "(D an integer, not before now, or null)",
                     [now_ns](const json& a) { return msg::read_acquire(a, now_ns); });
  return r ? *r : fifo::acquire_result{fifo::acquire_outcome::queue_full, 0};
}

fifo::release_result process_core::release(std::int64_t now_ns) {
  const auto r = ask(msg::gate_call{msg::gate_call::kind::release, now_ns}.to_json(), now_ns,
                     "{\"ok\":true|false,\"promoted\":T|null}", [](const json& a) { return msg::read_release(a); });
  return r ? *r : fifo::release_result{false, std::nullopt};
}

bool process_core::claim(fifo::ticket_id t, std::int64_t now_ns) {
  const auto r = ask(msg::ticket_call{msg::ticket_call::kind::claim, t, now_ns}.to_json(), now_ns,
                     "{\"claimed\":true|false}", [](const json& a) { return msg::read_claim(a); });
  return r ? *r : false;
}

fifo::leave_result process_core::leave(bool expire, fifo::ticket_id t, std::int64_t now_ns) {
  const auto k = expire ? msg::ticket_call::kind::expire : msg::ticket_call::kind::cancel;
  const auto r = ask(msg::ticket_call{k, t, now_ns}.to_json(), now_ns,
                     "{\"result\":\"removed\"|\"handover_released\"|\"not_waiting\",\"promoted\":T|null}",
                     [](const json& a) { return msg::read_leave(a); });
  return r ? *r : fifo::leave_result{fifo::leave_outcome::not_waiting, std::nullopt};
}

}  // namespace admit::world::fifo_world
