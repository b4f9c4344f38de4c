// The HTML report's charts and tables, one file each, drawn from the view model (view.hpp) into
// the page's writer; reports/html.cpp lays them out.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "reports/html/view.hpp"

namespace admit::reports::html {

// timeline.cpp
i64 series_max(const world::timeline& tl, series_pick p);
std::vector<panel> make_panels(const run_view& v);
std::string series_path(const world::timeline& tl, series_pick p, const scale& x, const scale& y, bool band,
                        i64 from_ns = 0, i64 to_ns = INT64_MAX);
std::string over_cap_path(const world::timeline& tl, series_pick p, const scale& x, const scale& y, i64 cap,
                          i64 from_ns = 0, i64 to_ns = INT64_MAX);
void violation_windows(out& o, const world::run_record& rec, const scale& x, const std::vector<panel>* panels,
                       i64 y0, i64 y1, i64 from_ns = 0, i64 to_ns = INT64_MAX);
std::string window_words(const world::invariant_result& inv, const check::violation_window& w, std::size_t number);
std::string windows_summary(const world::invariant_result& inv);
const world::invariant_result* find_invariant(const world::run_record& rec, std::string_view name);
void y_axis(out& o, const scale& ys, i64 top_value, i64 y0, i64 height, const std::string& unit);
void timeline_svg(out& o, const run_view& v);

// histogram.cpp
void histogram_svg(out& o, const run_view& v);

// swimlanes.cpp
void lane_row(out& o, const world::lane& l, const scale& x, i64 y0, i64 h, i64 open_end, bool labels, bool lease,
              const std::string& row_label, i64 from_ns = 0, i64 to_ns = INT64_MAX, bool zoomed = false);
std::string lane_title(const world::lane& l, bool lease);
void swimlane_svg(out& o, const run_view& v);

// zooms.cpp
std::vector<const world::lane*> zoom_lanes(const world::run_record& rec, const zoom_view& z, std::size_t& total);
std::string zoom_heading(const zoom_view& z);
void zoom_panel(out& o, const run_view& v, const zoom_view& z);

// tables.cpp
void invariants_table(out& o, const world::run_record& rec);
void metric(out& o, std::string_view name, const std::string& value);
void metrics_grid(out& o, const run_view& v);
void diagnostics_line(out& o, const world::run_record& rec);
void faults_table(out& o, const world::timeline& tl);
void trace_table(out& o, const run_view& v);
void causes_table(out& o, const run_view& v);

}  // namespace admit::reports::html
