#include "reports/html.hpp"

#include <algorithm>
#include <bit>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "gate/admit_assert.hpp"
#include "reports/html_text.hpp"
#include "sim/check/causes.hpp"
#include "sim/scenario/duration.hpp"
#include "sim/world/world.hpp"

namespace admit::reports {

namespace {

using i64 = std::int64_t;
__extension__ using i128 = __int128;  // products of a time (up to 100 days in ns) and a width in tenths of a pixel

// --- text ----------------------------------------------------------------------------------------

std::string esc(std::string_view s) { return html_escape(s); }

// 1234567 -> "1,234,567".
std::string grouped(i64 v) {
  const std::uint64_t mag = v < 0 ? 0 - static_cast<std::uint64_t>(v) : static_cast<std::uint64_t>(v);
  const std::string digits = std::to_string(mag);
  std::string o = v < 0 ? "-" : "";
  const std::size_t n = digits.size();
  for (std::size_t i = 0; i < n; ++i) {
    if (i > 0 && (n - i) % 3 == 0) o += ',';
    o += digits[i];
  }
  return o;
}

// `scaled` hundredths, with trailing zeros of the fraction dropped: 532 -> "5.32", 150 -> "1.5".
std::string hundredths(i64 scaled) {
  std::string o = std::to_string(scaled / 100);
  const i64 frac = scaled % 100;
  if (frac != 0) {
    o += '.';
    o += static_cast<char>('0' + frac / 10);
    if (frac % 10 != 0) o += static_cast<char>('0' + frac % 10);
  }
  return o;
}

constexpr i64 us_ns = 1'000;
constexpr i64 ms_ns = 1'000'000;
constexpr i64 s_ns = 1'000'000'000;
constexpr i64 min_ns = 60 * s_ns;
constexpr i64 h_ns = 60 * min_ns;
constexpr i64 d_ns = 24 * h_ns;

// A duration for people, to two decimals at most, by integer arithmetic: "5.32s", "350ms", "1.5h".
std::string human_ns(i64 ns) {
  if (ns < 0) return "-" + human_ns(ns == INT64_MIN ? INT64_MAX : -ns);
  struct unit {
    i64 ns;
    const char* name;
  };
  static constexpr unit units[] = {{d_ns, "d"}, {h_ns, "h"}, {min_ns, "min"}, {s_ns, "s"}, {ms_ns, "ms"}, {us_ns, "µs"}};
  for (const unit& u : units) {
    if (ns < u.ns) continue;
    const i128 scaled = (static_cast<i128>(ns) * 100 + u.ns / 2) / u.ns;
    return hundredths(static_cast<i64>(scaled)) + u.name;
  }
  return std::to_string(ns) + "ns";
}

// An instant for people: below a minute as human_ns, above it to the millisecond, "2h 0min 1.512s" (the
// rounding of human_ns would call that "2h").
std::string instant_ns(i64 ns) {
  if (ns < min_ns) return human_ns(ns);
  std::string o;
  const i64 d = ns / d_ns, h = ns % d_ns / h_ns, m = ns % h_ns / min_ns, rest = ns % min_ns;
  if (d) o += std::to_string(d) + "d ";
  if (d || h) o += std::to_string(h) + "h ";
  o += std::to_string(m) + "min " + std::to_string(rest / s_ns);
  i64 frac = rest % s_ns / ms_ns;
  if (frac != 0) {
    std::string digits = std::to_string(1000 + frac).substr(1);
    while (digits.back() == '0') digits.pop_back();
    o += "." + digits;
  }
  return o + "s";
}

// A tick of a time axis (a multiple of a round step): "250ms", "5s", "1min30s", "2h15min".
std::string tick_label(i64 t) {
  if (t == 0) return "0";
  if (t < min_ns) return human_ns(t);
  std::string o;
  const i64 d = t / d_ns, h = t % d_ns / h_ns, m = t % h_ns / min_ns, s = t % min_ns / s_ns;
  if (d) o += std::to_string(d) + "d";
  if (h) o += std::to_string(h) + "h";
  if (m && d == 0) o += std::to_string(m) + "min";
  if (s && d == 0 && h == 0) o += std::to_string(s) + "s";
  return o;
}

// --- geometry ------------------------------------------------------------------------------------


class out {
 public:
  out& operator<<(std::string_view s) {
    s_ += s;
    return *this;
  }
  out& operator<<(const char* s) {
    s_ += s;
    return *this;
  }
  out& operator<<(const std::string& s) {
    s_ += s;
    return *this;
  }
  out& operator<<(char c) {
    s_ += c;
    return *this;
  }
  out& operator<<(i64 v) {
    s_ += std::to_string(v);
    return *this;
  }
  out& operator<<(int v) { return *this << static_cast<i64>(v); }
  out& operator<<(std::uint64_t v) {
    s_ += std::to_string(v);
    return *this;
  }
  out& operator<<(px p) {
    append_px(s_, p);
    return *this;
  }
  std::string take() { return std::move(s_); }

