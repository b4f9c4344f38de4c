// lease_invariants: each invariant of the lease world is a component that
// hears the world's facts (facts.hpp) and judges them on the shared monitor
// (lease_monitors, which keeps the results, the trace, the probes and the
// metrics).
//
// A component is registered from its row of the invariant table
// (sim/check/invariants.hpp): `lease_invariant_rows` names each lease row
// once, with its report index and the component that judges it, and the
// static_asserts below hold the rows, the world's report order
// (lease_invariant_names) and the table to one another. The world builds the
// components of the invariants a scenario checks (checks.invariants) and no
// others.
//
// When a component hears a fact matters for one thing: the trace kept up to
// a violation. A component `before_trace` judges a fact before the monitors
// trace it (a violation's kept trace ends with the step before it: the
// checks made on a script's holders, the portal's counts); one `after_trace`
// judges it after (the gate's count after a script, whose violation's trace
// ends with that script). The world subscribes them in that order around the
// monitors, each phase in the rows' order.
#pragma once

#include <array>
#include <cstddef>
#include <memory>
#include <string_view>

#include "sim/check/invariants.hpp"
#include "sim/world/lease/facts.hpp"
#include "sim/world/lease/lease_monitors.hpp"

namespace admit::world::lease {

enum class judged : unsigned char { before_trace, after_trace };

// The component of one invariant: a subscriber that judges on `hub`'s monitor, built and subscribed to `bus`.
using make_invariant = std::unique_ptr<fact_sink> (*)(lease_monitors& hub, fact_bus& bus);

struct lease_invariant_row {
  const char* name;  // the invariant table's row
  lease_inv index;   // its place in the report (lease_invariant_names)
  judged phase;
  make_invariant make;
};

std::unique_ptr<fact_sink> make_gate_inflight(lease_monitors& hub, fact_bus& bus);
std::unique_ptr<fact_sink> make_portal_inflight(lease_monitors& hub, fact_bus& bus);
std::unique_ptr<fact_sink> make_expired_reaped(lease_monitors& hub, fact_bus& bus);
std::unique_ptr<fact_sink> make_liveness(lease_monitors& hub, fact_bus& bus);
std::unique_ptr<fact_sink> make_capacity_conserved(lease_monitors& hub, fact_bus& bus);

// In subscription order within each phase.
inline constexpr std::array<lease_invariant_row, l_count> lease_invariant_rows = {{
    {"expired_leases_reaped", l_expiry, judged::before_trace, &make_expired_reaped},
    {"liveness", l_liveness, judged::before_trace, &make_liveness},
    {"capacity_conserved", l_capacity, judged::before_trace, &make_capacity_conserved},
    {"portal_inflight_le_cap", l_portal_inflight, judged::before_trace, &make_portal_inflight},
    {"gate_inflight_le_cap", l_gate_inflight, judged::after_trace, &make_gate_inflight},
}};

namespace row_check {
constexpr bool same(std::string_view a, std::string_view b) { return a == b; }
constexpr bool rows_match_report() {
  std::array<bool, l_count> seen{};
  for (const lease_invariant_row& r : lease_invariant_rows) {
    if (r.index >= l_count || seen[r.index]) return false;
    seen[r.index] = true;
    if (!same(r.name, lease_invariant_names[r.index])) return false;
    if (!check::applies(r.name, check::world_lease)) return false;
  }
  return true;
}
}  // namespace row_check
static_assert(row_check::rows_match_report(),
              "each lease invariant is one row: its table name, its report index, a component");

// The components of the invariants `hub` checks, subscribed to `bus` around
// the monitors (`hub` itself, which the bus hears between the two phases).
class lease_invariants {
 public:
  lease_invariants(lease_monitors& hub, fact_bus& bus);
  std::size_t built() const noexcept { return built_; }

 private:
  std::array<std::unique_ptr<fact_sink>, l_count> parts_;
  std::size_t built_ = 0;
};

}  // namespace admit::world::lease
