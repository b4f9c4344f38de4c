// The zooms onto the moments that matter.
#include "reports/html/charts.hpp"

namespace admit::reports::html {

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

}  // namespace admit::reports::html