 private:
  std::string s_;
};

// Whole pixels to tenths.
constexpr i64 T(i64 pixels) { return pixels * 10; }

// Maps [d0, d1] onto [r0, r1] (tenths), clamping outside values.
struct scale {
  i64 d0 = 0, d1 = 1, r0 = 0, r1 = 10;
  i64 operator()(i64 v) const {
    v = std::clamp(v, d0, d1);
    return r0 + static_cast<i64>(static_cast<i128>(v - d0) * (r1 - r0) / (d1 - d0));
  }
};

// A round step for about `want` ticks over [0, span]: 1, 2, 5 times a power of ten.
i64 round_step(i64 span, i64 want) {
  i64 step = 1;
  for (;;) {
    for (const i64 m : {1, 2, 5}) {
      if (step > INT64_MAX / 10) return step;
      if (span / (step * m) <= want) return step * m;
    }
    step *= 10;
  }
}

// A time axis in the one unit that fits its span (µs, ms, s, min, h or d: the largest of which the
// span holds at least two), its ticks at round steps of tenths of that unit: a 3h run is labelled
// 0, 0.5, 1 ... h, an 80s one 0, 10, 20 ... s.
struct time_axis {
  i64 unit_ns = 1;
  const char* unit = "ns";
  i64 step_ns = 1;
};

time_axis fit_time_axis(i64 span_ns, i64 want) {
  struct unit {
    i64 ns;
    const char* name;
  };
  static constexpr unit units[] = {{d_ns, "d"}, {h_ns, "h"}, {min_ns, "min"}, {s_ns, "s"}, {ms_ns, "ms"}, {us_ns, "µs"}};
  time_axis a;
  for (const unit& u : units)
    if (span_ns >= 2 * u.ns) {
      a.unit_ns = u.ns;
      a.unit = u.name;
      break;
    }
  const i64 tenth = std::max<i64>(a.unit_ns / 10, 1);
  a.step_ns = tenth * round_step(std::max<i64>(span_ns / tenth, 1), want);
  return a;
}

// A tick of `a` at `t` (a multiple of a tenth of its unit; negative on an axis around a moment): "2.5".
std::string axis_tick(i64 t, const time_axis& a) {
  if (t < 0) return "−" + axis_tick(-t, a);
  if (a.unit_ns < 10) return grouped(t);
  const i64 tenth = a.unit_ns / 10;
  return hundredths((t + tenth / 2) / tenth * 10);
}

// --- what a run looks like -----------------------------------------------------------------------

constexpr i64 view_w = 1200;  // the SVGs' viewBox width, pixels
constexpr i64 plot_x0 = 128;  // left edge of every time plot (room for row labels)
constexpr i64 plot_x1 = 1110;  // right edge (room for cap labels)
constexpr std::size_t label_chars_max = 18;
constexpr std::size_t clock_rows_max = 4;   // skewed clocks drawn on the timeline
constexpr std::size_t clock_notes_max = 20;  // and named in the header

std::string short_label(const std::string& s) {
  if (s.size() <= label_chars_max) return s;
  return s.substr(0, label_chars_max - 1) + "…";
}

struct first_violation {
  const world::invariant_result* inv = nullptr;  // null: none
  i64 at_ns = 0;
};

// The plot of the timeline a level invariant bounds (0 gate, 1 portal, 2 queue), or -1 (an event invariant).
int panel_of(std::string_view invariant) {
  if (invariant == "gate_inflight_le_cap") return 0;
  if (invariant == "portal_inflight_le_cap") return 1;
  if (invariant == "waiting_le_max") return 2;
  return -1;
}

// The right edge of a run's time axes: its end, or its series', with a margin so that a marker at
// the very end stays visible.
i64 axis_end_ns(const world::run_record& rec) {
  const auto& tl = rec.series;
  const i64 series_end = static_cast<i64>(tl.buckets().size()) * tl.bucket_width_ns();
  const i64 end = std::max<i64>({rec.metrics.simulated_ns, series_end, 1});
  return end + std::max<i64>(end / 40, 1);
}

// A moment a page zooms onto: a broken invariant's worst moment or its first violation, the window
// it fell in (when the record kept it), and the stretch of time the zoom shows.
struct zoom_view {
  std::string kind;  // "worst", "first", or "first-worst" (the first violation is also the worst moment)
  const world::invariant_result* inv = nullptr;
  i64 moment_ns = 0;
  bool has_value = false;  // a level invariant's value against its bound at the moment
  i64 value = 0, bound = 0;
  std::string detail;
  const check::violation_window* window = nullptr;
  std::size_t window_number = 0;  // 1-based, in the invariant's window_list
  world::time_span span;
};

constexpr i64 zoom_pad_ns = s_ns;          // at least this much shown either side of the window
constexpr i64 zoom_long_ns = 20 * s_ns;    // a window longer than this is shown around its moment only
constexpr std::size_t zoom_rows_max = 40;  // lanes in a zoom

// The window of `inv` that holds `at` (the last to start at or before it), or nullptr.
const check::violation_window* window_at(const world::invariant_result& inv, i64 at, std::size_t& number) {
  const check::violation_window* found = nullptr;
  for (std::size_t i = 0; i < inv.window_list.size(); ++i) {
    const auto& w = inv.window_list[i];
    if (w.start_ns <= at && at <= w.end_ns) {
      found = &w;
      number = i + 1;
    }
  }
  return found;
}

world::time_span zoom_span(i64 moment, const check::violation_window* w, i64 end_ns) {
  i64 a = moment, b = moment;
  if (w != nullptr) {
    a = w->start_ns;
    b = std::max(w->end_ns, w->start_ns);
  }
  if (b - a > zoom_long_ns) {
    a = std::max(a, moment - zoom_long_ns / 2);
    b = std::min(b, moment + zoom_long_ns / 2);
  }
  const i64 pad = std::max<i64>((b - a) / 3, zoom_pad_ns);
  return world::time_span{std::max<i64>(0, a - pad), std::min(end_ns, b + pad)};
}

// The zooms of a run: its worst moment (of the level invariant furthest above its bound, the first
// violation's own when it is a level one) and its first violation; one when they are the same.
std::vector<zoom_view> find_zooms(const world::run_record& rec) {
  std::vector<zoom_view> out;
  const world::invariant_result* first = nullptr;
  for (const auto& inv : rec.invariants)
    if (inv.first && (first == nullptr || inv.first->at_ns < first->first->at_ns)) first = &inv;
  if (first == nullptr) return out;
  const i64 end = axis_end_ns(rec);
  const world::invariant_result* worst = first->worst ? first : nullptr;
  if (worst == nullptr)
    for (const auto& inv : rec.invariants)
      if (inv.worst && (worst == nullptr || inv.worst->value - inv.worst->bound > worst->worst->value - worst->worst->bound))
        worst = &inv;
  zoom_view f;
  f.kind = "first";
  f.inv = first;
  f.moment_ns = first->first->at_ns;
  f.detail = first->first->detail;
  f.window = window_at(*first, f.moment_ns, f.window_number);
  if (f.window != nullptr && f.window->start_ns != f.moment_ns) f.window = nullptr;
  if (worst != nullptr) {
    zoom_view w;
    w.kind = "worst";
    w.inv = worst;
    w.moment_ns = worst->worst->at_ns;
    w.has_value = true;
    w.value = worst->worst->value;
    w.bound = worst->worst->bound;
    w.detail = worst->worst->detail;
    w.window = window_at(*worst, w.moment_ns, w.window_number);
    if (worst == first && (w.moment_ns == f.moment_ns || (w.window != nullptr && w.window == f.window))) {
      w.kind = "first-worst";
      w.span = zoom_span(w.moment_ns, w.window, end);
      out.push_back(std::move(w));
      return out;
    }
    w.span = zoom_span(w.moment_ns, w.window, end);
    out.push_back(std::move(w));
  }
  f.span = zoom_span(f.moment_ns, f.window, end);
  out.push_back(std::move(f));
  return out;
}

// Whether `rec` kept the lane of every request whose life meets `span`: it kept them all, or the
// span ends before the last of its first lanes arrived, or the run kept the lanes around it.
bool lanes_cover(const world::run_record& rec, const world::time_span& span) {
  const auto& tl = rec.series;
  if (rec.metrics.requests <= static_cast<std::uint64_t>(tl.lanes().size())) return true;
  if (tl.lanes().size() == world::timeline::max_lanes && tl.lanes().back().arrived_ns > span.to_ns) return true;
  if (tl.span_lanes_dropped()) return false;
  return std::any_of(tl.lane_spans().begin(), tl.lane_spans().end(), [&](const world::time_span& s) {
    return s.from_ns <= span.from_ns && span.to_ns <= s.to_ns;
  });
}

struct run_view {
  const scenario::scenario* sc = nullptr;
  const world::run_record* rec = nullptr;
  std::string anchor;       // element id of its section
  std::string title;        // scenario name, or "variant seed"
  bool lease = false;
  i64 gate_cap = 0;
  i64 portal_cap = 0;
  i64 waiting_cap = -1;     // FIFO: the gates' total max_waiting
  i64 end_ns = 1;           // right edge of the time axis
  first_violation first;
  bool marker_id = false;   // this run's marker carries id="violation-marker" (the first in the page)
  std::size_t fifo_gates = 0;  // FIFO: how many gates the gate and queue plots sum over
  std::string gate_names;      // FIFO with several gates: their names, ", "-separated
  std::vector<zoom_view> zooms;
};

first_violation find_first(const world::run_record& rec) {
  first_violation f;
  for (const auto& inv : rec.invariants) {
    if (!inv.first) continue;
    if (f.inv == nullptr || inv.first->at_ns < f.at_ns) {
      f.inv = &inv;
      f.at_ns = inv.first->at_ns;
    }
  }
  return f;
}

run_view make_view(const scenario::scenario& sc, const world::run_record& rec, bool per_variant) {
  run_view v;
  v.sc = &sc;
  v.rec = &rec;
  v.lease = rec.lease.has_value();
  v.anchor = per_variant ? "run-" + rec.variant : "run";
  v.title = per_variant ? "variant " + rec.variant : sc.name;
  bool all_fifo = !sc.gates.empty();
  i64 waiting = 0;
  for (const auto& g : sc.gates) {
    v.gate_cap += g.cap();
    if (g.kind != scenario::gate_kind::fifo) all_fifo = false;
    else waiting += g.fifo.max_waiting;
  }
  if (all_fifo && !v.lease) {
    v.waiting_cap = waiting;
    v.fifo_gates = sc.gates.size();
    for (const auto& g : sc.gates) v.gate_names += (v.gate_names.empty() ? "" : ", ") + g.name;
  }
  v.portal_cap = sc.service.portal_cap.value_or(v.gate_cap);
  v.end_ns = axis_end_ns(rec);
  v.first = find_first(rec);
  v.zooms = find_zooms(rec);
  return v;
}

const char* fault_colour(const std::string& kind) {
  if (kind == "partition") return "#e07b00";
  if (kind == "crash") return "#7b3fbf";
  if (kind == "pause") return "#4b6584";
  if (kind == "redis_restart") return "#a0522d";
  if (kind == "redis_failover") return "#0f8b8d";
  if (kind == "clock_step") return "#c2185b";
  if (kind == "client_timeout_burst") return "#b8860b";
  return "#6b7280";
}

const char* outcome_colour(const std::string& outcome) {
  if (outcome == "completed") return "#1e7b3c";
  if (outcome == "queue_full" || outcome == "rate_limited") return "#d9480f";
  if (outcome == "wait_timeout" || outcome == "client_timeout") return "#c0262d";
  if (outcome == "internal_error") return "#7f1d1d";
  if (outcome == "crashed") return "#7b3fbf";
  if (outcome == "cancelled") return "#6b7280";
  return "#9ca3af";  // deferred, deferred_unreachable, or anything new
}

// A skewed wall clock in a few characters: "+20s", "-1.5s 200ppm" (empty: not skewed).
std::string clock_note(const scenario::clock_spec& c) {
  std::string s;
  if (c.offset_ns != 0) s = (c.offset_ns > 0 ? "+" : "-") + human_ns(c.offset_ns > 0 ? c.offset_ns : -c.offset_ns);
  if (c.drift_ppm != 0) s += (s.empty() ? "" : " ") + std::to_string(c.drift_ppm) + "ppm";
  return s;
}

// --- the timeline --------------------------------------------------------------------------------

struct series_pick {
  i64 max_of(const world::timeline_bucket& b) const {
    return which == 0 ? b.gate_max : which == 1 ? b.portal_max : b.waiting_max;
  }
  i64 min_of(const world::timeline_bucket& b) const {
    return which == 0 ? b.gate_min : which == 1 ? b.portal_min : b.waiting_min;
  }
  int which = 0;  // 0 gate, 1 portal, 2 waiting
};

struct panel {
  std::string title;
  std::string css;     // series class: gate, portal, queue
  std::string unit;    // what the y axis counts: "permits", "connections", "requests waiting"...
  std::string invariant;  // the level invariant that bounds it
  series_pick pick;
  i64 cap = -1;        // -1: no cap line
  std::string cap_label;
  std::string cap_note;   // a second, smaller line under the cap label ("summed")
  i64 peak = 0;        // the largest value the run recorded (metrics), maybe above the series
  std::string peak_note;  // a second line under the peak ("1 in one gate", "8 asked")
  bool summed = false;    // the series sums several gates while its invariant bounds each gate
  i64 height = 150;
  // Filled while laying out:
  i64 y0 = 0;          // top, pixels
  i64 top = 1;         // value at the top edge
};

i64 series_max(const world::timeline& tl, series_pick p) {
  i64 m = 0;
  for (const auto& b : tl.buckets()) m = std::max(m, p.max_of(b));
  return m;
}

// The three plots of a run's timeline (and of its zooms), with their caps and what their axes count.
std::vector<panel> make_panels(const run_view& v) {
  const world::run_record& rec = *v.rec;
  const world::timeline& tl = rec.series;
  const bool several = v.fifo_gates > 1;
  const std::string over = several ? ", summed over the " + std::to_string(v.fifo_gates) + " gates (" + v.gate_names + ")" : "";
  std::vector<panel> panels;
  panel g;
  g.title = v.lease ? "Gate in-flight: live permits in the lease set" : "Gate in-flight: leases held" + over;
  g.css = "gate";
  g.unit = v.lease ? "permits" : "leases";
  g.invariant = "gate_inflight_le_cap";
  g.pick.which = 0;
  g.cap = v.gate_cap;
  g.cap_label = v.lease ? "limit " + grouped(v.gate_cap) : "cap " + grouped(v.gate_cap);
  g.peak = series_max(tl, g.pick);
  g.summed = several;
  if (several) {
    // The plot is the sum; gate_inflight_le_cap holds per gate (the metric is the most any one gate held).
    g.cap_note = "summed";
    g.peak_note = grouped(rec.metrics.gate_inflight_max) + " in one gate";
  } else {
    g.peak = std::max(g.peak, rec.metrics.gate_inflight_max);
  }
  panels.push_back(g);
  panel p;
  p.title = v.lease ? "Portal in-flight: open connections (an attempt above the cap is refused)"
                    : "Portal in-flight: requests working at the portal";
  p.css = "portal";
  p.unit = v.lease ? "connections" : "requests";
  p.invariant = "portal_inflight_le_cap";
  p.pick.which = 1;
  p.cap = v.portal_cap;
  p.cap_label = "cap " + grouped(v.portal_cap);
  p.peak = rec.metrics.portal_inflight_max;
  if (rec.lease && rec.lease->portal_attempted_max > p.peak)
    p.peak_note = grouped(rec.lease->portal_attempted_max) + " asked";
  panels.push_back(p);
  panel q;
  q.title = v.lease ? "Queue: items waiting for a worker" : "Queue: requests waiting in the gates" + over;
  q.css = "queue";
  q.unit = v.lease ? "items waiting" : "requests waiting";
  q.invariant = "waiting_le_max";
  q.pick.which = 2;
  q.height = 100;
  // The series is the total over the gates (the metric is per gate): its own maximum is the peak.
  q.peak = series_max(tl, q.pick);
  q.summed = several;
  if (several) q.peak_note = grouped(rec.metrics.waiting_max) + " in one gate";
  if (v.waiting_cap >= 0) {
    // A bound far above anything the run reached would flatten the plot: then it is only named.
    if (v.waiting_cap <= 2 * std::max<i64>(q.peak, 1)) {
      q.cap = v.waiting_cap;
      q.cap_label = "max " + grouped(v.waiting_cap);
      if (several) q.cap_note = "summed";
    } else {
      q.title += " (max_waiting " + grouped(v.waiting_cap) + (several ? " summed" : "") + ", off the scale)";
    }
  }
  panels.push_back(q);
  return panels;
}

// Fault windows packed into rows so that labels do not overlap (at most `rows_max` rows).
struct placed_window {
  const world::fault_window* w;
  std::size_t row;
};

std::vector<placed_window> pack_windows(const std::vector<world::fault_window>& ws, const scale& x,
                                        std::size_t rows_max, std::size_t& rows_used) {
  std::vector<placed_window> out;
  std::vector<i64> row_end;  // tenths
  for (const auto& w : ws) {
    const std::string label = w.kind + (w.target.empty() ? "" : " " + w.target);
    const i64 x0 = x(w.start_ns);
    const i64 x1 = std::max(x(w.end_ns), x0 + T(2));
    const i64 extent = std::max(x1, x0 + T(6) + static_cast<i64>(label.size()) * 66);
    std::size_t row = row_end.size();
    for (std::size_t r = 0; r < row_end.size(); ++r)
      if (row_end[r] + T(6) <= x0) {
        row = r;
        break;
      }
    if (row == row_end.size()) {
      if (row_end.size() < rows_max) row_end.push_back(0);
      else row = static_cast<std::size_t>(std::min_element(row_end.begin(), row_end.end()) - row_end.begin());
    }
    row_end[row] = std::max(row_end[row], extent);
    out.push_back(placed_window{&w, row});
  }
  rows_used = row_end.size();
  return out;
}

// The step path over the buckets of one series that meet [from_ns, to_ns]: the maximum as the upper
// edge; with `band`, the minimum back as the lower edge (a closed area).
std::string series_path(const world::timeline& tl, series_pick p, const scale& x, const scale& y, bool band,
                        i64 from_ns = 0, i64 to_ns = INT64_MAX) {
  struct seg {
    i64 x0, x1, vmax, vmin;
  };
  std::vector<seg> segs;
  const auto& bs = tl.buckets();
  const i64 w = tl.bucket_width_ns();
  for (std::size_t i = 0; i < bs.size(); ++i) {
    const i64 start = static_cast<i64>(i) * w;
    if (start + w <= from_ns) continue;
    if (start > to_ns) break;
    const i64 vmax = p.max_of(bs[i]), vmin = p.min_of(bs[i]);
    const i64 a = x(start), b = x(start + w);
    if (!segs.empty() && segs.back().vmax == vmax && segs.back().vmin == vmin) {
      segs.back().x1 = b;
      continue;
    }
    segs.push_back(seg{a, b, vmax, vmin});
  }
  if (segs.empty()) return {};
  out o;
  o << 'M' << px{segs.front().x0} << ' ' << px{y(segs.front().vmax)};
  for (const seg& s : segs) o << 'V' << px{y(s.vmax)} << 'H' << px{s.x1};
  if (band) {
    for (auto it = segs.rbegin(); it != segs.rend(); ++it) o << 'V' << px{y(it->vmin)} << 'H' << px{it->x0};
    o << 'Z';
  }
  return o.take();
}

// Every stretch of buckets whose maximum is above the cap, as a red area from the cap up to the
// maximum, at least 3 pixels wide and high: one request over a cap of thousands still shows.
std::string over_cap_path(const world::timeline& tl, series_pick p, const scale& x, const scale& y, i64 cap,
                          i64 from_ns = 0, i64 to_ns = INT64_MAX) {
  out o;
  const auto& bs = tl.buckets();
  const i64 w = tl.bucket_width_ns();
  for (std::size_t i = 0; i < bs.size();) {
    const i64 start = static_cast<i64>(i) * w;
    if (p.max_of(bs[i]) <= cap || start + w <= from_ns) {
      ++i;
      continue;
    }
    if (start > to_ns) break;
    std::size_t j = i;
    i64 high = 0;
    while (j < bs.size() && p.max_of(bs[j]) > cap) high = std::max(high, p.max_of(bs[j++]));
    i64 x0 = x(start), x1 = x(static_cast<i64>(j) * w);
    if (x1 - x0 < T(3)) {
      x0 -= (T(3) - (x1 - x0)) / 2;
      x1 = x0 + T(3);
    }
    const i64 yc = y(cap), yh = std::min(y(high), yc - T(3));
    o << 'M' << px{x0} << ' ' << px{yc} << 'V' << px{yh} << 'H' << px{x1} << 'V' << px{yc} << 'Z';
    i = j;
  }
  return o.take();
}

// A window of a broken invariant in words: "window 3 of 25, 11.38s – 11.4s (20ms), peak 8 > 4 at 11.39s".
std::string window_words(const world::invariant_result& inv, const check::violation_window& w, std::size_t number) {
  std::string s = inv.name + ": ";
  if (!inv.level) return s + "at " + instant_ns(w.start_ns) + ": " + w.detail;
  s += "window " + std::to_string(number) + " of " + grouped(static_cast<i64>(inv.windows)) + ", " +
       instant_ns(w.start_ns) + " – " + instant_ns(w.end_ns) + (w.open_at_end ? " (still open at the end)" : "") + " (" +
       human_ns(w.end_ns - w.start_ns) + "), peak " + grouped(w.peak) + " > " + grouped(w.bound) + " at " +
       instant_ns(w.peak_ns);
  return s;
}

// The violation windows of the broken invariants as shaded spans over [y0, y1] (pixels): a level
// invariant's over its own plot (`panels`, when given), an event invariant's across all of them.
// Only windows that meet [from_ns, to_ns] are drawn.
void violation_windows(out& o, const world::run_record& rec, const scale& x, const std::vector<panel>* panels,
                       i64 y0, i64 y1, i64 from_ns = 0, i64 to_ns = INT64_MAX) {
  for (const auto& inv : rec.invariants) {
    if (inv.holds || inv.window_list.empty()) continue;
    i64 top = y0, bottom = y1;
    const int pi = panel_of(inv.name);
    if (panels != nullptr && pi >= 0) {
      const panel& p = (*panels)[static_cast<std::size_t>(pi)];
      top = p.y0;
      bottom = p.y0 + p.height;
    }
    for (std::size_t i = 0; i < inv.window_list.size(); ++i) {
      const auto& w = inv.window_list[i];
      if (w.end_ns < from_ns || w.start_ns > to_ns) continue;
      i64 a = x(w.start_ns), b = x(w.end_ns);
      if (b - a < T(2)) {
        a -= (T(2) - (b - a)) / 2;
        b = a + T(2);
      }
      o << "<rect class=\"violation-window" << (inv.level ? "" : " event") << "\" data-invariant=\"" << esc(inv.name)
        << "\" x=\"" << px{a} << "\" y=\"" << top << "\" width=\"" << px{b - a} << "\" height=\"" << bottom - top
        << "\"><title>" << esc(window_words(inv, w, i + 1)) << "</title></rect>\n";
    }
  }
}

// How a broken invariant's windows add up, for a plot's title: "25 windows, 5.93s above the cap".
std::string windows_summary(const world::invariant_result& inv) {
  if (inv.holds) return {};
  const i64 n = static_cast<i64>(inv.windows);
  if (!inv.level) return grouped(n) + (n == 1 ? " failed step" : " failed steps");
  std::string s = grouped(n) + (n == 1 ? " violation window, " : " violation windows, ") +
                  human_ns(inv.time_in_violation_ns) + " above its bound";
  if (inv.window_list.size() < inv.windows)
    s += " (the first " + grouped(static_cast<i64>(inv.window_list.size())) + " shaded)";
  return s;
}

const world::invariant_result* find_invariant(const world::run_record& rec, std::string_view name) {
  for (const auto& inv : rec.invariants)
    if (inv.name == name) return &inv;
  return nullptr;
}

// A plot's y axis: grid lines, ticks and, turned up along the axis, what it counts.
void y_axis(out& o, const scale& ys, i64 top_value, i64 y0, i64 height, const std::string& unit) {
  const i64 step = round_step(top_value, 4);
  for (i64 val = 0; val <= top_value; val += step) {
    o << "<line class=\"grid\" x1=\"" << plot_x0 << "\" x2=\"" << plot_x1 << "\" y1=\"" << px{ys(val)} << "\" y2=\""
      << px{ys(val)} << "\"/><text class=\"tick\" x=\"" << plot_x0 - 6 << "\" y=\"" << px{ys(val) + 35}
      << "\" text-anchor=\"end\">" << grouped(val) << "</text>\n";
  }
  const i64 ux = plot_x0 - 44, uy = y0 + height / 2;
  o << "<text class=\"axis-unit\" x=\"" << ux << "\" y=\"" << uy << "\" text-anchor=\"middle\" transform=\"rotate(-90 "
    << ux << ' ' << uy << ")\">" << esc(unit) << "</text>\n";
}

void timeline_svg(out& o, const run_view& v) {
  const world::run_record& rec = *v.rec;
  const world::timeline& tl = rec.series;
  const scale x{0, v.end_ns, T(plot_x0), T(plot_x1)};
  std::vector<panel> panels = make_panels(v);

  // Skewed clocks hold for the whole run: drawn as rows above the fault windows (lease runs, where
  // workers read their own clocks), a few at most.
  std::vector<std::string> clocks;
  if (v.lease) {
    const auto& fleet = v.sc->fleet;
    if (const std::string c = clock_note(fleet.clock); !c.empty())
      clocks.push_back("every worker's wall clock " + c + " (the whole run)");
    for (const auto& [w, c] : fleet.clocks) {
      if (clock_note(c).empty()) continue;
      if (clocks.size() == clock_rows_max) {
        clocks.back() = "clocks of " + grouped(static_cast<i64>(fleet.clocks.size())) + " workers skewed (listed above)";
        break;
      }
      clocks.push_back("worker:" + std::to_string(w) + " wall clock " + clock_note(c) + " (the whole run)");
    }
  }

  // Vertical layout.
  i64 y = 30;  // room for the violation label
  std::size_t rows = 0;
  std::vector<placed_window> placed = pack_windows(tl.windows(), x, 6, rows);
  const i64 strip_y0 = y;
  constexpr i64 row_h = 17;
  const i64 windows_y0 = strip_y0 + 18 + static_cast<i64>(clocks.size()) * row_h;
  if (rows > 0 || !clocks.empty()) y = windows_y0 + static_cast<i64>(rows) * row_h + 6;
  for (panel& p : panels) {
    y += 22;  // the panel's title
    p.y0 = y;
    i64 vmax = std::max({series_max(tl, p.pick), p.peak, p.cap, i64{1}});
    if (const auto* inv = find_invariant(rec, p.invariant); inv != nullptr && inv->worst && !p.summed)
      vmax = std::max(vmax, inv->worst->value);
    const i64 step = round_step(vmax, 4);
    p.top = (vmax / step + 1) * step;
    y += p.height + 8;
  }
  const i64 plots_y1 = y - 8;
  const i64 height = y + 26;

  o << "<svg class=\"timeline\" viewBox=\"0 0 " << view_w << ' ' << height
    << "\" xmlns=\"http://www.w3.org/2000/svg\" role=\"img\" aria-label=\"timeline of " << esc(v.title) << "\">\n";

  // Panel backgrounds, then the fault shading over all of them.
  for (const panel& p : panels)
    o << "<rect class=\"plot-bg\" x=\"" << plot_x0 << "\" y=\"" << p.y0 << "\" width=\"" << plot_x1 - plot_x0
      << "\" height=\"" << p.height << "\"/>\n";

  // X grid and axis.
  const time_axis axis = fit_time_axis(v.end_ns, 10);
  for (i64 t = 0; t <= v.end_ns; t += axis.step_ns) {
    const i64 xt = x(t);
    o << "<line class=\"grid\" x1=\"" << px{xt} << "\" x2=\"" << px{xt} << "\" y1=\"" << panels.front().y0
      << "\" y2=\"" << plots_y1 << "\"/>";
    o << "<text class=\"tick\" x=\"" << px{xt} << "\" y=\"" << plots_y1 + 16 << "\" text-anchor=\"middle\">"
      << esc(axis_tick(t, axis)) << "</text>\n";
    if (t > INT64_MAX - axis.step_ns) break;
  }
  o << "<text class=\"axis-label\" x=\"" << plot_x1 << "\" y=\"" << height - 4
    << "\" text-anchor=\"end\">simulated time (" << axis.unit << ")</text>\n";

  if (!placed.empty() || !clocks.empty()) {
    o << "<text class=\"panel-title\" x=\"" << plot_x0 << "\" y=\"" << strip_y0 + 12 << "\">";
    if (!placed.empty())
      o << "Faults (" << static_cast<i64>(tl.windows().size()) << (tl.windows_dropped() ? "+, list bounded" : "") << ")"
        << (clocks.empty() ? "" : " and skewed clocks");
    else
      o << "Skewed clocks";
    o << "</text>\n";
    for (std::size_t i = 0; i < clocks.size(); ++i) {
      const i64 ry = strip_y0 + 18 + static_cast<i64>(i) * row_h;
      o << "<g class=\"clock-skew\"><line x1=\"" << plot_x0 << "\" x2=\"" << plot_x1 << "\" y1=\"" << ry + 13
        << "\" y2=\"" << ry + 13 << "\"/><text x=\"" << plot_x0 + 1 << "\" y=\"" << ry + 9 << "\">" << esc(clocks[i])
        << "</text></g>\n";
    }
    o << "<g class=\"faults\">\n";
    for (const placed_window& pw : placed) {
      const world::fault_window& w = *pw.w;
      const i64 x0 = x(w.start_ns), x1 = x(w.end_ns);
      const char* colour = fault_colour(w.kind);
      const std::string label = w.kind + (w.target.empty() ? "" : " " + w.target);
      const std::string when = w.end_ns > w.start_ns ? human_ns(w.start_ns) + " – " + human_ns(w.end_ns)
                                                     : "at " + human_ns(w.start_ns);
      const i64 ry = windows_y0 + static_cast<i64>(pw.row) * row_h;
      o << "<g class=\"fault-window\" data-kind=\"" << esc(w.kind) << "\"><title>" << esc(label) << ", " << esc(when)
        << "</title>";
      // The label sits on its row; a bar under it spans the window (a diamond marks an instant).
      if (x1 > x0) {
        o << "<rect class=\"fault-shade\" x=\"" << px{x0} << "\" y=\"" << panels.front().y0 << "\" width=\""
          << px{x1 - x0} << "\" height=\"" << plots_y1 - panels.front().y0 << "\" fill=\"" << colour << "\"/>";
        o << "<rect x=\"" << px{x0} << "\" y=\"" << ry + 11 << "\" width=\"" << px{std::max(x1 - x0, T(2))}
          << "\" height=\"4\" fill=\"" << colour << "\"/>";
      } else {
        o << "<line class=\"fault-instant\" x1=\"" << px{x0} << "\" x2=\"" << px{x0} << "\" y1=\"" << ry + 9
          << "\" y2=\"" << plots_y1 << "\" stroke=\"" << colour << "\"/>";
        o << "<path d=\"M" << px{x0} << ' ' << ry + 7 << "l4 5l-4 5l-4 -5Z\" fill=\"" << colour << "\"/>";
      }
      o << "<text class=\"fault-label\" x=\"" << px{x0 + T(x1 > x0 ? 1 : 6)} << "\" y=\"" << ry + 9 << "\" style=\"fill:"
        << colour << "\">"
        << esc(label) << "</text></g>\n";
    }
    o << "</g>\n";
  }

  // The violation windows, each over the plot of the quantity it bounds.
  o << "<g class=\"violation-windows\">\n";
  violation_windows(o, rec, x, &panels, panels.front().y0, plots_y1);
  o << "</g>\n";

  for (const panel& p : panels) {
    const scale ys{0, p.top, T(p.y0 + p.height), T(p.y0)};
    const world::invariant_result* inv = find_invariant(rec, p.invariant);
    std::string title = p.title;
    if (inv != nullptr && !inv->holds) title += " — " + windows_summary(*inv);
    o << "<text class=\"panel-title\" x=\"" << plot_x0 << "\" y=\"" << p.y0 - 7 << "\">" << esc(title) << "</text>\n";
    y_axis(o, ys, p.top, p.y0, p.height, p.unit);
    const std::string band = series_path(tl, p.pick, x, ys, true);
    const std::string line = series_path(tl, p.pick, x, ys, false);
    if (!line.empty()) {
      o << "<g class=\"series " << p.css << "\"><title>" << esc(p.title) << ": highest and lowest per "
        << esc(human_ns(tl.bucket_width_ns())) << "</title><path class=\"band\" d=\"" << band
        << "\"/><path class=\"line\" d=\"" << line << "\"/></g>\n";
      if (p.cap >= 0) {
        const std::string over_path = over_cap_path(tl, p.pick, x, ys, p.cap);
        if (!over_path.empty())
          o << "<path class=\"over-cap\" d=\"" << over_path << "\"><title>above the cap</title></path>\n";
      }
    }
    if (p.cap >= 0) {
      // The cap's label beside its line, below the peak's lines in the margin when they would meet.
      const i64 peak_bottom = T(p.y0 + (p.peak_note.empty() ? 10 : 22));
      const i64 label_y = std::max(ys(p.cap) + 35, peak_bottom + T(13));
      o << "<line class=\"cap-line\" data-cap=\"" << p.cap << "\" x1=\"" << plot_x0 << "\" x2=\"" << plot_x1
        << "\" y1=\"" << px{ys(p.cap)} << "\" y2=\"" << px{ys(p.cap)} << "\"/><text class=\"cap-label\" x=\""
        << plot_x1 + 6 << "\" y=\"" << px{label_y} << "\">" << esc(p.cap_label) << "</text>\n";
      if (!p.cap_note.empty())
        o << "<text class=\"cap-note\" x=\"" << plot_x1 + 6 << "\" y=\"" << px{label_y + T(11)} << "\">"
          << esc(p.cap_note) << "</text>\n";
    }
    if (inv != nullptr && inv->worst) {
      // The worst moment: the value furthest above the bound. The series may not hold it (a lease
      // world's portal refuses an attempt above its cap, and it is the attempt that is judged); on
      // a plot that sums several gates it is one gate's, and named only.
      const i64 xw = x(inv->worst->at_ns);
      const std::string words = grouped(inv->worst->value) + " &gt; " +
                                (p.summed ? "max " + grouped(inv->worst->bound) + " in one gate" : esc(p.cap_label));
      if (p.summed) {
        o << "<g class=\"violation-peak summed\"><title>" << esc(inv->worst->detail) << "</title><text x=\""
          << px{xw + T(6)} << "\" y=\"" << p.y0 + 12 << "\">worst " << words << "</text></g>\n";
      } else {
        const i64 py = ys(inv->worst->value);
        const bool right = xw > T(plot_x1 - 200);
        o << "<g class=\"violation-peak\"><title>" << esc(inv->worst->detail) << "</title><line x1=\"" << px{xw}
          << "\" x2=\"" << px{xw} << "\" y1=\"" << px{ys(p.cap)} << "\" y2=\"" << px{py} << "\"/><circle cx=\""
          << px{xw} << "\" cy=\"" << px{py} << "\" r=\"5\"/><text x=\"" << px{right ? xw - T(9) : xw + T(9)}
          << "\" y=\"" << px{py + 40} << "\"" << (right ? " text-anchor=\"end\"" : "") << ">worst " << words
          << "</text></g>\n";
      }
    }
    o << "<text class=\"peak-label\" x=\"" << plot_x1 + 6 << "\" y=\"" << p.y0 + 10 << "\">max " << grouped(p.peak)
      << "</text>\n";
    if (!p.peak_note.empty())
      o << "<text class=\"peak-label\" x=\"" << plot_x1 + 6 << "\" y=\"" << p.y0 + 22 << "\">" << esc(p.peak_note)
        << "</text>\n";
  }

  if (v.first.inv != nullptr) {
    const i64 xv = x(v.first.at_ns);
    const bool right = xv > T(plot_x1 - 360);
    o << "<g class=\"violation\"><title>" << esc(v.first.inv->first->detail) << "</title><line class=\"violation-marker\""
      << (v.marker_id ? " id=\"violation-marker\"" : "") << " data-invariant=\"" << esc(v.first.inv->name)
      << "\" data-at-ns=\"" << v.first.at_ns << "\" x1=\"" << px{xv} << "\" x2=\"" << px{xv} << "\" y1=\"16\" y2=\""
      << plots_y1 << "\"/><text class=\"violation-label\" x=\"" << px{xv + (right ? -T(6) : T(6))} << "\" y=\"14\""
      << (right ? " text-anchor=\"end\"" : "") << ">first violation: " << esc(v.first.inv->name) << " at "
      << esc(human_ns(v.first.at_ns)) << "</text></g>\n";
  }
  o << "</svg>\n";
}

// --- waiting-time histogram ----------------------------------------------------------------------

// The log-linear index of check::histogram (64 sub-buckets per power of two), as an axis position.
i64 log_index(i64 v) {
  if (v < check::histogram::sub_count) return v;
  const auto u = static_cast<std::uint64_t>(v);
  const int msb = 63 - std::countl_zero(u);
  const int shift = msb - check::histogram::sub_bits;
  return static_cast<i64>(shift + 1) * check::histogram::sub_count +
         static_cast<i64>((u >> shift) & (check::histogram::sub_count - 1));
}

void histogram_svg(out& o, const run_view& v) {
  const check::histogram& h = v.rec->metrics.wait_ns;
  const auto buckets = h.nonempty();
  if (buckets.empty()) {
    o << "<p class=\"empty\">No request was granted a lease: no waiting times to show.</p>\n";
    return;
  }
  // Display bins of an eighth of a power of two; zero waits (admitted at once) get their own bar.
  constexpr i64 per_bin = 8;
  std::map<i64, std::pair<std::pair<i64, i64>, std::uint64_t>> bins;  // bin -> ((low, high), count)
  std::uint64_t zero = 0;
  for (const auto& b : buckets) {
    if (b.high == 0) {
      zero += b.count;
      continue;
    }
    const i64 bin = log_index(b.low) / per_bin;
    auto [it, fresh] = bins.try_emplace(bin, std::pair<i64, i64>{b.low, b.high}, 0);
    if (!fresh) it->second.first.second = b.high;
    it->second.second += b.count;
  }
  std::uint64_t count_max = zero;
  for (const auto& [bin, b] : bins) count_max = std::max(count_max, b.second);

  constexpr i64 top = 22, plot_h = 150;
  const i64 height = top + plot_h + 44;
  const i64 zero_x0 = plot_x0, zero_x1 = plot_x0 + 36;
  const i64 log_x0 = zero_x1 + 20;
  i64 lo = 0, hi = 1;
  if (!bins.empty()) {
    lo = bins.begin()->first * per_bin;
    hi = (bins.rbegin()->first + 1) * per_bin;
    // At least a few powers of two wide, so a narrow distribution is not one fat bar.
    const i64 want = 4 * check::histogram::sub_count;
    if (hi - lo < want) {
      const i64 grow = want - (hi - lo);
      lo = std::max<i64>(0, lo - grow / 2);
      hi = lo + want;
    }
  }
  const scale x{lo, hi, T(log_x0), T(plot_x1)};
  const i64 cstep = round_step(static_cast<i64>(count_max), 4);
  const i64 ctop = (static_cast<i64>(count_max) / cstep + 1) * cstep;
  const scale y{0, ctop, T(top + plot_h), T(top)};

  o << "<svg class=\"histogram\" viewBox=\"0 0 " << view_w << ' ' << height
    << "\" xmlns=\"http://www.w3.org/2000/svg\" role=\"img\" aria-label=\"waiting-time histogram\">\n";
  o << "<rect class=\"plot-bg\" x=\"" << zero_x0 << "\" y=\"" << top << "\" width=\"" << zero_x1 - zero_x0
    << "\" height=\"" << plot_h << "\"/><rect class=\"plot-bg\" x=\"" << log_x0 << "\" y=\"" << top << "\" width=\""
    << plot_x1 - log_x0 << "\" height=\"" << plot_h << "\"/>\n";
  for (i64 c = 0; c <= ctop; c += cstep)
    o << "<line class=\"grid\" x1=\"" << zero_x0 << "\" x2=\"" << plot_x1 << "\" y1=\"" << px{y(c)} << "\" y2=\""
      << px{y(c)} << "\"/><text class=\"tick\" x=\"" << plot_x0 - 6 << "\" y=\"" << px{y(c) + 35}
      << "\" text-anchor=\"end\">" << grouped(c) << "</text>\n";
  o << "<text class=\"axis-label\" x=\"" << plot_x0 - 6 << "\" y=\"" << top - 8
    << "\" text-anchor=\"end\">requests</text>\n";
  // Ticks at 1, 2 and 5 times powers of ten within the range; only the powers of ten (then every
  // other one) when that makes too many.
  {
    std::vector<std::pair<i64, bool>> ticks;  // (value, a power of ten)
    for (i64 p = 1; p <= INT64_MAX / 10; p *= 10)
      for (const i64 m : {1, 2, 5}) {
        const i64 pos = log_index(p * m);
        if (pos >= lo && pos <= hi) ticks.emplace_back(p * m, m == 1);
      }
    if (ticks.size() > 12) std::erase_if(ticks, [](const auto& t) { return !t.second; });
    std::size_t stride = 1;
    while (ticks.size() / stride > 12) stride *= 2;
    for (std::size_t i = 0; i < ticks.size(); i += stride) {
      const i64 xt = x(log_index(ticks[i].first));
      o << "<line class=\"grid\" x1=\"" << px{xt} << "\" x2=\"" << px{xt} << "\" y1=\"" << top << "\" y2=\""
        << top + plot_h << "\"/><text class=\"tick\" x=\"" << px{xt} << "\" y=\"" << top + plot_h + 16
        << "\" text-anchor=\"middle\">" << esc(tick_label(ticks[i].first)) << "</text>\n";
    }
  }
  o << "<text class=\"tick\" x=\"" << (zero_x0 + zero_x1) / 2 << "\" y=\"" << top + plot_h + 16
    << "\" text-anchor=\"middle\">0</text>";
  o << "<text class=\"axis-label\" x=\"" << plot_x1 << "\" y=\"" << height - 4
    << "\" text-anchor=\"end\">waiting time, arrival to lease (log scale)</text>\n";
  if (zero > 0)
    o << "<rect class=\"hist-bar zero\" x=\"" << zero_x0 + 6 << "\" y=\"" << px{y(static_cast<i64>(zero))}
      << "\" width=\"" << zero_x1 - zero_x0 - 12 << "\" height=\"" << px{T(top + plot_h) - y(static_cast<i64>(zero))}
      << "\"><title>" << grouped(static_cast<i64>(zero)) << " admitted at once (0 ns)</title></rect>\n";
  for (const auto& [bin, b] : bins) {
    const i64 x0 = x(bin * per_bin), x1 = x((bin + 1) * per_bin);
    const i64 c = static_cast<i64>(b.second);
    o << "<rect class=\"hist-bar\" x=\"" << px{x0} << "\" y=\"" << px{y(c)} << "\" width=\""
      << px{std::max<i64>(x1 - x0 - 4, 4)} << "\" height=\"" << px{T(top + plot_h) - y(c)} << "\"><title>"
      << esc(human_ns(b.first.first)) << " – " << esc(human_ns(b.first.second)) << ": " << grouped(c)
      << "</title></rect>\n";
  }
  // Percentiles as the JSON report gives them, labels staggered so that close ones stay readable.
  struct mark {
    const char* name;
    i64 value;
  };
  const mark marks[] = {{"p50", h.percentile(500)}, {"p90", h.percentile(900)}, {"p99", h.percentile(990)},
                        {"max", h.max()}};
  i64 last_x = -T(1000);
  int level = 0;
  for (const mark& m : marks) {
    if (m.value == 0) continue;
    const i64 xm = x(log_index(m.value) + 1);
    level = xm - last_x > T(95) ? 0 : level + 1;
    last_x = xm;
    const bool right = xm > T(plot_x1 - 90);
    o << "<g class=\"percentile\"><title>" << m.name << " " << esc(human_ns(m.value)) << "</title><line x1=\""
      << px{xm} << "\" x2=\"" << px{xm} << "\" y1=\"" << top << "\" y2=\"" << top + plot_h << "\"/><text x=\""
      << px{xm + (right ? -T(3) : T(3))} << "\" y=\"" << top + 11 + 13 * level << "\""
      << (right ? " text-anchor=\"end\"" : "") << ">" << m.name << ' ' << esc(human_ns(m.value)) << "</text></g>\n";
  }
  o << "</svg>\n";
}

// --- swimlanes -----------------------------------------------------------------------------------

std::string lane_title(const world::lane& l, bool lease) {
  std::string s = (lease ? "item " : "request ") + std::to_string(l.number);
  if (!l.id.empty()) s += " (" + l.id + ")";
  if (l.worker >= 0) s += ", worker " + std::to_string(l.worker);
  s += ": arrived " + human_ns(l.arrived_ns);
  if (l.granted_ns >= 0) s += ", lease " + human_ns(l.granted_ns);
  if (l.work_start_ns >= 0)
    s += ", portal " + human_ns(l.work_start_ns) + " – " + (l.work_end_ns >= 0 ? human_ns(l.work_end_ns) : "(open)");
  if (l.gave_up_ns >= 0) s += ", client gave up " + human_ns(l.gave_up_ns);
  if (l.ended_ns >= 0) s += ", ended " + human_ns(l.ended_ns) + " " + l.outcome;
  else s += ", still open when the run ended";
  return s;
}

// Rows of a lease run's swimlanes come in groups, one per worker (the worker that got the permit).
struct lane_group {
  std::string label;
  std::string title;
  std::size_t first = 0;  // row index
  std::size_t count = 0;
};

// One lane's row between y0 and y0 + h: waiting, holding, working, the give-up and the outcome.
// `open_end`: where what never ended stops; a mark outside [from_ns, to_ns] is not drawn (a zoom's
// scale clamps the bars to its edges).
void lane_row(out& o, const world::lane& l, const scale& x, i64 y0, i64 h, i64 open_end, bool labels, bool lease,
              const std::string& row_label, i64 from_ns = 0, i64 to_ns = INT64_MAX, bool zoomed = false) {
  const i64 ended = l.ended_ns >= 0 ? l.ended_ns : open_end;
  o << (zoomed ? "<g class=\"lane zoomed\"><title>" : "<g class=\"lane\"><title>") << esc(lane_title(l, lease)) << "</title>";
  if (labels)
    o << "<text class=\"row-label\" x=\"" << plot_x0 - 6 << "\" y=\"" << px{T(y0) + T(h) / 2 + 35}
      << "\" text-anchor=\"end\">" << esc(row_label) << "</text>";
  // Waiting: arrival to the lease, or to the end for a request never granted one.
  const i64 wait_to = l.granted_ns >= 0 ? l.granted_ns : ended;
  if (wait_to > l.arrived_ns) {
    const i64 a = x(l.arrived_ns), b = x(wait_to);
    o << "<rect class=\"seg-wait\" x=\"" << px{a} << "\" y=\"" << px{T(y0) + T(h) * 3 / 8} << "\" width=\""
      << px{std::max<i64>(b - a, 5)} << "\" height=\"" << px{std::max<i64>(T(h) / 4, 10)} << "\"/>";
  }
  if (l.granted_ns >= 0) {
    const i64 a = x(l.granted_ns), b = x(ended);
    o << "<rect class=\"seg-hold\" x=\"" << px{a} << "\" y=\"" << y0 << "\" width=\"" << px{std::max<i64>(b - a, 5)}
      << "\" height=\"" << h << "\"/>";
  }
  if (l.work_start_ns >= 0) {
    const i64 a = x(l.work_start_ns), b = x(l.work_end_ns >= 0 ? l.work_end_ns : open_end);
    o << "<rect class=\"seg-work\" x=\"" << px{a} << "\" y=\"" << px{T(y0) + T(h) / 4} << "\" width=\""
      << px{std::max<i64>(b - a, 5)} << "\" height=\"" << px{std::max<i64>(T(h) / 2, 10)} << "\"/>";
  }
  if (l.gave_up_ns >= from_ns && l.gave_up_ns <= to_ns) {
    const i64 a = x(l.gave_up_ns), sz = std::clamp<i64>(T(h) * 3 / 10, 15, 40);
    o << "<path class=\"gave-up\" d=\"M" << px{a - sz} << ' ' << px{T(y0) + T(h) / 2 - sz} << 'l' << px{2 * sz} << ' '
      << px{2 * sz} << "m0 " << px{-2 * sz} << 'l' << px{-2 * sz} << ' ' << px{2 * sz} << "\"/>";
  }
  if (l.ended_ns >= from_ns && l.ended_ns <= to_ns) {
    const i64 a = x(l.ended_ns);
    o << "<rect class=\"outcome\" x=\"" << px{a} << "\" y=\"" << y0 << "\" width=\"" << px{25} << "\" height=\"" << h
      << "\" fill=\"" << outcome_colour(l.outcome) << "\"/>";
    if (labels)
      o << "<text class=\"outcome-label\" x=\"" << px{a + T(6)} << "\" y=\"" << px{T(y0) + T(h) / 2 + 35} << "\">"
        << esc(l.outcome) << "</text>";
  }
  o << "</g>\n";
}

void swimlane_svg(out& o, const run_view& v) {
  const world::run_record& rec = *v.rec;
  std::vector<const world::lane*> rows;
  for (const auto& l : rec.series.lanes())
    if (l.number != 0 && l.arrived_ns >= 0) rows.push_back(&l);
  if (rows.empty()) return;

  // The time axis: the whole run when every request has a lane, else the lanes' own extent.
  i64 end_ns = v.end_ns;
  const bool all = rec.metrics.requests <= static_cast<std::uint64_t>(rows.size());
  if (!all) {
    i64 last = 1;
    for (const auto* l : rows)
      last = std::max({last, l->arrived_ns, l->granted_ns, l->work_end_ns, l->ended_ns, l->gave_up_ns});
    end_ns = last + std::max<i64>(last / 40, 1);
  }
  const i64 open_end = all ? rec.metrics.simulated_ns : end_ns;
  const scale x{0, end_ns, T(plot_x0), T(plot_x1)};

  std::vector<lane_group> groups;
  if (v.lease) {
    // Grouped per worker, in item order within a group; items never granted a permit last.
    std::stable_sort(rows.begin(), rows.end(), [](const world::lane* a, const world::lane* b) {
      const i64 wa = a->worker < 0 ? INT64_MAX : a->worker, wb = b->worker < 0 ? INT64_MAX : b->worker;
      return wa < wb;
    });
    for (std::size_t i = 0; i < rows.size(); ++i) {
      if (i > 0 && rows[i]->worker == rows[i - 1]->worker) {
        ++groups.back().count;
        continue;
      }
      lane_group g;
      g.first = i;
      g.count = 1;
      if (rows[i]->worker < 0) {
        g.label = "no permit";
        g.title = "items never granted a permit: deferred, crashed before a grant, or still waiting when the run ended";
      } else {
        g.label = "worker " + std::to_string(rows[i]->worker);
        const std::string clock = clock_note(v.sc->fleet.clock_of(rows[i]->worker));
        g.title = g.label + (clock.empty() ? "" : ", wall clock " + clock);
        if (!clock.empty()) g.label += " (" + clock + ")";
      }
      groups.push_back(std::move(g));
    }
  }

  const i64 n = static_cast<i64>(rows.size());
  const i64 row_h = std::clamp<i64>(720 / n, 3, 20);
  const bool labels = row_h >= 10;
  constexpr i64 top = 8;
  const i64 height = top + n * row_h + 40;

  o << "<svg class=\"swimlanes\" viewBox=\"0 0 " << view_w << ' ' << height
    << "\" xmlns=\"http://www.w3.org/2000/svg\" role=\"img\" aria-label=\"swimlanes\">\n";
  o << "<rect class=\"plot-bg\" x=\"" << plot_x0 << "\" y=\"" << top << "\" width=\"" << plot_x1 - plot_x0
    << "\" height=\"" << n * row_h << "\"/>\n";
  for (std::size_t gi = 0; gi < groups.size(); ++gi) {
    const lane_group& g = groups[gi];
    const i64 gy = top + static_cast<i64>(g.first) * row_h, gh = static_cast<i64>(g.count) * row_h;
    o << "<g class=\"lane-group\"><title>" << esc(g.title) << "</title>";
    if (gi % 2 == 1)
      o << "<rect class=\"row-stripe\" x=\"4\" y=\"" << gy << "\" width=\"" << plot_x1 - 4 << "\" height=\"" << gh
        << "\"/>";
    if (gh >= 11)
      o << "<text class=\"group-label\" x=\"8\" y=\"" << px{T(gy) + T(gh) / 2 + 35} << "\">" << esc(g.label)
        << "</text>";
    o << "</g>\n";
  }
  const time_axis axis = fit_time_axis(end_ns, 10);
  for (i64 t = 0; t <= end_ns; t += axis.step_ns) {
    const i64 xt = x(t);
    o << "<line class=\"grid\" x1=\"" << px{xt} << "\" x2=\"" << px{xt} << "\" y1=\"" << top << "\" y2=\""
      << top + n * row_h << "\"/><text class=\"tick\" x=\"" << px{xt} << "\" y=\"" << top + n * row_h + 16
      << "\" text-anchor=\"middle\">" << esc(axis_tick(t, axis)) << "</text>\n";
    if (t > INT64_MAX - axis.step_ns) break;
  }
  o << "<text class=\"axis-label\" x=\"" << plot_x1 << "\" y=\"" << height - 4
    << "\" text-anchor=\"end\">simulated time (" << axis.unit << ")</text>\n";
  for (const auto& w : rec.series.windows()) {
    if (w.start_ns > end_ns) continue;
    const i64 x0 = x(w.start_ns), x1 = x(w.end_ns);
    o << "<rect class=\"fault-shade\" x=\"" << px{x0} << "\" y=\"" << top << "\" width=\"" << px{std::max(x1 - x0, T(1))}
      << "\" height=\"" << n * row_h << "\" fill=\"" << fault_colour(w.kind) << "\"/>\n";
  }

  const i64 gap = row_h >= 6 ? std::max<i64>(1, row_h / 8) : 0;
  for (i64 ri = 0; ri < n; ++ri) {
    const world::lane& l = *rows[static_cast<std::size_t>(ri)];
    lane_row(o, l, x, top + ri * row_h + gap, row_h - 2 * gap, open_end, labels, v.lease,
             short_label(l.id.empty() ? "#" + std::to_string(l.number) : l.id));
  }
  if (v.first.inv != nullptr && v.first.at_ns <= end_ns) {
    const i64 xv = x(v.first.at_ns);
    o << "<line class=\"violation-marker\" data-invariant=\"" << esc(v.first.inv->name) << "\" x1=\"" << px{xv}
      << "\" x2=\"" << px{xv} << "\" y1=\"" << top << "\" y2=\"" << top + n * row_h << "\"/>\n";
  }
  o << "</svg>\n";
}

// --- zooms onto the moments that matter ----------------------------------------------------------

// The lanes of the requests whose life meets `span`, at most zoom_rows_max: those alive at the moment
// first, then the nearest to it; in arrival order. `total` says how many met the span.
std::vector<const world::lane*> zoom_lanes(const world::run_record& rec, const zoom_view& z, std::size_t& total) {
  const world::time_span span = z.span;
  std::vector<const world::lane*> met;
  auto consider = [&](const world::lane& l) {
    if (l.number != 0 && l.meets(span)) met.push_back(&l);
  };
  for (const auto& l : rec.series.lanes()) consider(l);
  for (const auto& l : rec.series.span_lanes()) consider(l);
  total = met.size();
  if (met.size() > zoom_rows_max) {
    // How far a lane's life is from the moment (0: alive then).
    auto distance = [&](const world::lane* l) {
      const i64 last = l->open() ? INT64_MAX : l->last_ns();
      if (l->arrived_ns > z.moment_ns) return l->arrived_ns - z.moment_ns;
      return last >= z.moment_ns ? i64{0} : z.moment_ns - last;
    };
    std::stable_sort(met.begin(), met.end(),
                     [&](const world::lane* a, const world::lane* b) { return distance(a) < distance(b); });
    met.resize(zoom_rows_max);
  }
  std::sort(met.begin(), met.end(), [](const world::lane* a, const world::lane* b) { return a->number < b->number; });
  return met;
}

std::string zoom_heading(const zoom_view& z) {
  if (z.kind == "worst") return "The worst moment";
  if (z.kind == "first") return "The first violation";
  return "The first violation, which is also the worst moment";
}

// One zoom: the moment in words, then one picture on one time axis centred on it: the plot of the
// quantity it broke (for an event invariant, the gate's in-flight as context) at the series'
// resolution, the violation and fault windows, and the lanes of the requests active then.
void zoom_panel(out& o, const run_view& v, const zoom_view& z) {
  const world::run_record& rec = *v.rec;
  const world::timeline& tl = rec.series;
  const world::invariant_result& inv = *z.inv;
  const i64 from = z.span.from_ns, to = std::max(z.span.to_ns, z.span.from_ns + 1);
  const scale x{from, to, T(plot_x0), T(plot_x1)};
  std::vector<panel> panels = make_panels(v);
  const int pi = panel_of(inv.name);
  panel p = panels[static_cast<std::size_t>(pi >= 0 ? pi : 0)];

  std::size_t met = 0;
  const std::vector<const world::lane*> rows = zoom_lanes(rec, z, met);
  const bool covered = lanes_cover(rec, z.span);

  o << "<div class=\"zoom\" id=\"" << esc(v.anchor) << "-zoom-" << z.kind << "\" data-zoom=\"" << z.kind
    << "\" data-invariant=\"" << esc(inv.name) << "\" data-at-ns=\"" << z.moment_ns << "\">\n<h3>" << zoom_heading(z)
    << ": <code>" << esc(inv.name) << "</code> at " << esc(instant_ns(z.moment_ns)) << "</h3>\n<p class=\"zoom-facts\">";
  if (z.has_value)
    o << "<b>" << grouped(z.value) << " against a bound of " << grouped(z.bound) << "</b> (" << esc(z.detail) << ")";
  else
    o << esc(z.detail);
  o << ". At " << z.moment_ns << " ns";
  if (z.window != nullptr && inv.level)
    o << ", in violation window " << z.window_number << " of " << grouped(static_cast<i64>(inv.windows)) << " ("
      << esc(instant_ns(z.window->start_ns)) << " – " << esc(instant_ns(z.window->end_ns))
      << (z.window->open_at_end ? ", still open at the end" : "") << ")";
  o << ". Shown: " << esc(instant_ns(from)) << " – " << esc(instant_ns(to)) << ".</p>\n";

  // Layout: the plot, then one row per lane, then the axis.
  constexpr i64 top = 24, plot_h = 110;  // room above the plot for its title
  const i64 n = static_cast<i64>(rows.size());
  const i64 row_h = n == 0 ? 0 : std::clamp<i64>(480 / n, 9, 16);
  const i64 lanes_y0 = top + plot_h + 14;
  const i64 lanes_y1 = lanes_y0 + n * row_h;
  const i64 axis_y = (n == 0 ? top + plot_h : lanes_y1) + 16;
  const i64 height = axis_y + 16;
  p.y0 = top;
  p.height = plot_h;
  {
    i64 vmax = std::max({series_max(tl, p.pick), p.cap, i64{1}});
    if (z.has_value && !p.summed) vmax = std::max(vmax, z.value);
    const i64 step = round_step(vmax, 4);
    p.top = (vmax / step + 1) * step;
  }
  const scale ys{0, p.top, T(p.y0 + p.height), T(p.y0)};

  o << "<svg class=\"zoom-plot\" viewBox=\"0 0 " << view_w << ' ' << height
    << "\" xmlns=\"http://www.w3.org/2000/svg\" role=\"img\" aria-label=\"" << esc(zoom_heading(z)) << "\">\n";
  o << "<rect class=\"plot-bg\" x=\"" << plot_x0 << "\" y=\"" << p.y0 << "\" width=\"" << plot_x1 - plot_x0
    << "\" height=\"" << p.height << "\"/>\n";
  if (n > 0)
    o << "<rect class=\"plot-bg\" x=\"" << plot_x0 << "\" y=\"" << lanes_y0 << "\" width=\"" << plot_x1 - plot_x0
      << "\" height=\"" << lanes_y1 - lanes_y0 << "\"/>\n";

  // The axis, in time from the moment.
  const time_axis axis = fit_time_axis(to - from, 8);
  const i64 y_bottom = n == 0 ? top + plot_h : lanes_y1;
  for (i64 k = (from - z.moment_ns) / axis.step_ns; z.moment_ns + k * axis.step_ns <= to; ++k) {
    const i64 t = z.moment_ns + k * axis.step_ns;
    if (t < from) continue;
    const i64 xt = x(t);
    o << "<line class=\"grid\" x1=\"" << px{xt} << "\" x2=\"" << px{xt} << "\" y1=\"" << top << "\" y2=\"" << y_bottom
      << "\"/><text class=\"tick\" x=\"" << px{xt} << "\" y=\"" << axis_y << "\" text-anchor=\"middle\">"
      << (k > 0 ? "+" : "") << esc(axis_tick(k * axis.step_ns, axis)) << "</text>\n";
  }
  o << "<text class=\"axis-label\" x=\"" << plot_x1 << "\" y=\"" << height - 2 << "\" text-anchor=\"end\">time from "
    << (z.kind == "first" ? "the first violation" : "the worst moment") << " (" << axis.unit << ")</text>\n";

  // Faults and violation windows in the span, over the plot and the lanes.
  for (const auto& w : tl.windows()) {
    if (w.end_ns < from || w.start_ns > to) continue;
    const i64 a = x(w.start_ns), b = std::max(x(w.end_ns), a + T(2));
    // Labelled with its times: in a zoom the axis counts from the moment, not from the start.
    const std::string label =
        w.kind + (w.target.empty() ? "" : " " + w.target) + ", " +
        (w.end_ns > w.start_ns ? instant_ns(w.start_ns) + " – " + instant_ns(w.end_ns) : "at " + instant_ns(w.start_ns));
    o << "<g class=\"zoom-fault\" data-kind=\"" << esc(w.kind) << "\"><title>" << esc(label)
      << "</title><rect class=\"fault-shade\" x=\"" << px{a} << "\" y=\"" << top << "\" width=\"" << px{b - a}
      << "\" height=\"" << y_bottom - top << "\" fill=\"" << fault_colour(w.kind) << "\"/><text class=\"fault-label\" x=\""
      << px{std::max(a, T(plot_x0)) + T(3)} << "\" y=\"" << top + 11 << "\" style=\"fill:" << fault_colour(w.kind)
      << "\">" << esc(label) << "</text></g>\n";
  }
  o << "<g class=\"violation-windows zoomed\">\n";
  violation_windows(o, rec, x, nullptr, top, y_bottom, from, to);
  o << "</g>\n";

  // The plot: the series at its resolution; for the portal, when every lane of the stretch is kept, also
  // the exact count of the lanes working at the portal (each one's work start to end), which a bucket of a
  // long run cannot show.
  y_axis(o, ys, p.top, p.y0, p.height, p.unit);
  const bool exact = pi == 1 && covered;
  const std::string band = series_path(tl, p.pick, x, ys, true, from, to);
  const std::string line = series_path(tl, p.pick, x, ys, false, from, to);
  if (!line.empty())
    o << "<g class=\"series " << p.css << (exact ? " coarse" : "") << "\"><title>" << esc(p.title)
      << ": highest and lowest per " << esc(human_ns(tl.bucket_width_ns())) << "</title><path class=\"band\" d=\""
      << band << "\"/><path class=\"line\" d=\"" << line << "\"/></g>\n";
  if (exact) {
    std::map<i64, i64> delta;  // instant -> change of the count
    i64 level = 0;
    auto add = [&](i64 t, i64 d) {
      if (t <= from) level += d;
      else if (t <= to) delta[t] += d;
    };
    auto at_portal = [&](const world::lane& l) {
      if (l.number == 0 || l.work_start_ns < 0 || !l.meets(z.span)) return;
      add(l.work_start_ns, 1);
      if (l.work_end_ns >= 0) add(l.work_end_ns, -1);
    };
    for (const auto& l : tl.lanes()) at_portal(l);
    for (const auto& l : tl.span_lanes()) at_portal(l);
    out path;
    path << 'M' << px{x(from)} << ' ' << px{ys(level)};
    for (const auto& [t, d] : delta) {
      level += d;
      path << 'H' << px{x(t)} << 'V' << px{ys(level)};
    }
    path << 'H' << px{x(to)};
    o << "<g class=\"series " << p.css << " exact\"><title>" << esc(p.unit)
      << " at the portal, exact: the lanes working there</title><path class=\"line\" d=\"" << path.take()
      << "\"/></g>\n";
  }
  if (p.cap >= 0)
    o << "<line class=\"cap-line zoomed\" data-cap=\"" << p.cap << "\" x1=\"" << plot_x0 << "\" x2=\"" << plot_x1 << "\" y1=\""
      << px{ys(p.cap)} << "\" y2=\"" << px{ys(p.cap)} << "\"/><text class=\"cap-label\" x=\"" << plot_x1 + 6
      << "\" y=\"" << px{ys(p.cap) + 35} << "\">" << esc(p.cap_label) << "</text>\n";
  o << "<text class=\"panel-title\" x=\"" << plot_x0 << "\" y=\"" << p.y0 - 7 << "\">" << esc(p.title)
    << (pi < 0 ? " (context: the invariant bounds no quantity)" : "")
    << (exact ? ": exact from the lanes (the band: per " + esc(human_ns(tl.bucket_width_ns())) + ")"
              : ", per " + esc(human_ns(tl.bucket_width_ns())))
    << "</text>\n";

  // The moment.
  const i64 xm = x(z.moment_ns);
  o << "<g class=\"zoom-moment\"><title>" << esc(z.detail) << "</title><line x1=\"" << px{xm} << "\" x2=\"" << px{xm}
    << "\" y1=\"" << top << "\" y2=\"" << y_bottom << "\"/>";
  if (z.has_value && !p.summed) {
    const i64 py = ys(z.value);
    o << "<circle cx=\"" << px{xm} << "\" cy=\"" << px{py} << "\" r=\"5\"/><text x=\"" << px{xm + T(8)} << "\" y=\""
      << px{py + 40} << "\">" << grouped(z.value) << " &gt; " << esc(p.cap_label) << "</text>";
  }
  o << "</g>\n";

  // The lanes.
  for (i64 ri = 0; ri < n; ++ri) {
    const world::lane& l = *rows[static_cast<std::size_t>(ri)];
    std::string label = l.id.empty() ? "#" + std::to_string(l.number) : short_label(l.id);
    if (l.worker >= 0) label += " w" + std::to_string(l.worker);
    const i64 gap = std::max<i64>(1, row_h / 8);
    lane_row(o, l, x, lanes_y0 + ri * row_h + gap, row_h - 2 * gap, rec.metrics.simulated_ns, true, v.lease, label,
             from, to, true);
  }
  o << "</svg>\n<p class=\"note\">";
  if (met == 0)
    o << "No request was active in this stretch.";
  else
    o << (met > rows.size() ? "The " + grouped(static_cast<i64>(rows.size())) + " of " + grouped(static_cast<i64>(met)) +
                                  (v.lease ? " items" : " requests") + " active in this stretch nearest the moment"
                            : "The " + grouped(static_cast<i64>(met)) + (v.lease ? " items" : " requests") +
                                  " active in this stretch")
      << ", in arrival order" << (v.lease ? " (w: the worker that got its permit)" : "") << ".";
  if (!covered)
    o << " <b>Not every lane of this stretch was recorded</b>: a run keeps the first "
      << grouped(static_cast<i64>(world::timeline::max_lanes))
      << " requests' lanes, and <code>admitsim run --html</code> runs the seed again to keep the lanes around each zoom.";
  o << "</p>\n</div>\n";
}

// --- tables --------------------------------------------------------------------------------------

void invariants_table(out& o, const world::run_record& rec) {
  o << "<table class=\"invariants\"><thead><tr><th>invariant</th><th>result</th><th class=\"num\">checked</th>"
       "<th>first violation</th></tr></thead><tbody>\n";
  for (const auto& inv : rec.invariants) {
    const char* cls = !inv.enabled ? "off" : inv.holds ? "ok" : "broken";
    const char* word = !inv.enabled ? "not checked" : inv.holds ? "holds" : "BROKEN";
    o << "<tr class=\"" << cls << "\"><td><code>" << esc(inv.name) << "</code></td><td>" << word
      << "</td><td class=\"num\">" << grouped(static_cast<i64>(inv.checked)) << "</td><td>";
    if (inv.first) o << esc(human_ns(inv.first->at_ns)) << ": " << esc(inv.first->detail);
    o << "</td></tr>\n";
  }
  o << "</tbody></table>\n";
}

void metric(out& o, std::string_view name, const std::string& value) {
  o << "<div><dt>" << esc(name) << "</dt><dd>" << value << "</dd></div>";
}

void metrics_grid(out& o, const run_view& v) {
  const world::run_record& rec = *v.rec;
  const world::run_metrics& m = rec.metrics;
  const auto n = [](std::uint64_t x) { return grouped(static_cast<i64>(x)); };
  o << "<dl class=\"metrics\">";
  metric(o, v.lease ? "items" : "requests", n(m.requests));
  metric(o, "completed", n(m.completed));
  for (const auto& [reason, count] : m.refused) metric(o, reason, n(count));
  metric(o, "client timeouts", n(m.client_timeouts));
  if (v.fifo_gates > 1) {
    // The metric is the most any one gate held; the caps add up over the gates, as the plot does.
    metric(o, "gate in-flight max, one gate", grouped(m.gate_inflight_max));
    metric(o, "gate in-flight max, summed", grouped(series_max(rec.series, series_pick{0})) + " / " + grouped(v.gate_cap));
  } else {
    metric(o, "gate in-flight max", grouped(m.gate_inflight_max) + " / " + grouped(v.gate_cap));
  }
  metric(o, "portal in-flight max", grouped(m.portal_inflight_max) + " / " + grouped(v.portal_cap));
  if (!v.lease) metric(o, "waiting max", grouped(m.waiting_max));
  if (rec.lease) {
    const world::lease_metrics& l = *rec.lease;
    metric(o, "holders max", grouped(l.holders_max));
    metric(o, "portal 429", n(l.portal_429));
    metric(o, "leases reaped live", n(l.leases_reaped_live));
    metric(o, "deferred", n(l.deferred));
    metric(o, "redis calls", n(l.redis_calls));
    metric(o, "redis errors", n(l.redis_errors));
    metric(o, "failed releases", n(l.failed_releases));
    metric(o, "renewals lost", n(l.renewals_lost));
    metric(o, "held tokens granted again", n(l.regrants));
    if (l.requeue_and_exit) {
      metric(o, "items requeued", n(l.items_requeued));
      metric(o, "workers exited", n(l.workers_exited));
      metric(o, "items left in the queue", n(l.items_left));
    }
  }
  metric(o, "wait p50 / p99 / max",
         esc(human_ns(m.wait_ns.percentile(500)) + " / " + human_ns(m.wait_ns.percentile(990)) + " / " +
             human_ns(m.wait_ns.max())));
  metric(o, "service p50 / p99 / max",
         esc(human_ns(m.service_ns.percentile(500)) + " / " + human_ns(m.service_ns.percentile(990)) + " / " +
             human_ns(m.service_ns.max())));
  metric(o, "simulated", esc(human_ns(m.simulated_ns)));
  metric(o, "run status", esc(sim::to_string(rec.status)));
  o << "</dl>\n";
}

// What the kernel did, on a line of its own below the run's metrics: a faster kernel changes it and
// nothing else, so the committed pages' test leaves this line out (as the catalogue's golden tests
// leave out the JSON report's diagnostics).
void diagnostics_line(out& o, const world::run_record& rec) {
  o << "<p class=\"note diagnostics\">Kernel: " << grouped(static_cast<i64>(rec.diagnostics.events))
    << " events run, " << grouped(static_cast<i64>(rec.diagnostics.sequence_numbers))
    << " sequence numbers drawn.</p>\n";
}

void faults_table(out& o, const world::timeline& tl) {
  if (tl.windows().empty()) return;
  o << "<details class=\"fault-list\"><summary>Fault windows (" << static_cast<i64>(tl.windows().size())
    << (tl.windows_dropped() ? ", and " + grouped(static_cast<i64>(tl.windows_dropped())) + " more not kept" : "")
    << ")</summary><table><thead><tr><th>kind</th><th>target</th><th>from</th><th>to</th></tr></thead><tbody>\n";
  for (const auto& w : tl.windows())
    o << "<tr><td>" << esc(w.kind) << "</td><td>" << esc(w.target) << "</td><td>" << esc(human_ns(w.start_ns))
      << "</td><td>" << (w.end_ns > w.start_ns ? esc(human_ns(w.end_ns)) : std::string("(instant)")) << "</td></tr>\n";
  o << "</tbody></table></details>\n";
}

void trace_table(out& o, const run_view& v) {
  const world::run_record& rec = *v.rec;
  if (v.first.inv == nullptr) return;
  o << "<h3>Trace before the first violation</h3>\n<p class=\"note\">The last " << static_cast<i64>(rec.trace.size())
    << " events before the first violation";
  if (rec.trace_dropped > 0) o << " (" << grouped(static_cast<i64>(rec.trace_dropped)) << " earlier ones not kept)";
  o << ".</p>\n<table class=\"trace\"><thead><tr><th>time</th><th class=\"num\">ns</th><th>source</th><th>what</th>"
       "<th class=\"num\">active</th><th class=\"num\">waiting</th><th class=\"num\">ref</th></tr></thead><tbody>\n";
  for (const auto& e : rec.trace)
    o << "<tr><td>" << esc(human_ns(e.at_ns)) << "</td><td class=\"num\">" << e.at_ns << "</td><td>" << esc(e.source)
      << "</td><td>" << esc(e.what) << "</td><td class=\"num\">" << e.active << "</td><td class=\"num\">" << e.waiting
      << "</td><td class=\"num\">" << e.ref << "</td></tr>\n";
  o << "<tr class=\"violation-row\"><td>" << esc(human_ns(v.first.at_ns)) << "</td><td class=\"num\">" << v.first.at_ns
    << "</td><td colspan=\"5\"><strong>" << esc(v.first.inv->name) << "</strong>: " << esc(v.first.inv->first->detail)
    << "</td></tr>\n</tbody></table>\n";
}

// What broke in a run, and why: one row per cause of each broken invariant (its title from the cause
// table, how many violations it gave, the designs that address it, the world's first sentence for
// it), or one row saying that no cause was identified.
void causes_table(out& o, const run_view& v) {
  const world::run_record& rec = *v.rec;
  if (!rec.any_violation()) return;
  o << "<div class=\"why\">\n<h3>What broke, and why</h3>\n<table class=\"cause-table\" data-run=\"" << esc(v.anchor)
    << "\"><thead><tr><th>invariant</th><th>how often, how bad</th><th>cause</th><th class=\"num\">count</th>"
       "<th>designs that address it</th><th>example</th></tr></thead><tbody>\n";
  for (const auto& inv : rec.invariants) {
    if (inv.holds) continue;
    std::string how = windows_summary(inv);
    if (inv.first) how += "; first at " + instant_ns(inv.first->at_ns);
    if (inv.worst)
      how += "; worst " + grouped(inv.worst->value) + " > " + grouped(inv.worst->bound) + " at " + instant_ns(inv.worst->at_ns);
    const std::size_t rows = std::max<std::size_t>(inv.causes.size(), 1);
    const std::string span = rows > 1 ? " rowspan=\"" + std::to_string(rows) + "\"" : "";
    o << "<tr class=\"broken-invariant\" data-invariant=\"" << esc(inv.name) << "\"><td" << span << "><code>"
      << esc(inv.name) << "</code></td><td" << span << ">" << esc(how) << "</td>";
    if (inv.causes.empty()) {
      o << "<td class=\"no-cause\" colspan=\"4\">no cause identified</td></tr>\n";
      continue;
    }
    for (std::size_t i = 0; i < inv.causes.size(); ++i) {
      const check::cause_count& c = inv.causes[i];
      const check::cause_info* row = check::find_cause(c.kind);
      ADMIT_ASSERT(row != nullptr, "every cause a world names is a row of the cause table");
      if (i > 0) o << "<tr class=\"cause-more\">";
      o << "<td class=\"cause\" data-kind=\"" << esc(c.kind) << "\">" << esc(row->title) << "</td><td class=\"num\">"
        << grouped(static_cast<i64>(c.count)) << "</td><td>";
      const std::string_view designs = row->designs;
      if (designs.empty()) o << "<span class=\"muted\">none of the catalogue's</span>";
      for (std::size_t from = 0; from < designs.size();) {
        std::size_t to = designs.find(", ", from);
        if (to == std::string_view::npos) to = designs.size();
        o << "<span class=\"design\">" << esc(designs.substr(from, to - from)) << "</span>";
        from = to + 2;
      }
      o << "</td><td>" << esc(c.example) << "</td></tr>\n";
    }
  }
  o << "</tbody></table>\n<p class=\"note\">Count: the violations a cause explains (a window of a level invariant "
       "explained by several lost permits counts each). The zooms below show the moments themselves.</p>\n</div>\n";
}

// --- the page ------------------------------------------------------------------------------------

constexpr const char* page_css = R"css(
:root{--ink:#1b2230;--muted:#5b6475;--line:#dde2ea;--bg:#f4f6f9;--pass:#1e7b3c;--bad:#c0262d;
--gate:#2563a8;--portal:#7c3aed;--queue:#b7791f}
*{box-sizing:border-box}
body{margin:0;background:var(--bg);color:var(--ink);font:14px/1.45 "DejaVu Sans","Liberation Sans",Arial,sans-serif}
main{max-width:1260px;margin:0 auto;padding:18px 20px 40px}
code,pre,.mono{font-family:"DejaVu Sans Mono","Liberation Mono",monospace;font-size:12.5px}
h1{font-size:20px;margin:14px 0 4px}h2{font-size:18px;margin:0 0 8px}h3{font-size:15px;margin:18px 0 6px}
.banner{display:flex;align-items:center;gap:18px;padding:14px 20px;border-radius:8px;color:#fff}
.banner.pass{background:var(--pass)}.banner.violation{background:var(--bad)}.banner.inconclusive{background:#8a6d00}
.banner .word{font-size:30px;font-weight:700;letter-spacing:.05em}
.banner .facts{font-size:15px}.banner .facts b{font-weight:700}
.desc{color:var(--muted);max-width:1100px;margin:6px 0 10px}
.replay{background:#161b26;color:#e8ebf0;padding:9px 12px;border-radius:6px;overflow-x:auto;margin:8px 0}
.replay::before{content:"replay  ";color:#8b93a7}
.meta{color:var(--muted);font-size:12.5px}
.runs{margin:12px 0}.runs td,.runs th{padding:4px 10px}
section.run{background:#fff;border:1px solid var(--line);border-radius:8px;padding:16px 18px;margin:18px 0}
.run-head{display:flex;align-items:baseline;gap:12px;flex-wrap:wrap}
.pill{display:inline-block;padding:1px 9px;border-radius:10px;color:#fff;font-weight:700;font-size:12.5px}
.pill.pass{background:var(--pass)}.pill.violation{background:var(--bad)}.pill.inconclusive{background:#8a6d00}
.pill.met{background:#e7efe9;color:var(--pass)}.pill.unmet{background:#fbe9ea;color:var(--bad)}
.first{border-left:4px solid var(--bad);background:#fdf2f2;padding:6px 10px;margin:8px 0}
table{border-collapse:collapse;font-size:12.5px;margin:4px 0}
th,td{padding:3px 8px;border-bottom:1px solid var(--line);text-align:left;vertical-align:top}
th{color:var(--muted);font-weight:600}.num{text-align:right;font-variant-numeric:tabular-nums}
tr.broken td{color:var(--bad);font-weight:600}tr.off td{color:#9aa1ad}
tr.violation-row td{background:#fdecec;color:var(--bad)}
.metrics{display:grid;grid-template-columns:repeat(auto-fill,minmax(225px,1fr));gap:2px 14px;margin:8px 0}
.metrics div{display:flex;justify-content:space-between;border-bottom:1px dotted var(--line);padding:2px 0}
.metrics dt{color:var(--muted)}.metrics dd{margin:0;font-variant-numeric:tabular-nums}
.legend{display:flex;flex-wrap:wrap;gap:4px 16px;font-size:12.5px;color:var(--muted);margin:4px 0}
.legend i{display:inline-block;width:18px;height:10px;margin-right:5px;vertical-align:-1px;border-radius:2px}
.note,.empty{color:var(--muted);font-size:12.5px;margin:4px 0}
svg{display:block;width:100%;height:auto;margin:4px 0 8px}
svg text{font-size:11px;fill:var(--muted)}
svg .panel-title{font-size:12px;font-weight:700;fill:var(--ink)}
svg .plot-bg{fill:#fbfcfd;stroke:var(--line)}
svg .grid{stroke:#e6e9ef;stroke-width:1}
svg .series .band{stroke:none;opacity:.22}svg .series .line{fill:none;stroke-width:1.6}
svg .gate .band{fill:var(--gate)}svg .gate .line{stroke:var(--gate)}
svg .portal .band{fill:var(--portal)}svg .portal .line{stroke:var(--portal)}
svg .queue .band{fill:var(--queue)}svg .queue .line{stroke:var(--queue)}
svg .over-cap{fill:var(--bad);opacity:.85}
svg .cap-line{stroke:#1b2230;stroke-width:1.4;stroke-dasharray:7 4}
svg .cap-label{font-weight:700;fill:var(--ink)}
svg .peak-label{font-size:10.5px}
svg .fault-shade{opacity:.13}svg .fault-instant{stroke-width:1.4;stroke-dasharray:3 3}
svg .fault-label{font-size:10.5px;font-weight:700}
svg .violation-marker{stroke:var(--bad);stroke-width:2.2}
svg .violation-label{fill:var(--bad);font-weight:700;font-size:12px}
svg .violation-peak circle{fill:var(--bad);stroke:#fff;stroke-width:1.5}
svg .violation-peak line{stroke:var(--bad);stroke-width:4}
svg .clock-skew line{stroke:#c2185b;stroke-width:2;stroke-dasharray:8 4}
svg .clock-skew text{fill:#c2185b;font-size:10.5px;font-weight:700}
svg .violation-peak text{fill:var(--bad);font-weight:700;font-size:12px}
svg .hist-bar{fill:#4f7cac}svg .hist-bar.zero{fill:#8aa6c4}
svg .percentile line{stroke:#1b2230;stroke-dasharray:2 3}svg .percentile text{fill:var(--ink);font-size:10.5px}
svg .row-stripe{fill:#f1f3f7}
svg .row-label{font-size:10.5px;fill:var(--ink)}
svg .group-label{font-size:11px;font-weight:700;fill:var(--ink)}
svg .seg-wait{fill:#f2c14e}
svg .seg-hold{fill:#cfe0f5;stroke:var(--gate);stroke-width:.8}
svg .seg-work{fill:var(--portal)}
svg .gave-up{stroke:var(--bad);stroke-width:1.8;fill:none}
svg .outcome-label{font-size:10px}
svg .axis-unit{font-size:10.5px;fill:var(--ink)}
svg .cap-note{font-size:9.5px}
svg .violation-window{fill:var(--bad);opacity:.16}svg .violation-window.event{opacity:.5}
svg .zoomed .violation-window{opacity:.08}
svg .series.coarse .band{opacity:.1}svg .series.coarse .line{stroke-width:1;stroke-dasharray:2 2}
svg .series.exact .line{stroke-width:2}svg .zoomed .violation-window.event{opacity:.4}
svg .violation-peak.summed text{fill:var(--bad);font-weight:700;font-size:11px}
svg .zoom-moment line{stroke:var(--bad);stroke-width:2}svg .zoom-moment circle{fill:var(--bad);stroke:#fff;stroke-width:1.5}
svg .zoom-moment text{fill:var(--bad);font-weight:700;font-size:12px}
.why{margin:10px 0}
.cause-table td.no-cause{color:var(--bad);font-style:italic}
.cause-table .design{display:inline-block;background:#eef2f8;border-radius:4px;padding:0 6px;margin:1px 4px 1px 0}
.muted{color:#9aa1ad}
.zoom{border:1px solid #f0c9cb;background:#fffafa;border-radius:6px;padding:6px 12px;margin:10px 0}
.zoom h3{margin:6px 0 4px;color:var(--bad)}.zoom-facts{margin:2px 0 4px}
)css";

// Marks the page as loaded without errors, for a reader and for the browser test.
constexpr const char* page_script = R"js(
(function () {
  var body = document.body;
  body.setAttribute("data-violation-markers", String(document.querySelectorAll(".violation-marker").length));
  body.setAttribute("data-zooms", String(document.querySelectorAll(".zoom").length));
  body.setAttribute("data-cause-tables", String(document.querySelectorAll("table.cause-table").length));
  body.setAttribute("data-script-ok", "1");
})();
)js";

void legend(out& o, bool lease) {
  o << "<div class=\"legend\"><span><i style=\"background:#f2c14e\"></i>"
    << (lease ? "waiting: arrival to the permit" : "waiting: arrival to the lease")
    << "</span><span><i style=\"background:#cfe0f5;border:1px solid #2563a8\"></i>holding the lease</span>"
       "<span><i style=\"background:#7c3aed\"></i>working at the portal</span>"
       "<span><i style=\"background:none;color:#c0262d;font-style:normal;font-weight:700;width:auto\">✕</i>client gave up"
       "</span><span><i style=\"background:#1e7b3c;width:5px\"></i>completed</span>"
       "<span><i style=\"background:#d9480f;width:5px\"></i>refused (429)</span>"
       "<span><i style=\"background:#c0262d;width:5px\"></i>timed out</span>"
       "<span><i style=\"background:#7b3fbf;width:5px\"></i>crashed</span>"
       "<span><i style=\"background:#9ca3af;width:5px\"></i>other (deferred, cancelled)</span></div>\n";
}

void run_section(out& o, const run_view& v, bool met) {
  const world::run_record& rec = *v.rec;
  const bool violated = rec.any_violation();
  o << "<section class=\"run\" id=\"" << esc(v.anchor) << "\" data-verdict=\"" << (violated ? "violation" : "pass")
    << "\">\n<div class=\"run-head\"><h2>" << esc(v.title) << "</h2><span class=\"pill "
    << (violated ? "violation" : "pass") << "\">" << (violated ? "violation" : "pass") << "</span><span class=\"pill "
    << (met ? "met" : "unmet") << "\">" << (met ? "as expected" : "NOT as expected") << "</span></div>\n";
  if (v.first.inv != nullptr)
    o << "<div class=\"first\"><strong>First violation</strong> at " << esc(human_ns(v.first.at_ns)) << " ("
      << v.first.at_ns << " ns): <code>" << esc(v.first.inv->name) << "</code>: " << esc(v.first.inv->first->detail)
      << "</div>\n";
  causes_table(o, v);
  for (const zoom_view& z : v.zooms) zoom_panel(o, v, z);
  metrics_grid(o, v);
  diagnostics_line(o, rec);

  const world::timeline& tl = rec.series;
  o << "<h3>In-flight and queue over time</h3>\n<p class=\"note\">Each plot shows, per "
    << esc(human_ns(tl.bucket_width_ns()))
    << " of simulated time, the highest value (line) and the range (band); peaks are never averaged away. "
       "Dashed: the cap. Red: above it; shaded red: the violation windows, each over the plot of what it bounds; "
       "the dot: the worst moment; the first violation is the red vertical line.</p>\n";
  timeline_svg(o, v);
  faults_table(o, tl);

  o << "<h3>Waiting time</h3>\n";
  histogram_svg(o, v);

  if (!tl.lanes().empty()) {
    const auto shown = static_cast<std::uint64_t>(tl.lanes().size());
    o << "<h3>Swimlanes</h3>\n<p class=\"note\">";
    if (shown < rec.metrics.requests)
      o << "The first " << grouped(static_cast<i64>(shown)) << " of " << grouped(static_cast<i64>(rec.metrics.requests))
        << (v.lease ? " items" : " requests") << ", on their own time axis. ";
    o << (v.lease ? "One row per item, grouped by the worker that got its permit; items that never got one last."
                  : "One row per request, in arrival order.")
      << " Hover over a row for its times."
      << "</p>\n";
    legend(o, v.lease);
    swimlane_svg(o, v);
  }

  o << "<h3>Invariants</h3>\n";
  invariants_table(o, rec);
  trace_table(o, v);
  o << "</section>\n";
}

}  // namespace

std::vector<world::time_span> zoom_spans(const world::run_record& rec) {
  std::vector<world::time_span> out;
  for (const zoom_view& z : find_zooms(rec)) out.push_back(z.span);
  return out;
}

bool zoom_lanes_kept(const world::run_record& rec) {
  for (const zoom_view& z : find_zooms(rec))
    if (!lanes_cover(rec, z.span)) return false;
  return true;
}

void keep_zoom_lanes(const scenario::scenario& sc, std::uint64_t seed, std::vector<world::run_record>& runs,
                     const world::own_gate* own) {
  for (world::run_record& rec : runs) {
    if (zoom_lanes_kept(rec)) continue;
    // The run of this record alone (a lease scenario's one variant or protocol), as the CLI runs it.
    scenario::scenario one = sc;
    for (auto& g : one.gates)
      if (g.kind == scenario::gate_kind::lease) (void)scenario::keep_only_run(g.lease, rec.variant);
    world::lease_run_options opts;
    opts.lanes_around = zoom_spans(rec);
    std::vector<world::run_record> again = world::run_all(one, seed, opts, nullptr, own);
    for (world::run_record& r : again) {
      if (r.variant != rec.variant) continue;
      // The same run: keeping lanes changes no event.
      ADMIT_ASSERT(r.diagnostics.events == rec.diagnostics.events, "a run again with its zoom lanes is the same run");
      ADMIT_ASSERT(r.diagnostics.sequence_numbers == rec.diagnostics.sequence_numbers,
                   "a run again with its zoom lanes draws the same sequence numbers");
      rec.series = std::move(r.series);
    }
  }
}

std::string render_html(const report_input& in) {
  ADMIT_ASSERT(in.sc != nullptr, "render_html needs the scenario");
  const scenario::scenario& sc = *in.sc;
  std::vector<const world::run_record*> runs = in.runs;
  if (runs.empty() && in.rec != nullptr) runs.push_back(in.rec);
  ADMIT_ASSERT(!runs.empty(), "render_html needs at least one run");
  const bool per_variant = runs.size() > 1 || !runs.front()->variant.empty();

  bool any_violation = false, any_inconclusive = false, all_met = true;
  std::vector<run_view> views;
  for (const auto* r : runs) {
    any_violation = any_violation || r->any_violation();
    any_inconclusive = any_inconclusive || r->inconclusive.has_value();
    all_met = all_met && as_expected(sc, *r);
    views.push_back(make_view(sc, *r, per_variant));
  }
  for (auto& v : views)
    if (v.first.inv != nullptr) {
      v.marker_id = true;
      break;
    }
  const std::uint64_t seed = runs.front()->seed;
  const std::string verdict = any_violation ? "violation" : any_inconclusive ? "inconclusive" : "pass";
  // The same command as the JSON report's `replay`.
  const std::string replay = replay_command(in.file, seed);

  out o;
  o << "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
       "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>"
    << esc(sc.name) << " · " << verdict << " · admitsim</title>\n<style>" << page_css << "</style>\n</head>\n<body>\n<main>\n";

  o << "<header>\n<div class=\"banner " << verdict << "\" id=\"verdict\" data-verdict=\"" << verdict
    << "\"><span class=\"word\">" << (any_violation ? "VIOLATION" : any_inconclusive ? "INCONCLUSIVE" : "PASS") << "</span><span class=\"facts\">scenario <b>"
    << esc(sc.name) << "</b> · seed <b>" << seed << "</b> · " << (all_met ? "as expected" : "<b>NOT as expected</b>")
    << "</span></div>\n";
  o << "<h1>" << esc(sc.name) << "</h1>\n<p class=\"desc\">" << esc(sc.description) << "</p>\n";
  for (const auto* r : runs)
    if (r->inconclusive)
      o << "<p class=\"inconclusive\" id=\"inconclusive\"><b>Inconclusive" << (r->variant.empty() ? "" : " [" + esc(r->variant) + "]")
        << "</b> (" << esc(r->inconclusive->kind) << "): " << esc(r->inconclusive->detail) << "</p>\n";
  if (!runs.front()->gate_core.empty())
    o << "<p class=\"inconclusive\" id=\"gate-core\"><b>Own gate core</b>: every gate ran <code>" << esc(runs.front()->gate_core)
      << "</code>, a core of its user's, in place of admitsim's; this page judges that core (the replay command needs the "
         "program that ran it)</p>\n";
  o << "<pre class=\"replay\" id=\"replay\">" << esc(replay) << "</pre>\n";
  o << "<p class=\"meta\">file <code>" << esc(in.file) << "</code> · sha256 <code>" << esc(in.sha256)
    << "</code> · expected " << esc(sc.expect.verdict);
  if (!sc.expect.violated.empty()) {
    o << " of";
    for (const auto& name : sc.expect.violated) o << " <code>" << esc(name) << "</code>";
  }
  o << "</p>\n";
  if (!sc.fleet.clocks.empty() || sc.fleet.clock.offset_ns != 0 || sc.fleet.clock.drift_ppm != 0) {
    o << "<p class=\"meta\">clocks:";
    if (sc.fleet.clock.offset_ns != 0 || sc.fleet.clock.drift_ppm != 0)
      o << " every worker offset " << esc(scenario::format_duration(sc.fleet.clock.offset_ns)) << ", drift "
        << sc.fleet.clock.drift_ppm << " ppm;";
    std::size_t shown = 0;
    for (const auto& [w, c] : sc.fleet.clocks) {
      if (shown++ == clock_notes_max) {
        o << " and " << grouped(static_cast<i64>(sc.fleet.clocks.size() - clock_notes_max)) << " more;";
        break;
      }
      o << " worker " << w << " offset " << (c.offset_ns > 0 ? "+" : "") << esc(scenario::format_duration(c.offset_ns))
        << (c.drift_ppm != 0 ? ", drift " + std::to_string(c.drift_ppm) + " ppm" : "") << ';';
    }
    o << "</p>\n";
  }
  if (per_variant) {
    o << "<table class=\"runs\"><thead><tr><th>variant</th><th>verdict</th><th>expected</th><th>first violation</th>"
         "</tr></thead><tbody>\n";
    for (const auto& v : views) {
      const std::string word = v.rec->verdict();
      const bool met = as_expected(sc, *v.rec);
      o << "<tr><td><a href=\"#" << esc(v.anchor) << "\">" << esc(v.rec->variant) << "</a></td><td><span class=\"pill "
        << word << "\">" << word << "</span></td><td>"
        << (met ? "as expected" : "<b>NOT as expected</b>") << "</td><td>";
      if (v.first.inv != nullptr)
        o << "<code>" << esc(v.first.inv->name) << "</code> at " << esc(human_ns(v.first.at_ns));
      o << "</td></tr>\n";
    }
    o << "</tbody></table>\n";
  }
  o << "</header>\n";

  for (const auto& v : views) run_section(o, v, as_expected(sc, *v.rec));

  o << "<p class=\"meta\">admitsim HTML report, from the same run as the JSON report (docs/html-report.md).</p>\n"
       "</main>\n<script>"
    << page_script << "</script>\n</body>\n</html>\n";
  return o.take();
}

}  // namespace admit::reports
