#include "reports/html.hpp"

#include <algorithm>
#include <bit>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "gate/admit_assert.hpp"
#include "sim/scenario/duration.hpp"

namespace admit::reports {

namespace {

using i64 = std::int64_t;
__extension__ using i128 = __int128;  // products of a time (up to 100 days in ns) and a width in tenths of a pixel

// --- text ----------------------------------------------------------------------------------------

std::string esc(std::string_view s) {
  std::string o;
  o.reserve(s.size() + 8);
  for (const char c : s) {
    switch (c) {
      case '&': o += "&amp;"; break;
      case '<': o += "&lt;"; break;
      case '>': o += "&gt;"; break;
      case '"': o += "&quot;"; break;
      case '\'': o += "&#39;"; break;
      default: o += c;
    }
  }
  return o;
}

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

// A coordinate in tenths of a pixel, printed as "123.4".
struct px {
  i64 tenths;
};

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
    i64 t = p.tenths;
    if (t < 0) {
      s_ += '-';
      t = -t;
    }
    s_ += std::to_string(t / 10);
    if (t % 10 != 0) {
      s_ += '.';
      s_ += static_cast<char>('0' + t % 10);
    }
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

// A round step for a time axis, with minutes, hours and days above a minute.
i64 time_step(i64 span, i64 want) {
  static constexpr i64 big[] = {min_ns,      2 * min_ns,  5 * min_ns, 10 * min_ns, 15 * min_ns, 30 * min_ns,
                                h_ns,        2 * h_ns,    3 * h_ns,   6 * h_ns,    12 * h_ns,   d_ns,
                                2 * d_ns,    5 * d_ns,    10 * d_ns,  20 * d_ns,   50 * d_ns,   100 * d_ns};
  const i64 small = round_step(span, want);
  if (small < min_ns) return small;
  for (const i64 s : big)
    if (span / s <= want) return s;
  return big[std::size(big) - 1];
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
  if (all_fifo && !v.lease) v.waiting_cap = waiting;
  v.portal_cap = sc.service.portal_cap.value_or(v.gate_cap);
  const auto& tl = rec.series;
  const i64 series_end = static_cast<i64>(tl.buckets().size()) * tl.bucket_width_ns();
  const i64 end = std::max<i64>({rec.metrics.simulated_ns, series_end, 1});
  v.end_ns = end + std::max<i64>(end / 40, 1);  // a margin, so a marker at the very end stays visible
  v.first = find_first(rec);
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
  series_pick pick;
  i64 cap = -1;        // -1: no cap line
  std::string cap_label;
  i64 peak = 0;        // the largest value the run recorded (metrics), maybe above the series
  bool violated = false;  // the first violation is of this panel's invariant
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

// The step path over the buckets of one series: the maximum as the upper edge; with `band`, the
// minimum back as the lower edge (a closed area).
std::string series_path(const world::timeline& tl, series_pick p, const scale& x, const scale& y, bool band) {
  struct seg {
    i64 x0, x1, vmax, vmin;
  };
  std::vector<seg> segs;
  const auto& bs = tl.buckets();
  const i64 w = tl.bucket_width_ns();
  for (std::size_t i = 0; i < bs.size(); ++i) {
    const i64 vmax = p.max_of(bs[i]), vmin = p.min_of(bs[i]);
    const i64 a = x(static_cast<i64>(i) * w), b = x(static_cast<i64>(i + 1) * w);
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
std::string over_cap_path(const world::timeline& tl, series_pick p, const scale& x, const scale& y, i64 cap) {
  out o;
  const auto& bs = tl.buckets();
  const i64 w = tl.bucket_width_ns();
  for (std::size_t i = 0; i < bs.size();) {
    if (p.max_of(bs[i]) <= cap) {
      ++i;
      continue;
    }
    std::size_t j = i;
    i64 high = 0;
    while (j < bs.size() && p.max_of(bs[j]) > cap) high = std::max(high, p.max_of(bs[j++]));
    i64 x0 = x(static_cast<i64>(i) * w), x1 = x(static_cast<i64>(j) * w);
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

void timeline_svg(out& o, const run_view& v) {
  const world::run_record& rec = *v.rec;
  const world::timeline& tl = rec.series;
  const scale x{0, v.end_ns, T(plot_x0), T(plot_x1)};

  std::vector<panel> panels;
  {
    panel g;
    g.title = v.lease ? "Gate in-flight: live permits in the lease set" : "Gate in-flight: leases held (all gates)";
    g.css = "gate";
    g.pick.which = 0;
    g.cap = v.gate_cap;
    g.cap_label = v.lease ? "limit " + std::to_string(v.gate_cap) : "cap " + std::to_string(v.gate_cap);
    g.peak = rec.metrics.gate_inflight_max;
    g.violated = v.first.inv != nullptr && v.first.inv->name == "gate_inflight_le_cap";
    panels.push_back(g);
    panel p;
    p.title = v.lease ? "Portal in-flight: open connections (an attempt above the cap is refused)"
                      : "Portal in-flight: requests working at the portal";
    p.css = "portal";
    p.pick.which = 1;
    p.cap = v.portal_cap;
    p.cap_label = "cap " + std::to_string(v.portal_cap);
    // Under reject_429 the attempts above the cap are refused: their peak is the attempted concurrency.
    p.peak = rec.lease ? std::max(rec.metrics.portal_inflight_max, rec.lease->portal_attempted_max)
                       : rec.metrics.portal_inflight_max;
    p.violated = v.first.inv != nullptr && v.first.inv->name == "portal_inflight_le_cap";
    panels.push_back(p);
    panel q;
    q.title = v.lease ? "Queue: items waiting for a worker" : "Queue: requests waiting in the gates";
    q.css = "queue";
    q.pick.which = 2;
    q.height = 100;
    // The series is the total over the gates (the metric is per gate): its own maximum is the peak.
    // waiting_le_max holds per gate, so a broken one is marked by the violation line only.
    q.peak = series_max(tl, q.pick);
    if (v.waiting_cap >= 0) {
      // A bound far above anything the run reached would flatten the plot: then it is only named.
      if (v.waiting_cap <= 2 * std::max<i64>(q.peak, 1)) {
        q.cap = v.waiting_cap;
        q.cap_label = "max " + std::to_string(v.waiting_cap);
      } else {
        q.title += " (max_waiting " + grouped(v.waiting_cap) + ", off the scale)";
      }
    }
    panels.push_back(q);
  }

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
    const i64 vmax = std::max({series_max(tl, p.pick), p.peak, p.cap, i64{1}});
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
  const i64 tstep = time_step(v.end_ns, 10);
  for (i64 t = 0; t <= v.end_ns; t += tstep) {
    const i64 xt = x(t);
    o << "<line class=\"grid\" x1=\"" << px{xt} << "\" x2=\"" << px{xt} << "\" y1=\"" << panels.front().y0
      << "\" y2=\"" << plots_y1 << "\"/>";
    o << "<text class=\"tick\" x=\"" << px{xt} << "\" y=\"" << plots_y1 + 16 << "\" text-anchor=\"middle\">"
      << esc(tick_label(t)) << "</text>\n";
    if (t > INT64_MAX - tstep) break;
  }
  o << "<text class=\"axis-label\" x=\"" << plot_x1 << "\" y=\"" << height - 4
    << "\" text-anchor=\"end\">simulated time</text>\n";

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

  for (const panel& p : panels) {
    const scale ys{0, p.top, T(p.y0 + p.height), T(p.y0)};
    o << "<text class=\"panel-title\" x=\"" << plot_x0 << "\" y=\"" << p.y0 - 7 << "\">" << esc(p.title)
      << "</text>\n";
    const i64 step = round_step(p.top, 4);
    for (i64 val = 0; val <= p.top; val += step) {
      o << "<line class=\"grid\" x1=\"" << plot_x0 << "\" x2=\"" << plot_x1 << "\" y1=\"" << px{ys(val)} << "\" y2=\""
        << px{ys(val)} << "\"/><text class=\"tick\" x=\"" << plot_x0 - 6 << "\" y=\"" << px{ys(val) + 35}
        << "\" text-anchor=\"end\">" << grouped(val) << "</text>\n";
    }
    const std::string band = series_path(tl, p.pick, x, ys, true);
    const std::string line = series_path(tl, p.pick, x, ys, false);
    if (!line.empty()) {
      o << "<g class=\"series " << p.css << "\"><title>" << esc(p.title) << ": highest and lowest per "
        << esc(human_ns(tl.bucket_width_ns())) << "</title><path class=\"band\" d=\"" << band
        << "\"/><path class=\"line\" d=\"" << line << "\"/></g>\n";
      if (p.cap >= 0) {
        const std::string over = over_cap_path(tl, p.pick, x, ys, p.cap);
        if (!over.empty())
          o << "<path class=\"over-cap\" d=\"" << over << "\"><title>above the cap</title></path>\n";
      }
    }
    if (p.cap >= 0) {
      o << "<line class=\"cap-line\" data-cap=\"" << p.cap << "\" x1=\"" << plot_x0 << "\" x2=\"" << plot_x1
        << "\" y1=\"" << px{ys(p.cap)} << "\" y2=\"" << px{ys(p.cap)} << "\"/><text class=\"cap-label\" x=\""
        << plot_x1 + 6 << "\" y=\"" << px{ys(p.cap) + 35} << "\">" << esc(p.cap_label) << "</text>\n";
    }
    if (p.violated) {
      // The value that broke the cap (the run stops there, so it is the run's maximum); the series
      // may not hold it when the attempt was refused, as at a lease world's portal.
      const i64 px0 = x(v.first.at_ns), py = ys(p.peak);
      o << "<g class=\"violation-peak\"><title>" << esc(v.first.inv->first->detail) << "</title><line x1=\"" << px{px0}
        << "\" x2=\"" << px{px0} << "\" y1=\"" << px{ys(p.cap)} << "\" y2=\"" << px{py} << "\"/><circle cx=\""
        << px{px0} << "\" cy=\"" << px{py} << "\" r=\"5\"/><text x=\"" << px{px0 - T(9)} << "\" y=\"" << px{py + 40}
        << "\" text-anchor=\"end\">" << grouped(p.peak) << " &gt; " << esc(p.cap_label) << "</text></g>\n";
    }
    o << "<text class=\"peak-label\" x=\"" << plot_x1 + 6 << "\" y=\"" << p.y0 + 10 << "\">max " << grouped(p.peak)
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
  const i64 tstep = time_step(end_ns, 10);
  for (i64 t = 0; t <= end_ns; t += tstep) {
    const i64 xt = x(t);
    o << "<line class=\"grid\" x1=\"" << px{xt} << "\" x2=\"" << px{xt} << "\" y1=\"" << top << "\" y2=\""
      << top + n * row_h << "\"/><text class=\"tick\" x=\"" << px{xt} << "\" y=\"" << top + n * row_h + 16
      << "\" text-anchor=\"middle\">" << esc(tick_label(t)) << "</text>\n";
    if (t > INT64_MAX - tstep) break;
  }
  for (const auto& w : rec.series.windows()) {
    if (w.start_ns > end_ns) continue;
    const i64 x0 = x(w.start_ns), x1 = x(w.end_ns);
    o << "<rect class=\"fault-shade\" x=\"" << px{x0} << "\" y=\"" << top << "\" width=\"" << px{std::max(x1 - x0, T(1))}
      << "\" height=\"" << n * row_h << "\" fill=\"" << fault_colour(w.kind) << "\"/>\n";
  }

  const i64 gap = row_h >= 6 ? std::max<i64>(1, row_h / 8) : 0;
  for (i64 ri = 0; ri < n; ++ri) {
    const world::lane& l = *rows[static_cast<std::size_t>(ri)];
    const i64 y0 = top + ri * row_h + gap, h = row_h - 2 * gap;
    const i64 ended = l.ended_ns >= 0 ? l.ended_ns : open_end;
    o << "<g class=\"lane\"><title>" << esc(lane_title(l, v.lease)) << "</title>";
    if (labels)
      o << "<text class=\"row-label\" x=\"" << plot_x0 - 6 << "\" y=\"" << px{T(y0) + T(h) / 2 + 35}
        << "\" text-anchor=\"end\">" << esc(short_label(l.id.empty() ? "#" + std::to_string(l.number) : l.id))
        << "</text>";
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
    if (l.gave_up_ns >= 0) {
      const i64 a = x(l.gave_up_ns), s = std::clamp<i64>(T(h) * 3 / 10, 15, 40);
      o << "<path class=\"gave-up\" d=\"M" << px{a - s} << ' ' << px{T(y0) + T(h) / 2 - s} << 'l' << px{2 * s} << ' '
        << px{2 * s} << "m0 " << px{-2 * s} << 'l' << px{-2 * s} << ' ' << px{2 * s} << "\"/>";
    }
    if (l.ended_ns >= 0) {
      const i64 a = x(l.ended_ns);
      o << "<rect class=\"outcome\" x=\"" << px{a} << "\" y=\"" << y0 << "\" width=\"" << px{25} << "\" height=\"" << h
        << "\" fill=\"" << outcome_colour(l.outcome) << "\"/>";
      if (labels)
        o << "<text class=\"outcome-label\" x=\"" << px{a + T(6)} << "\" y=\"" << px{T(y0) + T(h) / 2 + 35} << "\">"
          << esc(l.outcome) << "</text>";
    }
    o << "</g>\n";
  }
  if (v.first.inv != nullptr && v.first.at_ns <= end_ns) {
    const i64 xv = x(v.first.at_ns);
    o << "<line class=\"violation-marker\" data-invariant=\"" << esc(v.first.inv->name) << "\" x1=\"" << px{xv}
      << "\" x2=\"" << px{xv} << "\" y1=\"" << top << "\" y2=\"" << top + n * row_h << "\"/>\n";
  }
  o << "</svg>\n";
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
  metric(o, "gate in-flight max", grouped(m.gate_inflight_max) + " / " + grouped(v.gate_cap));
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
)css";

// Marks the page as loaded without errors, for a reader and for the browser test.
constexpr const char* page_script = R"js(
(function () {
  var body = document.body;
  body.setAttribute("data-violation-markers", String(document.querySelectorAll(".violation-marker").length));
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
  metrics_grid(o, v);
  diagnostics_line(o, rec);

  const world::timeline& tl = rec.series;
  o << "<h3>In-flight and queue over time</h3>\n<p class=\"note\">Each plot shows, per "
    << esc(human_ns(tl.bucket_width_ns()))
    << " of simulated time, the highest value (line) and the range (band); peaks are never averaged away. "
       "Dashed: the cap. Red: above it; the first violation is the red vertical line.</p>\n";
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
  const std::string replay = "admitsim run " + in.file + " --seed " + std::to_string(seed);

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
