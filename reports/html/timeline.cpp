// The timeline: the series panels, the fault bands and the violation windows over the run.
#include "reports/html/charts.hpp"

namespace admit::reports::html {

// --- the timeline --------------------------------------------------------------------------------

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
                        i64 from_ns, i64 to_ns) {
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
                          i64 from_ns, i64 to_ns) {
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
                       i64 y0, i64 y1, i64 from_ns, i64 to_ns) {
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

}  // namespace admit::reports::html
