// fault_window_of: the timeline's window of a scheduled fault, as both worlds
// draw it (the fault's kind; its target, or the two ends of a cut; from the
// instant it begins for its duration, a crash with no restart as an instant).
#pragma once

#include <cstddef>
#include <string>

#include "sim/kernel/vtime.hpp"
#include "sim/scenario/scenario.hpp"
#include "sim/world/timeline.hpp"

namespace admit::world {

inline fault_window window_of(const scenario::fault_spec& f, sim::vtime_ns now) {
  using fk = scenario::fault_kind;
  fault_window fw;
  fw.kind = scenario::fault_kind_names[static_cast<std::size_t>(f.kind)];
  fw.target = f.target    ? scenario::to_string(*f.target)
              : f.between ? scenario::to_string(f.between->first) + "|" + scenario::to_string(f.between->second)
                          : std::string();
  fw.start_ns = now;
  fw.end_ns = now + (f.kind == fk::crash && !f.duration_ns ? 0 : f.duration_ns.value_or(0));
  return fw;
}

}  // namespace admit::world
