#include "sim/explore/sweep.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <string_view>

#include "gate/admit_assert.hpp"
#include "sim/world/coverage_buckets.hpp"
#include "sim/explore/explorer.hpp"
#include "sim/scenario/duration.hpp"
#include "sim/scenario/loader.hpp"

namespace admit::explore {

namespace {

using json = nlohmann::ordered_json;
__extension__ using i128 = __int128;  // differences of two int64 values

// Numbers are typed as decimals ("0.1", "2.25") and a person expects the grid, the midpoints and the
// widths at the inputs' decimal precision: 0.1 to 1.0 in 10 values gives 0.7, not 0.1 + 0.6 =
// 0.7000000000000001. So each is computed as one quotient of two integers in the finest decimal unit
// of its inputs, which a double division rounds once, to the double nearest the exact value (whose
// shortest spelling is then that decimal when it has one). Integers beyond 2^53 are not exact in a
// double: such values fall back to the plain arithmetic.
constexpr i128 exact_in_double = i128{1} << 53;

// The decimals of x's shortest spelling (0.25 -> 2, 3 -> 0, 1e-07 -> 7), at most 30.
int decimals_of(double x) {
  char buf[64];
  const auto [end, ec] = std::to_chars(buf, buf + sizeof buf, x);
  ADMIT_ASSERT(ec == std::errc{}, "a double's shortest spelling fits 64 characters");
  std::string_view text(buf, static_cast<std::size_t>(end - buf));
  int exponent = 0;
  if (const auto e = text.find('e'); e != std::string_view::npos) {
    const std::string_view digits = text.substr(e + 1);
    const bool minus = !digits.empty() && digits.front() == '-';
    const std::string_view magnitude = digits.substr(!digits.empty() && (digits.front() == '-' || digits.front() == '+'));
    int m = 0;
    (void)std::from_chars(magnitude.data(), magnitude.data() + magnitude.size(), m);
    exponent = minus ? -m : m;
    text = text.substr(0, e);
  }
  const auto dot = text.find('.');
  const int fraction = dot == std::string_view::npos ? 0 : static_cast<int>(text.size() - dot - 1);
  return std::clamp(fraction - exponent, 0, 30);
}

// x in units of 10^-k, if that is an integer a double holds exactly.
std::optional<i128> scaled(double x, int k) {
  const long double v = static_cast<long double>(x) * std::pow(10.0L, k);
  if (!(std::fabs(v) < static_cast<long double>(exact_in_double))) return std::nullopt;
  return static_cast<i128>(std::llround(v));
}

// num / den as the nearest double, if both are exact in a double.
std::optional<double> quotient(i128 num, i128 den) {
  ADMIT_ASSERT(den > 0, "a positive denominator");
  if (num <= -exact_in_double || num >= exact_in_double || den >= exact_in_double) return std::nullopt;
  return static_cast<double>(num) / static_cast<double>(den);
}

// The common decimal unit of a set of numbers: the finest of their decimals, and 10^that, if exact.
struct decimal_unit {
  int k = 0;
  i128 scale = 1;
};
std::optional<decimal_unit> unit_of(std::initializer_list<double> xs) {
  decimal_unit u;
  for (const double x : xs) u.k = std::max(u.k, decimals_of(x));
  if (u.k > 15) return std::nullopt;
  for (int i = 0; i < u.k; ++i) u.scale *= 10;
  return u;
}

// (b - a) / div at the decimal precision of a and b, or nullopt when that is not exact.
std::optional<double> exact_difference(double a, double b, i128 div = 1) {
  const auto u = unit_of({a, b});
  if (!u) return std::nullopt;
  const auto sa = scaled(a, u->k), sb = scaled(b, u->k);
  if (!sa || !sb) return std::nullopt;
  return quotient(*sb - *sa, u->scale * div);
}

bool less(const param_target& t, const param_value& a, const param_value& b) {
  return t.kind == param_kind::number ? a.x < b.x : a.n < b.n;
}

bool same(const param_target& t, const param_value& a, const param_value& b) {
  return !less(t, a, b) && !less(t, b, a);
}

// |a - b|, as a value of `t` (a duration's or an integer's in int64 when it fits, else saturated).
param_value distance(const param_target& t, const param_value& a, const param_value& b) {
  param_value d;
  if (t.kind == param_kind::number) {
    d.x = std::fabs(exact_difference(a.x, b.x).value_or(a.x - b.x));
    return d;
  }
  const i128 w = static_cast<i128>(a.n) - static_cast<i128>(b.n);
  const i128 abs_w = w < 0 ? -w : w;
  d.n = abs_w > INT64_MAX ? INT64_MAX : static_cast<std::int64_t>(abs_w);
  return d;
}

// The value halfway from `a` to `b` (an integer rounded toward a).
param_value midpoint(const param_target& t, const param_value& a, const param_value& b) {
  param_value m;
  if (t.kind == param_kind::number) {
    m.x = a.x + (b.x - a.x) / 2;
    if (const auto u = unit_of({a.x, b.x})) {
      const auto sa = scaled(a.x, u->k), sb = scaled(b.x, u->k);
      if (sa && sb)
        if (const auto q = quotient(*sa + *sb, u->scale * 2)) m.x = *q;
    }
    return m;
  }
  const i128 w = static_cast<i128>(b.n) - static_cast<i128>(a.n);
  m.n = static_cast<std::int64_t>(static_cast<i128>(a.n) + w / 2);
  return m;
}

bool within(const param_target& t, const param_value& width, const param_value& tol) {
  return t.kind == param_kind::number ? width.x <= tol.x : width.n <= tol.n;
}

// A width or a tolerance as the document would write it (a duration without a sign).
json width_json(const param_target& t, const param_value& w) {
  param_target unsigned_t = t;
  unsigned_t.signed_text = false;
  return value_json(unsigned_t, w);
}

// A width for people (a duration as format_duration_for_people spells it).
std::string width_text(const param_target& t, const param_value& w) {
  param_target unsigned_t = t;
  unsigned_t.signed_text = false;
  return value_text(unsigned_t, w, w.n);
}

value_result run_value(const sweep_request& req, const param_value& v) {
  const scenario::scenario sc = load_patched(req.doc, req.target, v);
  value_result out;
  out.value = v;
  for (const auto& g : sc.gates) out.portal_cap += g.cap();
  out.portal_cap = sc.service.portal_cap.value_or(out.portal_cap);
  explore_options opt;
  opt.seeds.first = 0;
  opt.seeds.count = req.seeds;
  opt.jobs = req.jobs;
  opt.stop = req.stop;
  run_explore(sc, opt, [&](seed_outcome&& o) {
    ++out.seeds_run;
    if (o.error) {
      ++out.errors;
      return;
    }
    std::map<std::string, bool> seen;
    bool cut = false;
    for (const auto& r : o.runs) {
      out.portal_inflight_max = std::max(out.portal_inflight_max, r.portal_inflight_max);
      for (const auto& b : r.broken) {
        seen[b.name] = true;
        const std::int64_t above = b.worst_value - b.worst_bound;  // 0 for an event invariant
        if (above > out.worst_overshoot || (above == out.worst_overshoot && above > 0 && b.name < out.worst_invariant)) {
          out.worst_overshoot = above;
          out.worst_invariant = b.name;
        }
      }
      cut = cut || r.inconclusive.has_value();
    }
    for (const auto& [name, yes] : seen) ++out.broken[name];
    std::vector<const check::probe_counts*> runs;
    for (const auto& r : o.runs) {
      out.ev.add_faults(r.faults_injected);
      runs.push_back(&r.coverage);
    }
    if (!seen.empty()) {
      ++out.violating;
      if (!out.first_violating_seed) out.first_violating_seed = o.seed;
    } else if (cut) {
      ++out.inconclusive;
    }
    out.ev.add_seed(o.seed, !seen.empty(), cut, runs);
  });
  ADMIT_ASSERT(out.ev.violating == out.violating && out.ev.seeds + out.inconclusive + out.errors >= out.seeds_run,
               "the value's evidence counts the seeds its figures count");
  world::drop_buckets_never_struck(out.ev.coverage, sc);
  if (out.seeds_run < req.seeds) ++out.inconclusive;  // a value cut short by a stop is judged by nothing
  return out;
}

json value_result_json(const param_target& t, const value_result& r) {
  json j;
  j["value"] = value_json(t, r.value);
  j["x"] = value_axis(t, r.value);
  j["class"] = to_string(r.cls());
  j["seeds"] = r.seeds_run;
  j["violating_seeds"] = r.violating;
  j["violation_rate"] = r.seeds_run == 0 ? 0.0 : static_cast<double>(r.violating) / static_cast<double>(r.seeds_run);
  j["inconclusive_seeds"] = r.inconclusive;
  j["error_seeds"] = r.errors;
  j["first_violating_seed"] = r.first_violating_seed ? json(*r.first_violating_seed) : json(nullptr);
  j["evidence"] = r.ev.to_json();
  j["portal_cap"] = r.portal_cap;
  j["portal_inflight_max"] = r.portal_inflight_max;
  j["worst_overshoot"] = r.worst_overshoot;
  j["worst_overshoot_invariant"] = r.worst_invariant.empty() ? json(nullptr) : json(r.worst_invariant);
  json broken = json::array();
  for (const auto& [name, n] : r.broken) {
    json b;
    b["invariant"] = name;
    b["seeds"] = n;
    broken.push_back(std::move(b));
  }
  j["broken"] = std::move(broken);
  return j;
}

}  // namespace

const char* to_string(value_class c) {
  switch (c) {
    case value_class::safe: return "safe";
    case value_class::unsafe: return "unsafe";
    case value_class::unknown: return "unknown";
  }
  return "unknown";
}

const char* to_string(boundary_kind k) {
  switch (k) {
    case boundary_kind::found: return "found";
    case boundary_kind::bracketed: return "unknown_between";
    case boundary_kind::none_all_safe: return "none_all_safe";
    case boundary_kind::none_all_unsafe: return "none_all_unsafe";
    case boundary_kind::not_monotone: return "not_monotone";
    case boundary_kind::unknown: return "no_judged_value";
  }
  return "no_judged_value";
}

value_class value_result::cls() const {
  if (violating > 0) return value_class::unsafe;
  if (seeds_run > 0 && inconclusive == 0 && errors == 0) return value_class::safe;
  return value_class::unknown;
}

scenario::scenario load_patched(const json& doc, const param_target& t, const param_value& v) {
  return scenario::load_scenario_json(patched(doc, t, v));
}

param_value default_tolerance(const param_target& t, const std::vector<param_value>& grid) {
  param_value tol;
  if (t.kind == param_kind::number) {
    double gap = 0;
    for (std::size_t i = 1; i < grid.size(); ++i) {
      const double g = exact_difference(grid[i - 1].x, grid[i].x, 16).value_or((grid[i].x - grid[i - 1].x) / 16);
      if (i == 1 || g < gap) gap = g;
    }
    const double range = grid.empty() ? 0 : grid.back().x - grid.front().x;
    tol.x = std::max(gap, range * 1e-9);
    return tol;
  }
  std::int64_t gap = 0;
  for (std::size_t i = 1; i < grid.size(); ++i) {
    const std::int64_t g = distance(t, grid[i], grid[i - 1]).n;
    if (i == 1 || g < gap) gap = g;
  }
  tol.n = std::max<std::int64_t>(1, gap / 16);
  return tol;
}

std::vector<param_value> even_grid(const param_target& t, const param_value& from, const param_value& to,
                                   std::uint64_t steps) {
  ADMIT_ASSERT(steps >= 1, "a grid of at least one value");
  std::vector<param_value> grid;
  for (std::uint64_t i = 0; i < steps; ++i) {
    param_value v;
    if (steps == 1) {
      v = from;
    } else if (t.kind == param_kind::number) {
      v.x = i + 1 == steps ? to.x : from.x + (to.x - from.x) * static_cast<double>(i) / static_cast<double>(steps - 1);
      // from + (to - from) * i / (steps - 1), as one quotient in the inputs' finest decimal unit.
      if (const auto u = unit_of({from.x, to.x})) {
        const auto a = scaled(from.x, u->k), b = scaled(to.x, u->k);
        const auto n = static_cast<i128>(steps - 1);
        if (a && b)
          if (const auto q = quotient(*a * n + (*b - *a) * static_cast<i128>(i), u->scale * n)) v.x = *q;
      }
    } else {
      const i128 w = static_cast<i128>(to.n) - static_cast<i128>(from.n);
      v.n = static_cast<std::int64_t>(static_cast<i128>(from.n) + w * static_cast<i128>(i) /
                                                                         static_cast<i128>(steps - 1));
    }
    if (grid.empty() || !same(t, grid.back(), v)) grid.push_back(v);
  }
  return grid;
}

std::int64_t text_resolution_ns(const param_target& t, const std::vector<param_value>& grid,
                                 const std::optional<param_value>& tolerance) {
  if (t.kind != param_kind::duration) return 0;
  std::int64_t res = INT64_MAX;
  for (std::size_t i = 1; i < grid.size(); ++i) res = std::min(res, distance(t, grid[i], grid[i - 1]).n);
  // A bisection's midpoints lie at least half the tolerance from the ends of their bracket.
  if (tolerance) res = std::min(res, std::max<std::int64_t>(1, tolerance->n / 2));
  return res == INT64_MAX ? 0 : res;
}

std::int64_t text_resolution_ns(const sweep_request& req) {
  return text_resolution_ns(req.target, req.grid, req.bisect ? std::optional(req.tolerance) : std::nullopt);
}

void judge_grid(const param_target& t, sweep_result& r, std::int64_t resolution_ns) {
  // The classes of the grid, in increasing order of the value.
  std::vector<std::size_t> known;
  for (std::size_t i = 0; i < r.grid.size(); ++i)
    if (r.grid[i].cls() != value_class::unknown) known.push_back(i);
  const std::size_t unknown = r.grid.size() - known.size();
  if (unknown != 0)
    r.note = std::to_string(unknown) + " of " + std::to_string(r.grid.size()) +
             " values had inconclusive or failed seeds and count as neither safe nor unsafe";
  if (known.empty()) {
    r.kind = boundary_kind::unknown;
    return;
  }
  std::size_t changes = 0, at = 0;
  for (std::size_t k = 1; k < known.size(); ++k)
    if (r.grid[known[k]].cls() != r.grid[known[k - 1]].cls()) {
      ++changes;
      at = k;
    }
  if (changes == 0) {
    r.kind = r.grid[known.front()].cls() == value_class::safe ? boundary_kind::none_all_safe
                                                              : boundary_kind::none_all_unsafe;
    return;
  }
  if (changes > 1) {
    r.kind = boundary_kind::not_monotone;
    return;
  }
  const std::size_t below = known[at - 1], above = known[at];
  r.increasing = r.grid[below].cls() == value_class::safe;
  r.safe = r.increasing ? r.grid[below].value : r.grid[above].value;
  r.unsafe = r.increasing ? r.grid[above].value : r.grid[below].value;
  if (above - below > 1) {
    // An inconclusive value between the two: the boundary may lie on either side of it.
    r.kind = boundary_kind::bracketed;
    r.note = "the value " + value_text(t, r.grid[below + 1].value, resolution_ns) +
             " between the last safe and the first unsafe value is inconclusive";
    return;
  }
  r.kind = boundary_kind::found;
}

sweep_result run_sweep(const sweep_request& req) {
  const param_target& t = req.target;
  ADMIT_ASSERT(!req.grid.empty(), "a sweep of at least one value");
  for (std::size_t i = 1; i < req.grid.size(); ++i)
    ADMIT_ASSERT(less(t, req.grid[i - 1], req.grid[i]), "a grid in increasing order");
  sweep_result r;
  auto stopped = [&] { return req.stop && req.stop(); };
  for (const auto& v : req.grid) {
    if (stopped()) {
      r.stopped = true;
      break;
    }
    r.grid.push_back(run_value(req, v));
    if (req.on_value) req.on_value(r.grid.back(), false);
  }
  if (r.stopped) {
    r.kind = boundary_kind::unknown;
    r.note = "the sweep was stopped before every value ran";
    return r;
  }

  judge_grid(t, r, text_resolution_ns(req));
  if (r.kind != boundary_kind::found || !req.bisect) return r;
  for (std::size_t step = 0; step < sweep_bisect_steps_max; ++step) {
    if (within(t, distance(t, *r.safe, *r.unsafe), req.tolerance)) break;
    const param_value mid = midpoint(t, *r.safe, *r.unsafe);
    if (same(t, mid, *r.safe) || same(t, mid, *r.unsafe)) break;  // no value between the two
    if (stopped()) {
      r.stopped = true;
      r.note = "the sweep was stopped during the bisection";
      break;
    }
    r.bisect.push_back(run_value(req, mid));
    if (req.on_value) req.on_value(r.bisect.back(), true);
    const value_class c = r.bisect.back().cls();
    if (c == value_class::unknown) {
      r.note = "the bisection stopped at " + value_text(t, mid, text_resolution_ns(req)) + ", whose seeds were inconclusive or failed";
      break;
    }
    (c == value_class::safe ? r.safe : r.unsafe) = mid;
  }
  return r;
}

std::string lease_context(const scenario::scenario& sc) {
  if (sc.gates.size() != 1 || sc.gates.front().kind != scenario::gate_kind::lease) return {};
  const scenario::lease_params& l = sc.gates.front().lease;
  if (scenario::run_count(l) != 1) return {};
  std::optional<std::int64_t> renew;
  if (!l.protocols.empty()) {
    const redis::protocol& p = *l.protocols.front().proto;
    if (p.renew) renew = redis::renew_every_ns(p, l.lease_ns).value_or(l.renew_every_ns);
  } else if (l.variants.front() == redis::variant::renewal) {
    renew = l.renew_every_ns;
  }
  std::string out = "lease " + scenario::format_duration(l.lease_ns);
  out += renew ? ", renew every " + scenario::format_duration(*renew) : std::string(", no renewal");
  return out;
}

std::string boundary_words(const sweep_request& req, const sweep_result& r) {
  const param_target& t = req.target;
  const std::string p = t.pointer;
  const std::int64_t res = text_resolution_ns(req);
  const std::string range = r.grid.empty() ? std::string()
                                           : " from " + value_text(t, r.grid.front().value, res) + " to " +
                                                 value_text(t, r.grid.back().value, res);
  const std::string seeds = std::to_string(req.seeds) + (req.seeds == 1 ? " seed" : " seeds");
  const std::string per = seeds + " each";
  auto find = [&](const param_value& v) -> const value_result* {
    for (const auto* list : {&r.grid, &r.bisect})
      for (const auto& x : *list)
        if (same(t, x.value, v)) return &x;
    return nullptr;
  };
  switch (r.kind) {
    case boundary_kind::found: {
      const value_result* bad = find(*r.unsafe);
      const std::string bad_count = bad == nullptr ? std::string()
                                                   : " (" + std::to_string(bad->violating) + " of " +
                                                         std::to_string(bad->seeds_run) + (bad->seeds_run == 1 ? " seed)" : " seeds)");
      // The two ends read apart however narrow the bracket.
      const param_value width = distance(t, *r.safe, *r.unsafe);
      const std::int64_t res_ends = std::min(res == 0 ? width.n : res, width.n);
      const std::string safe_text = value_text(t, *r.safe, res_ends), bad_text = value_text(t, *r.unsafe, res_ends);
      std::string w = r.increasing ? "safe at and below " : "safe at and above ";
      w += safe_text;
      const value_result* good = find(*r.safe);
      w += " of " + p + " (" + (good != nullptr ? good->ev.statement() : "no violation in " + seeds) + "), violations ";
      w += r.increasing ? "from " : "at and below ";
      w += bad_text;
      w += bad_count;
      w += ": the boundary lies within ";
      w += width_text(t, width);
      if (!req.context.empty()) w += ", for " + req.context;
      return w;
    }
    case boundary_kind::bracketed:
      return "no boundary claimed for " + p + ": " + r.note;
    case boundary_kind::none_all_safe:
    {
      // What "no value broke" rests on: the value judged on the fewest seeds speaks for them all.
      const value_result* weakest = nullptr;
      for (const auto& v : r.grid)
        if (v.cls() == value_class::safe && (weakest == nullptr || v.ev.seeds < weakest->ev.seeds)) weakest = &v;
      return "no boundary in range: no value of " + p + range + " broke an invariant (" + per +
             (weakest != nullptr ? "; at each value, " + weakest->ev.statement() : std::string()) + ")";
    }
    case boundary_kind::none_all_unsafe:
      return "no boundary in range: every value of " + p + range + " broke an invariant (" + per + ")";
    case boundary_kind::not_monotone: {
      std::string seq;
      for (const auto& v : r.grid) {
        if (v.cls() == value_class::unknown) continue;
        if (!seq.empty()) seq += ", ";
        seq += v.cls() == value_class::safe ? "safe at " : "violations at ";
        seq += value_text(t, v.value, res);
      }
      return "not monotone over the grid of " + p + " (" + seq + "): no boundary claimed";
    }
    case boundary_kind::unknown:
      return "no boundary in range: no value of " + p + range + " was judged (" +
             (r.stopped ? std::string("the sweep was stopped") : r.note) + ")";
  }
  return {};
}

json sweep_json(const sweep_request& req, const sweep_result& r) {
  const param_target& t = req.target;
  json out;
  json pj;
  pj["pointer"] = t.pointer;
  pj["kind"] = t.kind == param_kind::duration ? "duration" : t.kind == param_kind::integer ? "integer" : "number";
  param_value cur;
  cur.n = t.current_n;
  cur.x = t.current_x;
  pj["in_file"] = value_json(t, cur);
  out["param"] = std::move(pj);
  json sj;
  sj["first"] = 0;
  sj["per_value"] = req.seeds;
  out["seeds"] = std::move(sj);
  json grid = json::array();
  for (const auto& v : r.grid) grid.push_back(value_result_json(t, v));
  out["grid"] = std::move(grid);
  json bj;
  bj["asked"] = req.bisect;
  bj["tolerance"] = req.bisect ? width_json(t, req.tolerance) : json(nullptr);
  json steps = json::array();
  for (const auto& v : r.bisect) steps.push_back(value_result_json(t, v));
  bj["steps"] = std::move(steps);
  out["bisect"] = std::move(bj);
  json b;
  b["kind"] = to_string(r.kind);
  const bool bracket = r.safe.has_value() && r.unsafe.has_value();
  b["direction"] = bracket ? json(r.increasing ? "unsafe_above" : "unsafe_below") : json(nullptr);
  b["safe"] = bracket ? value_json(t, *r.safe) : json(nullptr);
  b["unsafe"] = bracket ? value_json(t, *r.unsafe) : json(nullptr);
  b["safe_x"] = bracket ? json(value_axis(t, *r.safe)) : json(nullptr);
  b["unsafe_x"] = bracket ? json(value_axis(t, *r.unsafe)) : json(nullptr);
  b["width"] = bracket ? width_json(t, distance(t, *r.safe, *r.unsafe)) : json(nullptr);
  b["within_tolerance"] = bracket && req.bisect && within(t, distance(t, *r.safe, *r.unsafe), req.tolerance);
  b["words"] = boundary_words(req, r);
  b["note"] = r.note;
  out["boundary"] = std::move(b);
  out["complete"] = !r.stopped;
  return out;
}

}  // namespace admit::explore
