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
//   - for a violating run, what broke and why (per cause, from the cause
//     table) and a zoom onto its worst moment and its first violation, with
//     the lanes of the requests active then;
//   - swimlanes of the first requests (one row per request, or one per
//     worker in a lease run);
//   - the invariants, the metrics, the fault windows and the trace before the
//     first violation as tables.
// Every string that comes from a scenario or a command line is escaped.
// Coordinates are integer tenths of a pixel: the same run gives the same
// bytes, and nothing reads a clock. Docs: docs/html-report.md.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "reports/report.hpp"
#include "sim/world/own_gate.hpp"

namespace admit::reports {

// The page for the runs in `in` (the same input as build_report).
std::string render_html(const report_input& in);

// The stretches of time the page zooms onto in `rec` (its worst moment, its
// first violation), and whether `rec` kept the lanes of every request active
// in them (a run keeps the first timeline::max_lanes lanes).
std::vector<world::time_span> zoom_spans(const world::run_record& rec);
bool zoom_lanes_kept(const world::run_record& rec);

// For each run of `runs` (the runs of `sc` with `seed`, as world::run_all
// gave them) whose zooms need lanes it did not keep: runs it again, the same
// run, keeping the lanes around its zooms, and takes that run's timeline.
// `own`: the team's own gate core the runs ran (sim/world/own_gate.hpp), or null.
void keep_zoom_lanes(const scenario::scenario& sc, std::uint64_t seed, std::vector<world::run_record>& runs,
                     const world::own_gate* own = nullptr);

}  // namespace admit::reports
