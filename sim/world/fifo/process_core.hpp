// process_core: a FIFO gate core that lives in a child process and speaks
// the line protocol of docs/process-gate.md, one message per call of
// fifo::core_iface.
//
// The child is taken from a pool of idle children of the same command that
// this thread keeps (so `explore --jobs N` runs one child per thread and
// gate, not one per run), opened with `start` (the run's seed, the gate's
// name and configuration) and given back after a `stop` it answered. A
// child that failed is never given back.
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
#include "sim/process/child_process.hpp"
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
  const fifo::core_failure* failed() const noexcept override { return failure_ ? &*failure_ : nullptr; }

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
  void fail(std::string kind, std::string detail);

  scenario::process_spec spec_;
  std::unique_ptr<proc::child_process> child_;
  std::optional<fifo::core_failure> failure_;
  std::int64_t last_now_ns_ = 0;  // the latest `now` sent: what `stop` carries
};

// Idle children this thread keeps, in all (each is killed when the thread ends).
inline constexpr std::size_t process_pool_max = 64;

}  // namespace admit::world::fifo_world
