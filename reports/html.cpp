#include "reports/html.hpp"

#include "reports/html/charts.hpp"

namespace admit::reports {

namespace {

using namespace html;

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
  const bool lease_run = !sc.gates.empty() && sc.gates.front().kind == scenario::gate_kind::lease;
  if (const std::string& core = runs.front()->gate_core; core.rfind("process:", 0) == 0 && lease_run)
    o << "<p class=\"inconclusive\" id=\"gate-core\"><b>Process client</b>: each worker's lease client ran <code>"
      << esc(core) << "</code>, a child process the scenario names, in place of admitsim's client; this page judges "
                      "that program (docs/process-gate.md)</p>\n";
  else if (core.rfind("process:", 0) == 0)
    o << "<p class=\"inconclusive\" id=\"gate-core\"><b>Process gate core</b>: the gates ran <code>" << esc(core)
      << "</code>, a child process the scenario names, in place of admitsim's core; this page judges that program "
         "(docs/process-gate.md)</p>\n";
  else if (!core.empty())
    o << "<p class=\"inconclusive\" id=\"gate-core\"><b>Own gate core</b>: every gate ran <code>" << esc(core)
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
