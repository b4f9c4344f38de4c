// lease_timeline: what the lease world records over time for the HTML report
// (the run record's timeline): the three levels, the fault windows and one
// lane per early item.
//
// It hears the world's facts (facts.hpp): the members of the gate key
// after a script, the open connections at the portal, the items waiting; it
// samples all three at the instant one of them changes, and fills the lanes
// from the items' facts (arrived, granted, at the portal, gave up, ended). A
// run without a timeline (lease_run_options::timeline off) does not
// subscribe it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>

#include "sim/kernel/scheduler.hpp"
#include "sim/world/fault_window_of.hpp"
#include "sim/world/lease/facts.hpp"
#include "sim/world/series_sampler.hpp"
#include "sim/world/timeline.hpp"

namespace admit::world::lease {

class lease_timeline final : public fact_sink {
 public:
  // `series`: the run record's timeline.
  lease_timeline(sim::scheduler& sched, timeline& series) : sched_(sched), series_(series) {}

  void on(const fact::script_ran& f) override { set_members(f.members); }
  void on(const fact::split_add& f) override { set_members(f.members); }
  void on(const fact::portal_opened& f) override {
    set_portal_open(f.at.open);
    if (lane* l = series_.lane_for(f.number)) l->work_start_ns = sched_.now_ns();
  }
  void on(const fact::portal_closed& f) override {
    set_portal_open(f.at.open);
    if (lane* l = series_.lane_for(f.number)) l->work_end_ns = sched_.now_ns();
  }
  void on(const fact::client_left& f) override {
    if (lane* l = series_.lane_for(f.number)) l->gave_up_ns = sched_.now_ns();
  }
  void on(const fact::granted& f) override {
    if (lane* l = series_.lane_for(f.number)) {
      l->granted_ns = sched_.now_ns();
      l->worker = static_cast<std::int64_t>(f.worker);
    }
  }
  void on(const fact::item_queued& f) override {
    set_waiting(f.waiting);
    if (f.requeued) return;
    if (lane* l = series_.lane_for(f.number)) l->arrived_ns = sched_.now_ns();
  }
  void on(const fact::item_taken& f) override { set_waiting(f.waiting); }
  void on(const fact::item_ended& f) override {
    if (lane* l = series_.lane_for(f.number)) {
      l->ended_ns = sched_.now_ns();
      l->outcome = f.how;
    }
  }
  void on(const fact::fault_began& f) override { series_.add_window(window_of(f.spec, sched_.now_ns())); }

 private:
  void set_members(std::int64_t n) {
    members_ = n;
    sample();
  }
  void set_portal_open(std::int64_t n) {
    portal_open_ = n;
    sample();
  }
  void set_waiting(std::size_t n) {
    waiting_ = static_cast<std::int64_t>(n);
    sample();
  }
  void sample() { sampler_.sample(series_, sched_.now_ns(), members_, portal_open_, waiting_); }

  sim::scheduler& sched_;
  timeline& series_;
  series_sampler sampler_;
  std::int64_t members_ = 0;
  std::int64_t portal_open_ = 0;
  std::int64_t waiting_ = 0;
};

}  // namespace admit::world::lease
