#include "sim/world/world.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "gate/admit_assert.hpp"
#include "sim/world/fault_draw.hpp"
#include "sim/world/fifo/world.hpp"
#include "sim/world/lease_world.hpp"

namespace admit::world {

run_record run_scenario(const scenario::scenario& sc, std::uint64_t seed, check::trace_sink* trace_to) {
  for (const auto& g : sc.gates)
    if (g.kind != scenario::gate_kind::fifo)
      throw std::invalid_argument("/gates: a scenario with a lease gate runs through run_all");
  return fifo_world::run(sc, seed, {}, trace_to);
}

namespace {

// One run per lease variant, or the FIFO world's one run, of a scenario whose
// faults are all in its schedule; each run's trace between its begin and end.
std::vector<run_record> run_gates(const scenario::scenario& sc, std::uint64_t seed,
                                  const lease_run_options& lease_options, check::trace_sink* trace_to,
                                  const own_gate* own) {
  std::vector<run_record> out;
  const auto traced = [trace_to](std::string_view name, auto&& one_run) {
    if (trace_to != nullptr) trace_to->begin_run(name);
    run_record rec = one_run();
    if (trace_to != nullptr) trace_to->end_run();
    return rec;
  };
  if (scenario::world_of(sc) == check::world_fifo) {
    // The FIFO world always records its timeline and trace; of the options it reads the lanes to keep.
    out.push_back(traced("", [&] { return fifo_world::run(sc, seed, lease_options.lanes_around, trace_to, own); }));
    return out;
  }
  // The loader refuses any other gate beside a lease gate.
  ADMIT_ASSERT(sc.gates.size() == 1, "a lease scenario has exactly its one lease gate");
  lease_run_options opts = lease_options;
  opts.trace_to = trace_to;
  for (redis::variant v : sc.gates.front().lease.variants)
    out.push_back(traced(std::string(redis::to_string(v)),
                         [&] { return run_lease_scenario(sc, seed, v, opts); }));
  for (const scenario::protocol_ref& p : sc.gates.front().lease.protocols)
    out.push_back(traced(p.proto->name, [&] { return run_lease_protocol(sc, seed, p, opts); }));
  return out;
}

}  // namespace

std::string own_gate_problem(const own_gate& og) {
  const bool name_ok = !og.name.empty() && og.name.size() <= 64 &&
                       std::all_of(og.name.begin(), og.name.end(), [](char c) {
                         return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                                c == '_' || c == '.' || c == ':' || c == '-';
                       });
  if (!name_ok) return "own_gate.name: expected 1 to 64 of A-Z a-z 0-9 _ . : -, got \"" + og.name + "\"";
  if (!og.make) return "own_gate.make: expected a core factory, got an empty one";
  return "";
}

std::string own_gate_refusal(const scenario::scenario& sc) {
  for (std::size_t i = 0; i < sc.gates.size(); ++i) {
    const scenario::gate_spec& g = sc.gates[i];
    const std::string path = "/gates/" + std::to_string(i);
    if (g.kind != scenario::gate_kind::fifo)
      return path + "/kind: expected \"fifo\" (a gate core of one's own runs in FIFO gates), got a lease gate";
    if (g.fifo.mut != fifo::mutation::none)
      return path + "/mutation: expected \"none\" or \"release_before_work_ends\" with a gate core of one's own (\"" +
             std::string(fifo::to_string(g.fifo.mut)) + "\" breaks admitsim's core, which does not run)";
  }
  return "";
}

std::vector<run_record> run_all(const scenario::scenario& sc, std::uint64_t seed,
                                const lease_run_options& lease_options, check::trace_sink* trace_to,
                                const own_gate* own) {
  if (own != nullptr) {
    if (const std::string why = own_gate_problem(*own); !why.empty()) throw std::invalid_argument(why);
    if (const std::string why = own_gate_refusal(sc); !why.empty()) throw std::invalid_argument(why);
  }
  // faults.rates: the faults they give for this seed join the schedule (fault_draw.hpp).
  if (sc.faults.rates && sc.faults.rates->any())
    return run_all(with_drawn_faults(sc, seed), seed, lease_options, trace_to, own);
  std::vector<run_record> out = run_gates(sc, seed, lease_options, trace_to, own);
  // A schedule cut by the draw limit is not the one the rates describe.
  if (!sc.faults.draw_limited.empty()) {
    std::string kinds;
    for (scenario::fault_kind k : sc.faults.draw_limited)
      kinds += std::string(kinds.empty() ? "" : ", ") + scenario::fault_kind_names[static_cast<std::size_t>(k)];
    for (run_record& r : out)
      if (!r.inconclusive)
        r.inconclusive = inconclusive_reason{
            "fault_draw_limit", "faults.rates asked for more than " + std::to_string(drawn_faults_per_kind_max) +
                                    " faults of one kind before rates.until (" + kinds +
                                    "); the run used the first ones only"};
  }
  return out;
}

}  // namespace admit::world
