// trace_sink: where every trace entry of a run goes when the whole story is
// asked for (admitsim's --trace), whatever the bounded trace keeps.
//
// A world hands its own entries (trace_ring::stream_to) to a small function
// of its monitors that puts each into the one shape every world shares,
// trace_line (the fields of the report's trace entries), and gives it to the
// sink. The caller of a run tells the sink where each run begins and ends
// (world::run_all does, one run per lease variant). The sink decides what
// becomes of a line: the command line writes JSON lines (docs/trace.md), a
// test keeps them.
#pragma once

#include <cstdint>
#include <string_view>

#include "sim/kernel/vtime.hpp"

namespace admit::check {

// One entry. The views last only for the call of trace_sink::entry.
struct trace_line {
  sim::vtime_ns at_ns = 0;
  std::string_view source;  // a gate's name, "request", "fault" (FIFO); "worker", "redis", "portal", ... (lease)
  std::string_view what;    // what happened
  std::int64_t active = 0;  // FIFO: leases active; lease: the holders or members the entry counts
  std::int64_t waiting = 0;  // FIFO: tickets waiting; lease: 0
  std::uint64_t ref = 0;     // a ticket or request number (FIFO), a worker (lease)
};

class trace_sink {
 public:
  // A run named `run` (its lease variant or protocol; "" for a FIFO run) begins.
  virtual void begin_run(std::string_view run) = 0;
  // Its next entry, in the order the run traced them. Never throws: it is
  // called at teardown too; a sink that cannot keep a line records why.
  virtual void entry(const trace_line& e) noexcept = 0;
  // The run has ended: every entry of it has been given.
  virtual void end_run() = 0;
  // An entry could not be given whole (`why`, such as "out of memory"): the
  // sink's output is not the run's whole story.
  virtual void lost(std::string_view why) noexcept = 0;

 protected:
  ~trace_sink() = default;
};

}  // namespace admit::check
