// process_core: a FIFO gate core that lives in a child process and speaks
// the line protocol of docs/process-gate.md, one message per call of
// fifo::core_iface.
//
// The child comes from this thread's pool (process/session.hpp), opened with
// `start` (the run's seed, the gate's name and configuration) and given back
// after a `stop` it answered. A child that failed is never given back.
//
// Every answer is read strictly: a JSON object with exactly the fields its
// request allows, of the right types. Anything else (and an `error` answer,
// an exit, a hang past the gate's message_timeout) makes the core failed():
// from then on it answers inertly and the world ends the run inconclusive.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>

#include <nlohmann/json.hpp>

#include "gate/fifo/gate_core.hpp"
#include "sim/world/process/session.hpp"
#include "sim/scenario/scenario.hpp"

namespace admit::world::fifo_world {

class process_core final : public fifo::core_iface {
 public:
  process_core(const scenario::process_spec& spec, const fifo::config& cfg, std::string_view gate,
               std::uint64_t seed);
  ~process_core() override;
  process_core(const process_core&) = delete;
  process_core& operator=(const process_core&) = delete;

  fifo::acquire_result acquire(fifo::ticket_id t, std::int64_t now_ns) override;
  fifo::release_result release(std::int64_t now_ns) override;
  bool claim(fifo::ticket_id t, std::int64_t now_ns) override;
  fifo::leave_result expire(fifo::ticket_id t, std::int64_t now_ns) override { return leave(true, t, now_ns); }
  fifo::leave_result cancel(fifo::ticket_id t, std::int64_t now_ns) override { return leave(false, t, now_ns); }
  const fifo::core_failure* failed() const noexcept override;

  // The name a report gives a process core: "process:" and the command's last word (shortened).
  static std::string name_of(const scenario::process_spec& spec);

 private:
  fifo::leave_result leave(bool expire, fifo::ticket_id t, std::int64_t now_ns);
  // Sends `request` (process_messages.hpp) and reads its answer with `read`, a
  // message codec's from_json; nullopt once the core failed (no answer, an
  // error answer, or one `read` refuses: `expected` says what fits).
  template <class Read>
  std::optional<std::invoke_result_t<Read, const nlohmann::ordered_json&>> ask(
      const nlohmann::ordered_json& request, std::int64_t now_ns, const char* expected, Read read);

  process::session session_;
  mutable std::optional<fifo::core_failure> failure_;  // the session's failure, as the core interface gives it
  std::int64_t last_now_ns_ = 0;  // the latest `now` sent: what `stop` carries
};

}  // namespace admit::world::fifo_world
