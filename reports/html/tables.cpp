// The tables: invariants, metrics, faults, trace, causes.
#include "reports/html/charts.hpp"

namespace admit::reports::html {

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

}  // namespace admit::reports::html
