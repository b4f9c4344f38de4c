#include "sim/explore/exhaustive.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <stdexcept>

#include "gate/admit_assert.hpp"
#include "reports/report.hpp"
#include "sim/explore/one_variant.hpp"
#include "sim/explore/parallel_for.hpp"
#include "sim/kernel/scheduler.hpp"
#include "sim/world/fault_draw.hpp"
#include "sim/world/world.hpp"

namespace admit::explore {

namespace {

// A run's choices: a fixed prefix replayed, then the default; every point's
// candidate count recorded. With `strict`, a run that reaches fewer points
// than the prefix names, or a point with fewer candidates, is an error (a
// replayed order that does not fit the run); without it, it cannot happen
// (the search replays prefixes of runs it has seen, and runs are
// deterministic), which the assertions check.
class path_chooser final : public sim::tie_chooser {
 public:
  struct point {
    std::uint32_t choice;
    std::uint32_t candidates;
  };
  std::vector<point> path;  // in: the prefix to replay; out: every point of the run
  std::size_t replay = 0;   // how many points of `path` are a prefix to replay
  std::size_t depth = 0;
  std::uint64_t fingerprint = 0;
  std::optional<std::string> misfit;  // strict replay: why the order does not fit

  std::size_t choose(std::size_t n) override {
    const auto candidates = static_cast<std::uint32_t>(n);
    if (depth < replay) {
      point& p = path[depth++];
      if (p.choice >= candidates) {
        if (!misfit)
          misfit = "choice point " + std::to_string(depth - 1) + " has " + std::to_string(candidates) +
                   " candidates, not " + std::to_string(p.choice + 1);
        p.choice = 0;
      }
      p.candidates = candidates;
      return p.choice;
    }
    path.push_back(point{0, candidates});
    ++depth;
    return 0;
  }
  void finished(std::uint64_t fp) override { fingerprint = fp; }
};

// One run under `chooser` (its path and replay set by the caller).
world::run_record run_chosen(const scenario::scenario& sc, path_chooser& chooser,
                             check::trace_sink* trace_to = nullptr) {
  chooser.depth = 0;
  chooser.misfit.reset();
  std::vector<world::run_record> recs;
  {
    sim::tie_choice_scope scope(chooser);
    recs = world::run_all(sc, sc.seed, verdict_only(), trace_to);
  }
  ADMIT_ASSERT(recs.size() == 1, "one variant, one run");
  return std::move(recs.front());
}

order order_of(const std::vector<path_chooser::point>& path) {
  order o;
  for (std::size_t i = 0; i < path.size(); ++i)
    if (path[i].choice != 0) o.push_back(order_step{i, path[i].choice});
  return o;
}

}  // namespace

std::string format_order(const order& o) {
  std::string s;
  for (const auto& step : o) {
    if (!s.empty()) s += ',';
    s += std::to_string(step.point) + ":" + std::to_string(step.choice);
  }
  return s;
}

std::optional<order> parse_order(const std::string& text, std::string& error) {
  order o;
  std::size_t i = 0;
  auto number = [&](std::uint64_t& v) {
    const std::size_t start = i;
    v = 0;
    while (i < text.size() && text[i] >= '0' && text[i] <= '9') {
      if (i - start == 9) return false;  // below a billion: more points than any run reaches
      v = v * 10 + static_cast<std::uint64_t>(text[i] - '0');
      ++i;
    }
    return i != start;
  };
  while (i < text.size()) {
    order_step step;
    if (!number(step.point) || i >= text.size() || text[i] != ':' || (++i, !number(step.choice)) ||
        (i < text.size() && text[i] != ',')) {
      error = "expected POINT:CHOICE pairs separated by commas, such as \"3:1,17:2\", got \"" + text + "\"";
      return std::nullopt;
    }
    if (step.choice == 0) {
      error = "choice 0 is the default order and is not written (\"" + text + "\")";
      return std::nullopt;
    }
    if (!o.empty() && step.point <= o.back().point) {
      error = "choice points must increase (\"" + text + "\")";
      return std::nullopt;
    }
    o.push_back(step);
    if (i < text.size()) {
      ++i;
      if (i == text.size()) {
        error = "a trailing comma (\"" + text + "\")";
        return std::nullopt;
      }
    }
  }
  return o;
}

exhaustive_summary enumerate_orders(const scenario::scenario& base, const exhaustive_limits& limits) {
  exhaustive_summary sum;
  sum.seed = base.seed;
  sum.limits = limits;
  const unsigned jobs = std::max(1u, limits.jobs);
  using prefix = std::vector<std::uint32_t>;  // the choices to replay
  struct result {
    std::vector<path_chooser::point> path;
    std::uint64_t fingerprint = 0;
    run_outcome outcome;
  };
  for (const std::string& variant : variants_of(base)) {
    const scenario::scenario sc = one_variant(base, variant);
    variant_orders v;
    v.variant = variant;
    std::set<std::uint64_t> fingerprints;
    std::map<std::uint64_t, std::vector<prefix>> frontier;  // by delays
    frontier[0].push_back({});
    std::uint64_t queued = 1;  // orders run or waiting: children past max_orders are not kept
    bool cut = false;
    while (!frontier.empty()) {
      auto first = frontier.begin();
      const std::uint64_t delays = first->first;
      std::vector<prefix> level = std::move(first->second);
      frontier.erase(first);
      std::sort(level.begin(), level.end());

      std::vector<result> results(level.size());
      parallel_for(level.size(), jobs, [&](std::size_t i) {
        path_chooser chooser;
        for (std::uint32_t c : level[i]) chooser.path.push_back(path_chooser::point{c, 0});
        chooser.replay = chooser.path.size();
        const world::run_record rec = run_chosen(sc, chooser);
        ADMIT_ASSERT(!chooser.misfit && chooser.depth >= chooser.replay,
                     "a prefix fits the deterministic run it came from");
        results[i] = result{std::move(chooser.path), chooser.fingerprint, classify_run(base, rec)};
      });

      for (std::size_t i = 0; i < results.size(); ++i) {
        result& r = results[i];
        if (v.orders == 0) {
          v.choice_points_default = r.path.size();
          v.default_outcome = r.outcome;
        }
        ++v.orders;
        fingerprints.insert(r.fingerprint);
        v.choice_points_max = std::max<std::uint64_t>(v.choice_points_max, r.path.size());
        if (!r.outcome.broken.empty()) {
          ++v.violating_orders;
          if (r.outcome.counterexample) ++v.counterexample_orders;
          if (v.findings.size() < limits.findings_kept)
            v.findings.push_back(order_finding{order_of(r.path), delays, std::move(r.outcome)});
        }
        // Children: another candidate at a point past this run's own prefix.
        for (std::size_t j = level[i].size(); j < r.path.size(); ++j) {
          for (std::uint32_t c = 1; c < r.path[j].candidates; ++c) {
            if (delays + c > limits.max_delays) break;
            if (queued >= limits.max_orders) {
              cut = true;
              break;
            }
            prefix child(level[i].begin(), level[i].end());
            for (std::size_t k = level[i].size(); k < j; ++k) child.push_back(0);
            child.push_back(c);
            frontier[delays + c].push_back(std::move(child));
            ++queued;
          }
        }
      }
    }
    v.complete = !cut;
    v.distinct_fingerprints = fingerprints.size();
    sum.variants.push_back(std::move(v));
  }
  return sum;
}

run_outcome run_in_order(const scenario::scenario& base, const std::string& variant, const order& path,
                         check::trace_sink* trace_to) {
  const std::vector<std::string> names = variants_of(base);
  if (std::find(names.begin(), names.end(), variant) == names.end())
    throw std::invalid_argument(variant.empty() ? "the scenario has a lease gate: name one of its variants"
                                                : "the scenario has no lease variant \"" + variant + "\"");
  const scenario::scenario sc = one_variant(base, variant);
  path_chooser chooser;
  if (!path.empty()) chooser.path.assign(path.back().point + 1, path_chooser::point{0, 0});
  for (const auto& step : path) chooser.path[step.point].choice = static_cast<std::uint32_t>(step.choice);
  chooser.replay = chooser.path.size();
  const world::run_record rec = run_chosen(sc, chooser, trace_to);
  if (chooser.misfit) throw std::invalid_argument("the order does not fit the run: " + *chooser.misfit);
  if (chooser.depth < chooser.replay)
    throw std::invalid_argument("the order does not fit the run: it reaches " + std::to_string(chooser.depth) +
                                " choice points, the order names point " + std::to_string(chooser.replay - 1));
  return classify_run(base, rec);
}

}  // namespace admit::explore
