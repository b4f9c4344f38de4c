// seed_source: what each seed of a search runs (`admitsim explore --search`).
//
// A search hands its seeds, in order, to a source that plans each one: the
// scenario the seed runs (the file's faults and its drawn ones, explicit) and
// the seed the world runs it with. Three strategies:
//
//   plain   every seed runs the scenario as `admitsim run --seed S` does: its
//           rates at their full bounds, drawn with the seed;
//   swarm   (the default) each seed draws its own rates within the bounds
//           (swarm.hpp), then its faults from them;
//   guided  swarm testing with feedback. The source learns, in seed order,
//           which coverage buckets (docs/explore.md, "Coverage") each judged
//           seed hit, and scores it: each bucket it hit counts 1 / (1 + the
//           earlier seeds that hit it), a near miss four times the share of
//           earlier clean seeds that did not reach it. Each seed
//           is, by a fair coin of its own stream ("explore/guided"), either
//           a tuned swarm draw or a mutant:
//           - tuned: the swarm's parameters (each kind off or in a quarter of
//             [1, bound] per hour; mean_duration, max_step and
//             max_replication_lag each in a quarter of [bound / 10, bound])
//             are drawn half the time uniformly and half the time in
//             proportion to the mean near-miss score of the seeds that drew
//             the same choice (a choice never drawn counts as the best), then
//             a value uniform in the quarter, then the faults by the world's
//             rule;
//           - mutant: a corpus entry (the 64 heaviest seeds among those that
//             hit a bucket no seed had hit, or a near miss), picked in
//             proportion to its score / (1 + its mutants so far): its workload
//             (its run seed; 1 time in 8 the new seed's) with one to three of
//             its drawn faults moved, lengthened or shortened, added, removed,
//             retargeted or, for a clock step, redrawn.
//           Both stay inside the scenario's fault model: kinds it draws, rates
//           within their bounds, times before `until`, lengths within
//           1ns..24h ending by the liveness horizon, steps within `max_step`,
//           the nodes it has.
//
// Determinism. plan(k) of a guided source is made once the outcomes of the
// seeds before k - guided_lag are learned, and only those: the planner runs on
// the thread that hands the outcomes on in seed order, so a guided search
// gives the same seeds, plans and findings for every --jobs (at most
// guided_lag seeds run at once). plain and swarm plans depend on the seed
// alone and are made on the threads that run them.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sim/explore/swarm.hpp"
#include "sim/scenario/scenario.hpp"

namespace admit::explore {

enum class search_strategy : std::uint8_t { plain, swarm, guided };

const char* to_string(search_strategy s);
std::optional<search_strategy> parse_search_strategy(std::string_view text);

// How many seeds a guided search plans ahead of the outcomes it learned (and so runs at once).
inline constexpr std::uint64_t guided_lag = 4;
// The corpus of a guided search: past this many entries a new one replaces the lightest.
inline constexpr std::size_t guided_corpus_max = 64;
// A mutant never has more drawn faults than this (nor more than the entry it came from plus one).
inline constexpr std::size_t guided_faults_max = 1'000;

// What one seed of a search runs.
struct seed_plan {
  std::uint64_t seed = 0;      // the search's seed (what the reports name)
  std::uint64_t run_seed = 0;  // the world's seed: workload randomness (a guided mutant keeps its entry's)
  explored_scenario e;         // e.sc is what runs: e.sc.seed == run_seed, no rates, every fault explicit
  std::string origin;          // guided: "tuned swarm" or "mutant of seed N: ..."; otherwise empty
  std::vector<std::uint8_t> arms;  // a guided tuned draw's choices, one a swarm parameter (for learn)
};

struct seed_outcome;

class seed_source {
 public:
  virtual ~seed_source() = default;
  // How many seeds past the last one learned plan() may be asked for; 0: plans learn nothing (any
  // order, any thread: plan() is then const in effect and safe to call concurrently).
  virtual std::uint64_t lag() const = 0;
  virtual seed_plan plan(std::uint64_t seed) = 0;
  // Called in seed order, once per planned seed, with what it gave (its plan is outcome.plan).
  virtual void learn(const seed_outcome& outcome) = 0;
};

std::unique_ptr<seed_source> make_seed_source(search_strategy s, const scenario::scenario& base);

}  // namespace admit::explore
