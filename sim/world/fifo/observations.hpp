// observations: what the scenario's cases look at in a FIFO run.
//
// A case observes a gate's snapshot at an instant, or a request's response
// or client exception. The run captures each snapshot once every event due
// at or before its instant has run, and keeps the outcome of the requests
// the cases name (of every request, in a small run).
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <utility>

#include "sim/scenario/scenario.hpp"
#include "sim/world/fifo/gate_slot.hpp"
#include "sim/world/run_record.hpp"

namespace admit::world::fifo_world {

class observations {
 public:
  // `total_requests`: how many the run's arrival stream holds.
  observations(const scenario::scenario& sc, std::uint64_t total_requests);

  // The instants at which some snapshot is due, in order.
  std::set<vtime_ns> snapshot_instants() const;
  bool snapshot_due(vtime_ns t) const;
  // Every snapshot due at `t`, into the record.
  void capture(vtime_ns t, const gate_set& gates, run_record& rec) const;

  // Whether the outcome of the request with `id` is kept (id() is made only when asked).
  template <class Id>
  bool keeps(Id&& id) const {
    return keep_all_ || (!kept_ids_.empty() && kept_ids_.count(id()) != 0);
  }

 private:
  std::set<std::pair<std::string, vtime_ns>> snapshot_refs_;
  std::set<std::string> kept_ids_;
  bool keep_all_ = false;
};

}  // namespace admit::world::fifo_world
