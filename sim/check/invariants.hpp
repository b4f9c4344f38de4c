// invariants: the one table of what admitsim checks, and where each check applies.
//
// Every invariant a scenario may name (checks.invariants, expect.violated) is
// a row here: its name, the worlds whose monitors check it, and what it
// checks. The loader refuses a name that does not apply to the scenario's
// world (a lease invariant in a FIFO scenario would otherwise switch every
// FIFO monitor off and check nothing), and each world asserts that the names
// it reports are rows that apply to it, so the table and the monitors cannot
// drift apart. The worlds report their invariants in their own fixed order
// (the report's key order); the table's order is the one messages list.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace admit::check {

// The worlds a scenario can run in: one bit each, so a row can name several.
enum world_bits : unsigned {
  world_fifo = 1,   // FIFO gates in one process (sim/world/fifo/)
  world_lease = 2,  // one Redis lease gate over a fleet (sim/world/lease_world.cpp, sim/world/lease/)
};

struct invariant_info {
  const char* name;
  unsigned worlds;    // world_bits
  const char* checks;  // what a violation means, for docs and `admitsim list`
  // A bounded quantity (its violations are windows with a duration and a
  // worst moment), else a judgement of single steps (sim/check/results.hpp).
  bool level = false;
};

inline constexpr invariant_info invariant_table[] = {
    {"gate_inflight_le_cap", world_fifo | world_lease,
     "the gate never counts more leases in use than its cap (max_active, or the lease limit)", true},
    {"waiting_le_max", world_fifo, "the FIFO queue never holds more than max_waiting", true},
    {"portal_inflight_le_cap", world_fifo | world_lease,
     "the portal never sees more concurrent work than its true cap", true},
    {"fifo_order", world_fifo, "waiters are promoted in arrival order"},
    {"lease_released_once", world_fifo, "every granted lease is released exactly once"},
    {"liveness", world_fifo | world_lease,
     "at the end (and at checks.liveness_horizon) every request has ended and the gates are idle"},
    {"expired_leases_reaped", world_lease, "no permit older than the lease survives an acquire"},
    {"capacity_conserved", world_lease,
     "the permits a fresh caller could take plus the permits held (live, or expired and not yet reaped) equal the "
     "limit after every command (a protocol whose holders count free permits: holders.free)",
     true},
};
inline constexpr std::size_t invariant_count = std::size(invariant_table);

inline constexpr std::array<const char*, invariant_count> invariant_names = [] {
  std::array<const char*, invariant_count> out{};
  for (std::size_t i = 0; i < invariant_count; ++i) out[i] = invariant_table[i].name;
  return out;
}();

// The row of `name`, or nullptr.
constexpr const invariant_info* find_invariant(std::string_view name) {
  for (const auto& row : invariant_table)
    if (name == row.name) return &row;
  return nullptr;
}

// Written without find_invariant's pointer: a sanitizer build does not take a
// comparison of a pointer into the table as a constant expression.
constexpr bool applies(std::string_view name, unsigned world) {
  for (const auto& row : invariant_table)
    if (name == row.name) return (row.worlds & world) != 0;
  return false;
}

constexpr const char* world_name(unsigned world) { return world == world_lease ? "lease" : "FIFO"; }

}  // namespace admit::check
