// The HTML report's view model (docs/html-report.md): what a run looks like on the page, read
// from its scenario and record once (run_view, make_view: the axis, the zooms, the first
// violation, the clocks), and the text and geometry every chart draws with. The charts
// (charts.hpp, one file each) and the page (reports/html.cpp) render from it.
#pragma once

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

namespace admit::reports::html {

using i64 = std::int64_t;
__extension__ using i128 = __int128;  // products of a time (up to 100 days in ns) and a width in tenths of a pixel

// --- text ----------------------------------------------------------------------------------------

std::string esc(std::string_view s);

// 1234567 -> "1,234,567".
std::string grouped(i64 v);

// `scaled` hundredths, with trailing zeros of the fraction dropped: 532 -> "5.32", 150 -> "1.5".
std::string hundredths(i64 scaled);

constexpr i64 us_ns = 1'000;
constexpr i64 ms_ns = 1'000'000;
constexpr i64 s_ns = 1'000'000'000;
constexpr i64 min_ns = 60 * s_ns;
constexpr i64 h_ns = 60 * min_ns;
constexpr i64 d_ns = 24 * h_ns;

// A duration for people, to two decimals at most, by integer arithmetic: "5.32s", "350ms", "1.5h".
std::string human_ns(i64 ns);

// An instant for people: below a minute as human_ns, above it to the millisecond, "2h 0min 1.512s" (the
// rounding of human_ns would call that "2h").
std::string instant_ns(i64 ns);

// A tick of a time axis (a multiple of a round step): "250ms", "5s", "1min30s", "2h15min".
std::string tick_label(i64 t);

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
i64 round_step(i64 span, i64 want);

// A time axis in the one unit that fits its span (µs, ms, s, min, h or d: the largest of which the
// span holds at least two), its ticks at round steps of tenths of that unit: a 3h run is labelled
// 0, 0.5, 1 ... h, an 80s one 0, 10, 20 ... s.
struct time_axis {
  i64 unit_ns = 1;
  const char* unit = "ns";
  i64 step_ns = 1;
};

time_axis fit_time_axis(i64 span_ns, i64 want);

// A tick of `a` at `t` (a multiple of a tenth of its unit; negative on an axis around a moment): "2.5".
std::string axis_tick(i64 t, const time_axis& a);

// --- what a run looks like -----------------------------------------------------------------------

constexpr i64 view_w = 1200;  // the SVGs' viewBox width, pixels
constexpr i64 plot_x0 = 128;  // left edge of every time plot (room for row labels)
constexpr i64 plot_x1 = 1110;  // right edge (room for cap labels)
constexpr std::size_t label_chars_max = 18;
constexpr std::size_t clock_rows_max = 4;   // skewed clocks drawn on the timeline
constexpr std::size_t clock_notes_max = 20;  // and named in the header

std::string short_label(const std::string& s);

struct first_violation {
  const world::invariant_result* inv = nullptr;  // null: none
  i64 at_ns = 0;
};

// The plot of the timeline a level invariant bounds (0 gate, 1 portal, 2 queue), or -1 (an event invariant).
int panel_of(std::string_view invariant);

// The right edge of a run's time axes: its end, or its series', with a margin so that a marker at
// the very end stays visible.
i64 axis_end_ns(const world::run_record& rec);

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
const check::violation_window* window_at(const world::invariant_result& inv, i64 at, std::size_t& number);

world::time_span zoom_span(i64 moment, const check::violation_window* w, i64 end_ns);

// The zooms of a run: its worst moment (of the level invariant furthest above its bound, the first
// violation's own when it is a level one) and its first violation; one when they are the same.
std::vector<zoom_view> find_zooms(const world::run_record& rec);

// Whether `rec` kept the lane of every request whose life meets `span`: it kept them all, or the
// span ends before the last of its first lanes arrived, or the run kept the lanes around it.
bool lanes_cover(const world::run_record& rec, const world::time_span& span);

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

first_violation find_first(const world::run_record& rec);

run_view make_view(const scenario::scenario& sc, const world::run_record& rec, bool per_variant);

const char* fault_colour(const std::string& kind);

const char* outcome_colour(const std::string& outcome);

// A skewed wall clock in a few characters: "+20s", "-1.5s 200ppm" (empty: not skewed).
std::string clock_note(const scenario::clock_spec& c);


// A timeline panel: one series, its cap and its peak (timeline.cpp lays them out; a zoom reuses them).
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

}  // namespace admit::reports::html
