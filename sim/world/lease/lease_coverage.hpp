// lease_coverage: which faults struck the lease world in which state, for a
// search to say what its seeds covered (docs/explore.md, "Coverage").
//
// A subscriber of the facts (facts.hpp). It follows each worker's phase, the
// client's side of a lease: between requests, acquiring (from its first
// acquire until it is granted or gives up), holding (granted, its request at
// the portal), renewing (holding, with a renewal call in flight) and
// releasing (its request served, until it is done with the item). As a fault
// begins it notes the phase of the workers it strikes (the one it targets, or
// every live worker for a fault of Redis, of the portal or of every link) and
// the state of the holders on the Redis node (node 0 in a quorum run): full
// (as many live permits as the limit) and an expired permit no one has
// reaped yet, read as the causes read them. Three more buckets are the near
// misses: the portal's in-flight count reached its cap, the gate key's live
// members reached the limit (a level invariant that did not break, but came
// to its bound), and a permit left the set while its worker was still on its
// item (reaped, expired, forgotten by a restart or lost in a failover: the
// first half of a holder paused past its lease, which breaks the cap only if
// another worker takes the place in time).
//
// The buckets are counted per run (run_record::coverage, beside the probes):
// a bucket at 0 is a state the run's faults never met.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "sim/scenario/scenario.hpp"
#include "sim/world/lease/facts.hpp"
#include "sim/world/lease/redis_node.hpp"
#include "sim/world/lease/server_side.hpp"
#include "sim/world/run_record.hpp"

namespace admit::world::lease {

enum class client_phase : std::uint8_t { between, acquiring, holding, renewing, releasing };
inline constexpr std::size_t client_phase_count = 5;
inline constexpr std::array<const char*, client_phase_count> client_phase_names = {
    "between requests", "acquiring", "holding", "renewing", "releasing"};
// The server states a fault is noted in (beside the phases).
inline constexpr std::size_t server_state_count = 2;
inline constexpr std::array<const char*, server_state_count> server_state_names = {
    "with every permit taken", "with an expired permit unreaped"};
inline constexpr std::size_t near_miss_count = 3;
inline constexpr std::array<const char*, near_miss_count> near_miss_names = {
    "the portal reached its cap", "the gate key reached its limit", "a permit left the set under its holder"};
// Every bucket: fault kind x phase, fault kind x server state, then the near misses.
inline constexpr std::size_t lease_bucket_count =
    scenario::fault_kind_count * (client_phase_count + server_state_count) + near_miss_count;

// The bucket names, in their fixed order: "crash while acquiring", "pause with every permit taken", ...
const std::vector<std::string>& lease_bucket_names();

class lease_coverage final : public fact_sink {
 public:
  lease_coverage(const scenario::scenario& sc, sim::scheduler& sched, const redis_node& node, const server_side& server);

  void on(const fact::acquiring& f) override { set(f.worker, client_phase::acquiring); }
  void on(const fact::sent_without_permit& f) override { set(f.worker, client_phase::holding); }
  void on(const fact::granted& f) override { set(f.worker, client_phase::holding); }
  void on(const fact::gave_up& f) override { set(f.worker, client_phase::between); }
  void on(const fact::served& f) override { set(f.worker, client_phase::releasing); }
  void on(const fact::left_item& f) override { set(f.worker, client_phase::between); }
  void on(const fact::worker_crashed& f) override;
  void on(const fact::worker_restarted& f) override;
  void on(const fact::call_sent& f) override;
  void on(const fact::call_ended& f) override;
  void on(const fact::fault_began& f) override;
  void on(const fact::permit_lost& f) override {
    if (f.current) ++lost_under_holder_;
  }

  // The counts into the run's record (its coverage), with the near misses read from its metrics.
  void write(run_record& rec, std::int64_t portal_cap) const;

  client_phase phase_of(std::size_t wi) const;

 private:
  void set(std::size_t wi, client_phase p);
  void hit(std::size_t bucket);

  const scenario::scenario& sc_;
  sim::scheduler& sched_;
  const redis_node& node_;
  const server_side& server_;
  std::int64_t limit_;
  struct worker {
    client_phase phase = client_phase::between;
    bool alive = true;
    std::uint32_t renewals = 0;  // renewal calls in flight
  };
  std::vector<worker> workers_;
  std::vector<std::uint64_t> counts_;  // per bucket
  std::uint64_t lost_under_holder_ = 0;
};

}  // namespace admit::world::lease
