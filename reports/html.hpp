// html: the HTML report of a scenario's runs, for people.
//
// One self-contained page (inline CSS and SVG, and a few lines of inline
// script that only mark that the page ran cleanly) drawn from the same
// records as the JSON report (report.hpp). It needs nothing from the network.
// Per run (a lease scenario has one per variant):
//   - the verdict, seed, scenario and replay command at the top;
//   - a timeline: in-flight as the gate sees it and as the portal sees it,
//     each against its cap, and the queue length, from the run's bucketed
//     series (every bucket keeps its maximum, so a peak over the cap shows
//     however long the run); every fault window shaded and labelled; the
//     first violation marked (class `violation-marker`);
//   - a histogram of waiting time (arrival to lease);
//   - swimlanes of the first requests (one row per request, or one per
//     worker in a lease run);
//   - the invariants, the metrics, the fault windows and the trace before the
//     first violation as tables.
// Every string that comes from a scenario or a command line is escaped.
// Coordinates are integer tenths of a pixel: the same run gives the same
// bytes, and nothing reads a clock. Docs: docs/html-report.md.
#pragma once

#include <string>

#include "reports/report.hpp"

namespace admit::reports {

// The page for the runs in `in` (the same input as build_report).
std::string render_html(const report_input& in);

}  // namespace admit::reports
