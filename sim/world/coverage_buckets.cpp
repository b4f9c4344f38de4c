#include "sim/world/coverage_buckets.hpp"

#include <array>
#include <set>

#include "gate/admit_assert.hpp"
#include "sim/world/lease/lease_coverage.hpp"

namespace admit::world {

const std::vector<std::string>& fifo_bucket_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> n;
    for (const char* kind : scenario::fault_kind_names)
      for (const char* state : fifo_state_names) n.push_back(std::string(kind) + " " + state);
    n.emplace_back(portal_cap_near_miss);
    return n;
  }();
  ADMIT_ASSERT(names.size() == fifo_bucket_count, "one name a bucket");
  return names;
}

void drop_buckets_never_struck(check::probe_counts& coverage, const scenario::scenario& sc) {
  std::array<bool, scenario::fault_kind_count> struck{};
  for (const scenario::fault_spec& f : sc.faults.schedule) struck[static_cast<std::size_t>(f.kind)] = true;
  if (sc.faults.rates)
    for (std::size_t k = 0; k < scenario::fault_kind_count; ++k) struck[k] = struck[k] || sc.faults.rates->per_hour[k] > 0;
  std::set<std::string> never;
  const std::vector<std::string>& lease = lease::lease_bucket_names();
  const std::vector<std::string>& fifo = fifo_bucket_names();
  using lease::client_phase_count;
  using lease::server_state_count;
  for (std::size_t k = 0; k < scenario::fault_kind_count; ++k) {
    if (struck[k]) continue;
    for (std::size_t p = 0; p < client_phase_count; ++p) never.insert(lease[k * client_phase_count + p]);
    for (std::size_t st = 0; st < server_state_count; ++st)
      never.insert(lease[scenario::fault_kind_count * client_phase_count + k * server_state_count + st]);
    for (std::size_t st = 0; st < fifo_state_count; ++st) never.insert(fifo[k * fifo_state_count + st]);
  }
  std::erase_if(coverage, [&](const auto& bucket) { return never.count(bucket.first) != 0; });
}

}  // namespace admit::world
