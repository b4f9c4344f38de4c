// own_gate: a team's own FIFO gate core, run by the FIFO world in place of
// admitsim's fifo_gate (docs/own-gate.md).
//
// Every gate of the scenario gets a core of its own, made by `make` from that
// gate's configuration, inside the same async_fifo_gate adapter, the same
// request handlers and the same faults as admitsim's core. The world judges
// what the core's answers imply (sim/world/fifo/recorded_core.hpp), never
// what the core says of itself, and the report names the core
// ("gate_core"), so that a verdict about a team's gate is never mistaken for
// one about admitsim's.
#pragma once

#include <string>
#include <utility>

#include "gate/fifo/gate_core.hpp"

namespace admit::world {

struct own_gate {
  std::string name;          // as the report names it: 1..64 of [A-Za-z0-9_.:-]
  fifo::core_factory make;   // one core per gate of the scenario
};

// The own_gate of core type C, constructible from a fifo::config.
template <fifo::gate_core C>
  requires std::constructible_from<C, const fifo::config&>
own_gate own_gate_of(std::string name) {
  return own_gate{std::move(name), fifo::factory_of<C>()};
}

// Why `og` cannot run (a name out of form, no factory), or "".
std::string own_gate_problem(const own_gate& og);

}  // namespace admit::world
