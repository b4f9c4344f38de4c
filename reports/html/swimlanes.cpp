// The swimlanes: one lane per request or worker.
#include "reports/html/charts.hpp"

namespace admit::reports::html {

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
              const std::string& row_label, i64 from_ns, i64 to_ns, bool zoomed) {
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

}  // namespace admit::reports::html
