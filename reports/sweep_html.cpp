#include "reports/sweep_html.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <sstream>
#include <string_view>
#include <vector>

#include "reports/evidence.hpp"
#include "reports/html_text.hpp"
#include "sim/scenario/duration.hpp"

namespace admit::reports {

namespace {

using json = nlohmann::ordered_json;




// How finely the page writes a duration value: as the sweep's own lines do
// (explore::text_resolution_ns), from the JSON: the grid's smallest step, and
// with a bisection half the tolerance. 0 for integers and numbers.
std::int64_t label_resolution_ns(const json& sweep) {
  if (sweep.at("param").at("kind") != "duration") return 0;
  std::int64_t res = INT64_MAX;
  const json& grid = sweep.at("grid");
  for (std::size_t i = 1; i < grid.size(); ++i) {
    const auto a = scenario::parse_signed_duration_ns(grid[i - 1].at("value").get<std::string>());
    const auto b = scenario::parse_signed_duration_ns(grid[i].at("value").get<std::string>());
    if (a && b) res = std::min(res, *b - *a);
  }
  const json& tol = sweep.at("bisect").at("tolerance");
  if (tol.is_string())
    if (const auto t = scenario::parse_duration_ns(tol.get<std::string>())) res = std::min(res, std::max<std::int64_t>(1, *t / 2));
  return res == INT64_MAX ? 0 : res;
}

// A value as people read it: a duration in its unit with a few decimals ("+1.996s"), anything
// else as the JSON writes it (explore::value_text).
std::string label_of(const json& v, std::int64_t resolution_ns) {
  if (!v.is_string()) return v.dump();
  const std::string& s = v.get_ref<const std::string&>();
  const auto ns = scenario::parse_signed_duration_ns(s);
  if (!ns) return s;
  return (!s.empty() && s.front() == '+' ? "+" : "") + scenario::format_duration_for_people(*ns, resolution_ns);
}

// The rate as a percentage with one decimal, from the counts (no floating point in the text).
std::string percent(std::uint64_t k, std::uint64_t n) {
  if (n == 0) return "-";
  const std::uint64_t tenths = (k * 1000 + n / 2) / n;
  return std::to_string(tenths / 10) + "." + std::to_string(tenths % 10) + "%";
}

constexpr const char* css = R"css(
:root{--ink:#1b2230;--muted:#5b6475;--line:#dde2ea;--bg:#f4f6f9;--pass:#1e7b3c;--bad:#c0262d;--gate:#2563a8}
*{box-sizing:border-box}
body{margin:0;background:var(--bg);color:var(--ink);font:14px/1.45 "DejaVu Sans","Liberation Sans",Arial,sans-serif}
main{max-width:1260px;margin:0 auto;padding:18px 20px 40px}
code,.mono{font-family:"DejaVu Sans Mono","Liberation Mono",monospace;font-size:12.5px}
h1{font-size:20px;margin:14px 0 4px}h2{font-size:17px;margin:18px 0 6px}
.banner{display:flex;align-items:center;gap:18px;padding:14px 20px;border-radius:8px;color:#fff;background:#3a4456}
.banner.found{background:var(--gate)}.banner.none_all_safe{background:var(--pass)}
.banner.none_all_unsafe{background:var(--bad)}.banner.not_monotone,.banner.unknown_between,.banner.no_judged_value{background:#8a6d00}
.banner .word{font-size:24px;font-weight:700;letter-spacing:.04em}.banner .facts{font-size:15px}
.desc{color:var(--muted);max-width:1100px;margin:6px 0 10px}
.words{background:#fff;border:1px solid var(--line);border-left:4px solid var(--gate);padding:8px 12px;margin:10px 0}
.note{color:var(--muted);font-size:12.5px;margin:4px 0}
section{background:#fff;border:1px solid var(--line);border-radius:8px;padding:16px 18px;margin:18px 0}
table{border-collapse:collapse;font-size:12.5px;margin:4px 0}
th,td{padding:3px 8px;border-bottom:1px solid var(--line);text-align:left;vertical-align:top}
th{color:var(--muted);font-weight:600}.num{text-align:right;font-variant-numeric:tabular-nums}
tr.unsafe td{color:var(--bad)}tr.unknown td{color:#8a6d00}tr.bisect td:first-child::after{content:" (bisect)";color:var(--muted)}
svg{display:block;width:100%;height:auto;margin:4px 0 8px}
svg text{font-size:11px;fill:var(--muted)}
svg .plot-bg{fill:#fbfcfd;stroke:var(--line)}svg .grid{stroke:#e6e9ef;stroke-width:1}
svg .rate-line{fill:none;stroke:var(--gate);stroke-width:1.6}
svg .pt.safe{fill:var(--pass)}svg .pt.unsafe{fill:var(--bad)}svg .pt.unknown{fill:#fff;stroke:#8a6d00;stroke-width:1.6}
svg .boundary-band{fill:var(--bad);opacity:.12}
svg .boundary-line{stroke:var(--bad);stroke-width:1.6;stroke-dasharray:6 4}
svg .boundary-label{fill:var(--bad);font-weight:700;font-size:12px}
svg .axis-title{font-size:12px;fill:var(--ink)}
)css";

struct point {
  double x = 0;
  double rate = 0;
  std::string cls;
  std::string label;
  bool bisect = false;
};

void plot(std::ostringstream& o, const json& sweep) {
  const std::int64_t res = label_resolution_ns(sweep);
  std::vector<point> pts;
  for (const char* list : {"grid", "bisect"}) {
    const json& arr = std::string_view(list) == "grid" ? sweep.at("grid") : sweep.at("bisect").at("steps");
    for (const auto& v : arr) {
      point p;
      p.x = v.at("x").get<double>();
      p.rate = v.at("violation_rate").get<double>();
      p.cls = v.at("class").get<std::string>();
      p.label = label_of(v.at("value"), res);
      p.bisect = std::string_view(list) == "bisect";
      pts.push_back(p);
    }
  }
  if (pts.empty()) {
    o << "<p class=\"note\">No value ran.</p>\n";
    return;
  }
  std::stable_sort(pts.begin(), pts.end(), [](const point& a, const point& b) { return a.x < b.x; });
  const std::int64_t w = 9600, h = 3400, x0 = 700, x1 = 9300, y0 = 300, y1 = 2800;  // tenths of a pixel
  double lo = pts.front().x, hi = pts.back().x;
  if (hi <= lo) {
    lo -= 1;
    hi += 1;
  }
  auto X = [&](double x) { return x0 + static_cast<std::int64_t>(std::llround((x - lo) / (hi - lo) * (x1 - x0))); };
  auto Y = [&](double r) { return y1 - static_cast<std::int64_t>(std::llround(r * (y1 - y0))); };
  o << "<svg class=\"sweep-plot\" viewBox=\"0 0 " << px{w} << ' ' << px{h} << "\" role=\"img\" aria-label=\"violation rate against "
    << html_escape(sweep.at("param").at("pointer").get<std::string>()) << "\">\n";
  o << "<rect class=\"plot-bg\" x=\"" << px{x0} << "\" y=\"" << px{y0} << "\" width=\"" << px{x1 - x0} << "\" height=\""
    << px{y1 - y0} << "\"/>\n";
  for (int q = 0; q <= 4; ++q) {
    const std::int64_t y = Y(q / 4.0);
    o << "<line class=\"grid\" x1=\"" << px{x0} << "\" y1=\"" << px{y} << "\" x2=\"" << px{x1} << "\" y2=\"" << px{y}
      << "\"/><text x=\"" << px{x0 - 80} << "\" y=\"" << px{y + 40} << "\" text-anchor=\"end\">" << q * 25 << "%</text>\n";
  }
  // The boundary: the stretch between the nearest safe and unsafe values, shaded, its middle dashed.
  const json& b = sweep.at("boundary");
  if (!b.at("safe_x").is_null() && !b.at("unsafe_x").is_null()) {
    const std::int64_t a = X(b.at("safe_x").get<double>()), c = X(b.at("unsafe_x").get<double>());
    const std::int64_t left = std::min(a, c), right = std::max(a, c), mid = (left + right) / 2;
    // The two ends read apart however narrow the bracket (as the words write them).
    std::int64_t res_ends = res;
    if (b.at("width").is_string())
      if (const auto w = scenario::parse_duration_ns(b.at("width").get<std::string>()))
        res_ends = res == 0 ? *w : std::min(res, *w);
    o << "<g class=\"boundary\"><rect class=\"boundary-band\" x=\"" << px{left} << "\" y=\"" << px{y0} << "\" width=\""
      << px{std::max<std::int64_t>(right - left, 10)} << "\" height=\"" << px{y1 - y0} << "\"/><line class=\"boundary-line\" x1=\""
      << px{mid} << "\" y1=\"" << px{y0} << "\" x2=\"" << px{mid} << "\" y2=\"" << px{y1} << "\"/><text class=\"boundary-label\" x=\""
      << px{mid > (x0 + x1) / 2 ? mid - 40 : mid + 40} << "\" y=\"" << px{y0 + 140} << "\""
      << (mid > (x0 + x1) / 2 ? " text-anchor=\"end\"" : "") << ">boundary: safe " << html_escape(label_of(b.at("safe"), res_ends)) << ", unsafe "
      << html_escape(label_of(b.at("unsafe"), res_ends)) << "</text></g>\n";
  }
  o << "<polyline class=\"rate-line\" points=\"";
  for (std::size_t i = 0; i < pts.size(); ++i) o << (i ? " " : "") << px{X(pts[i].x)} << ',' << px{Y(pts[i].rate)};
  o << "\"/>\n";
  for (const auto& p : pts) {
    const std::int64_t cx = X(p.x), cy = Y(p.rate);
    const std::string title = "<title>" + html_escape(p.label) + (p.bisect ? " (bisect)" : "") + ": " + p.cls + "</title>";
    if (p.cls == "unknown")
      o << "<rect class=\"pt unknown\" x=\"" << px{cx - 45} << "\" y=\"" << px{cy - 45} << "\" width=\"" << px{90} << "\" height=\"" << px{90} << "\">"
        << title << "</rect>\n";
    else if (p.bisect)
      o << "<path class=\"pt " << p.cls << "\" d=\"M" << px{cx} << ' ' << px{cy - 55} << "L" << px{cx + 55} << ' ' << px{cy}
        << "L" << px{cx} << ' ' << px{cy + 55} << "L" << px{cx - 55} << ' ' << px{cy} << "Z\">" << title << "</path>\n";
    else
      o << "<circle class=\"pt " << p.cls << "\" cx=\"" << px{cx} << "\" cy=\"" << px{cy} << "\" r=\"" << px{45} << "\">" << title
        << "</circle>\n";
  }
  // The axis: the grid's first and last values, and the pointer.
  const json& grid = sweep.at("grid");
  if (!grid.empty()) {
    for (const json* v : {&grid.front(), &grid.back()}) {
      o << "<text x=\"" << px{X(v->at("x").get<double>())} << "\" y=\"" << px{y1 + 170} << "\" text-anchor=\"middle\">"
        << html_escape(label_of(v->at("value"), res)) << "</text>\n";
    }
  }
  o << "<text class=\"axis-title\" x=\"" << px{(x0 + x1) / 2} << "\" y=\"" << px{y1 + 420} << "\" text-anchor=\"middle\">"
    << html_escape(sweep.at("param").at("pointer").get<std::string>()) << "</text>\n";
  o << "<text class=\"axis-title\" x=\"" << px{x0} << "\" y=\"" << px{y0 - 90} << "\">violating seeds</text>\n";
  o << "</svg>\n";
}

void table(std::ostringstream& o, const json& sweep) {
  const std::int64_t res = label_resolution_ns(sweep);
  o << "<table class=\"values\">\n<tr><th>value</th><th>class</th><th class=\"num\">seeds</th><th class=\"num\">violating</th>"
       "<th class=\"num\">rate</th><th class=\"num\">inconclusive</th><th class=\"num\">errors</th><th class=\"num\">worst "
       "overshoot</th><th>first violating seed</th><th title=\"when no seed broke: the most share of seeds a defect could "
       "strike unseen, with 95% confidence\">at most</th><th>faults injected</th><th>broken</th></tr>\n";
  for (const char* list : {"grid", "bisect"}) {
    const bool bis = std::string_view(list) == "bisect";
    const json& arr = bis ? sweep.at("bisect").at("steps") : sweep.at("grid");
    for (const auto& v : arr) {
      const std::string cls = v.at("class").get<std::string>();
      o << "<tr class=\"" << cls << (bis ? " bisect" : "") << "\"><td class=\"mono\">" << html_escape(label_of(v.at("value"), res))
        << "</td><td>" << cls << "</td><td class=\"num\">" << v.at("seeds").get<std::uint64_t>() << "</td><td class=\"num\">"
        << v.at("violating_seeds").get<std::uint64_t>() << "</td><td class=\"num\">"
        << percent(v.at("violating_seeds").get<std::uint64_t>(), v.at("seeds").get<std::uint64_t>())
        << "</td><td class=\"num\">" << v.at("inconclusive_seeds").get<std::uint64_t>() << "</td><td class=\"num\">"
        << v.at("error_seeds").get<std::uint64_t>() << "</td><td class=\"num\">" << v.at("worst_overshoot").get<std::int64_t>()
        << "</td><td>" << (v.at("first_violating_seed").is_null() ? std::string("-") : v.at("first_violating_seed").dump());
      const evidence ev = evidence::from_json(v.at("evidence"));
      o << "</td><td class=\"num\">" << (cls == "safe" ? bound_percent(bound_ppm(ev.seeds)) : std::string("-"))
        << "</td><td>" << html_escape(ev.faults_text()) << "</td><td>";
      bool first = true;
      for (const auto& bj : v.at("broken")) {
        o << (first ? "" : ", ") << html_escape(bj.at("invariant").get<std::string>()) << " (" << bj.at("seeds").get<std::uint64_t>()
          << ")";
        first = false;
      }
      o << "</td></tr>\n";
    }
  }
  o << "</table>\n";
}

}  // namespace

std::string render_sweep_html(const json& sweep) {
  std::ostringstream o;
  const json& sc = sweep.at("scenario");
  const json& b = sweep.at("boundary");
  const std::string kind = b.at("kind").get<std::string>();
  const std::string name = sc.at("name").get<std::string>();
  const std::string pointer = sweep.at("param").at("pointer").get<std::string>();
  o << "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
       "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>"
    << html_escape(name) << " · sweep of " << html_escape(pointer) << " · admitsim</title>\n<style>" << css
    << "</style>\n</head>\n<body>\n<main>\n";
  const char* word = kind == "found"             ? "BOUNDARY"
                     : kind == "none_all_safe"   ? "NO BOUNDARY: ALL SAFE"
                     : kind == "none_all_unsafe" ? "NO BOUNDARY: ALL VIOLATE"
                     : kind == "not_monotone"    ? "NOT MONOTONE"
                                                 : "NO BOUNDARY CLAIMED";
  o << "<header>\n<div class=\"banner " << html_escape(kind) << "\" id=\"boundary\" data-kind=\"" << html_escape(kind)
    << "\"><span class=\"word\">" << word << "</span><span class=\"facts\">scenario <b>" << html_escape(name) << "</b> · <b>"
    << html_escape(pointer) << "</b> · " << sweep.at("seeds").at("per_value").get<std::uint64_t>() << " seeds per value</span></div>\n";
  o << "<h1>Sweep of " << html_escape(pointer) << " in " << html_escape(name) << "</h1>\n<p class=\"desc\">"
    << html_escape(sc.at("description").get<std::string>()) << "</p>\n";
  o << "<p class=\"words\">" << html_escape(b.at("words").get<std::string>()) << "</p>\n";
  if (!b.at("note").get<std::string>().empty()) o << "<p class=\"note\">" << html_escape(b.at("note").get<std::string>()) << "</p>\n";
  if (!sweep.at("complete").get<bool>()) o << "<p class=\"note\"><b>Incomplete:</b> the sweep was stopped.</p>\n";
  o << "<p class=\"note mono\">" << html_escape(sweep.at("command").get<std::string>()) << "</p>\n</header>\n";
  o << "<section>\n<h2>Violation rate against the value</h2>\n";
  plot(o, sweep);
  o << "<p class=\"note\">Circles: the grid; diamonds: bisection steps; hollow squares: values whose seeds were "
       "inconclusive or failed (never counted as safe). Green: no seed broke an invariant; red: at least one did.</p>\n";
  o << "</section>\n<section>\n<h2>Values</h2>\n";
  table(o, sweep);
  o << "</section>\n</main>\n</body>\n</html>\n";
  return o.str();
}

}  // namespace admit::reports
