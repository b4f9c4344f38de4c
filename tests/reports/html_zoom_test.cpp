// The HTML page at the moments that matter: what broke and why (the per-cause table), the zooms onto a
// run's worst moment and first violation with the lanes active then, the violation windows on the
// timeline, the axes' units and the honest labels of a plot that sums several gates.
#include <catch2/catch.hpp>
#include <string>
#include <string_view>
#include <tuple>

#include "reports/html.hpp"
#include "sim/check/causes.hpp"
#include "tests/reports/html_test_support.hpp"
#include "tests/world/world_test_support.hpp"

namespace {

using admit::world::run_record;

using admit::test::html_without_diagnostics;
using admit::test::occurrences;

// The part of `html` from `open` (its first occurrence after `from`) to the next `close`.
std::string_view part(std::string_view html, std::string_view open, std::string_view close, std::size_t from = 0) {
  const std::size_t a = html.find(open, from);
  if (a == std::string_view::npos) return {};
  const std::size_t b = html.find(close, a);
  return html.substr(a, b == std::string_view::npos ? std::string_view::npos : b - a);
}

struct rendered_page {
  admit::scenario::scenario sc;
  std::vector<run_record> runs;
  std::string html;
};

// Runs a scenario and renders its page as `admitsim run --html` does (with the zooms' lanes kept when
// `zoom_lanes`).
rendered_page render(const std::string& text, std::uint64_t seed, bool zoom_lanes = true,
                     const std::string& file = "inline.json") {
  rendered_page p;
  // A catalogue file is loaded as the CLI loads it (its protocol files read beside it).
  p.sc = file == "inline.json" ? admit::scenario::load_scenario_text(text) : admit::scenario::load_scenario_file(file);
  p.runs = admit::world::run_all(p.sc, seed);
  if (zoom_lanes) admit::reports::keep_zoom_lanes(p.sc, seed, p.runs);
  admit::reports::report_input in;
  in.sc = &p.sc;
  in.file = file;
  in.sha256 = admit::reports::sha256_hex(text);
  for (const auto& r : p.runs) in.runs.push_back(&r);
  p.html = admit::reports::render_html(in);
  return p;
}

rendered_page render_zoom_file(const std::string& path, std::uint64_t seed) {
  return render(admit::test::slurp(path), seed, true, path);
}


// A FIFO gate of 8 whose process crashes late in a run of 1,500 requests: the restarted process admits new work
// (and a burst of 8 just after the restart) while the old still runs at the portal, so the portal's cap breaks long
// after the 400th request.
const char* late_crash = R"({"name": "late_crash",
  "gate": {"name": "api", "kind": "fifo", "max_active": 8, "max_waiting": 20, "wait_deadline": "5s"},
  "service": {"service_time": "200ms"},
  "workload": {"arrivals": [{"kind": "constant", "count": 1500, "every": "25ms"},
                            {"kind": "constant", "count": 8, "every": "1ms", "start": "30020ms"}]},
  "faults": {"schedule": [{"at": "30s", "kind": "crash", "target": "worker:0", "duration": "10ms"}]},
  "expect": {"verdict": "violation", "violated": ["portal_inflight_le_cap"]}})";

}  // namespace

TEST_CASE("a violating run opens with what broke, per cause, and zooms onto its moments", "[reports][html][zoom]") {
  // Goal: a reader sees first what broke, why, and the moment itself. Method: redis_restart's runs (keep-going:
  // many windows each): per run a cause table whose rows are the record's causes, or one row saying none was
  // identified; a zoom onto the worst moment and one onto the first violation (or one for both), at the
  // record's instants, each with the lanes of the items active then.
  const rendered_page p = render_zoom_file("scenarios/redis_restart.json", 15);
  const std::string& h = p.html;
  REQUIRE(p.runs.size() == 4);
  CHECK(occurrences(h, "<table class=\"cause-table\"") == 3);
  for (const auto& rec : p.runs) {
    INFO(rec.variant);
    if (rec.variant == "restart_grace") {  // the scenario's design that holds: no violation, no cause table
      CHECK_FALSE(rec.any_violation());
      continue;
    }
    REQUIRE(rec.any_violation());
    const std::string anchor = "run-" + rec.variant;
    const std::string_view table = part(h, "<table class=\"cause-table\" data-run=\"" + anchor + "\"", "</table>");
    REQUIRE_FALSE(table.empty());
    for (const auto& inv : rec.invariants) {
      if (inv.holds) continue;
      CHECK(table.find("data-invariant=\"" + inv.name + "\"") != std::string_view::npos);
      if (inv.causes.empty()) CHECK(table.find("no cause identified") != std::string_view::npos);
      for (const auto& c : inv.causes) {
        CHECK(table.find(admit::check::find_cause(c.kind)->title) != std::string_view::npos);
        CHECK(table.find(">" + std::to_string(c.count) + "<") != std::string_view::npos);
      }
    }
    // The zooms: the worst moment of the broken level invariant, and the first violation.
    const auto* inv = &rec.invariants.front();
    for (const auto& i : rec.invariants)
      if (i.name == "portal_inflight_le_cap") inv = &i;
    REQUIRE(inv->worst);
    REQUIRE(inv->first);
    const bool same = inv->worst->at_ns == inv->first->at_ns;
    const std::string worst_id = anchor + "-zoom-" + (same ? "first-worst" : "worst");
    const std::string_view worst = part(h, "<div class=\"zoom\" id=\"" + worst_id + "\"", "</div>");
    REQUIRE_FALSE(worst.empty());
    CHECK(worst.find("data-at-ns=\"" + std::to_string(inv->worst->at_ns) + "\"") != std::string_view::npos);
    CHECK(worst.find(std::to_string(inv->worst->value) + " &gt; cap 4") != std::string_view::npos);
    CHECK(occurrences(worst, "<g class=\"lane zoomed\">") > 0);
    if (!same) {
      const std::string_view first = part(h, "<div class=\"zoom\" id=\"" + anchor + "-zoom-first\"", "</div>");
      REQUIRE_FALSE(first.empty());
      CHECK(first.find("data-at-ns=\"" + std::to_string(inv->first->at_ns) + "\"") != std::string_view::npos);
      CHECK(occurrences(first, "<g class=\"lane zoomed\">") > 0);
    }
    // The lanes shown are those of items alive in the zoom's stretch.
    const auto spans = admit::reports::zoom_spans(rec);
    REQUIRE_FALSE(spans.empty());
    std::size_t alive = 0;
    for (const auto& l : rec.series.lanes()) alive += l.meets(spans.front()) ? 1 : 0;
    CHECK(occurrences(worst, "<g class=\"lane zoomed\">") == std::min<std::size_t>(alive, 40));
  }
  // The violation windows are shaded on each run's timeline, one span per kept window.
  std::size_t kept = 0;
  for (const auto& rec : p.runs)
    for (const auto& inv : rec.invariants) kept += inv.holds ? 0 : inv.window_list.size();
  std::size_t on_timelines = 0;
  for (std::size_t at = h.find("<svg class=\"timeline\""); at != std::string::npos;
       at = h.find("<svg class=\"timeline\"", at + 1))
    on_timelines += occurrences(part(h, "<svg class=\"timeline\"", "</svg>", at), "<rect class=\"violation-window");
  CHECK(on_timelines == kept);
  // Units on the axes.
  CHECK(occurrences(h, ">permits</text>") >= 3);
  CHECK(occurrences(h, ">connections</text>") >= 3);
  CHECK(occurrences(h, ">items waiting</text>") == 4);  // one per run, restart_grace's too
  CHECK(occurrences(h, "simulated time (s)</text>") >= 3);
  CHECK(h.find("time from the ") != std::string::npos);
}

TEST_CASE("a passing run has neither a cause table nor a zoom", "[reports][html][zoom]") {
  // Goal: nothing claims a violation that did not happen. Method: the lab's passing FIFO run.
  const rendered_page p = render_zoom_file("scenarios/lab_fifo.json", 1);
  CHECK(occurrences(p.html, "class=\"cause-table\"") == 0);
  CHECK(occurrences(p.html, "class=\"zoom\"") == 0);
  CHECK(occurrences(p.html, "<rect class=\"violation-window") == 0);
}

TEST_CASE("a plot that sums several gates says so", "[reports][html]") {
  // Goal: the lab's gate plot reaches 3 with three gates of one each, and its labels say why. Method: its
  // title names the gates summed, the cap is labelled as summed, the peak beside the most any one gate held,
  // and the axes count leases and requests waiting, over milliseconds.
  const rendered_page p = render_zoom_file("scenarios/lab_fifo.json", 1);
  const std::string& h = p.html;
  CHECK(h.find("Gate in-flight: leases held, summed over the 3 gates (delay, success, fault)") != std::string::npos);
  CHECK(h.find(">max 3</text>") != std::string::npos);
  CHECK(h.find(">1 in one gate</text>") != std::string::npos);
  CHECK(occurrences(h, "class=\"cap-note\"") == 2);  // the gate's caps and the queue's max_waiting, summed
  CHECK(h.find("<dt>gate in-flight max, one gate</dt><dd>1</dd>") != std::string::npos);
  CHECK(h.find("<dt>gate in-flight max, summed</dt><dd>3 / 3</dd>") != std::string::npos);
  CHECK(h.find(">leases</text>") != std::string::npos);
  CHECK(h.find(">requests waiting</text>") != std::string::npos);
  CHECK(h.find("simulated time (ms)</text>") != std::string::npos);
}

TEST_CASE("a late zoom in a long run shows the requests active then, run again to keep them",
          "[reports][html][zoom]") {
  // Goal: the zoom's lanes are those of its moment, not the first requests of the run. Method: a portal
  // violation after a crash at 30s, past the 1,200th request. The first run keeps only the first 400 lanes, and
  // its page says the zoom's were not recorded; rendered as admitsim run does, the seed runs again keeping the
  // lanes around the zooms, the same run (same events), and the zoom shows requests of that moment.
  const rendered_page plain = render(late_crash, 1, false);
  REQUIRE(plain.runs.front().any_violation());
  CHECK_FALSE(admit::reports::zoom_lanes_kept(plain.runs.front()));
  CHECK(plain.html.find("Not every lane of this stretch was recorded") != std::string::npos);
  const rendered_page kept = render(late_crash, 1, true);
  const run_record& rec = kept.runs.front();
  CHECK(admit::reports::zoom_lanes_kept(rec));
  CHECK(rec.diagnostics.events == plain.runs.front().diagnostics.events);
  CHECK(kept.html.find("Not every lane of this stretch was recorded") == std::string::npos);
  const std::string_view zoom = part(kept.html, "<div class=\"zoom\"", "</div>");
  REQUIRE_FALSE(zoom.empty());
  CHECK(occurrences(zoom, "<g class=\"lane zoomed\">") >= 2);
  CHECK(zoom.find(">#1") != std::string_view::npos);   // requests numbered near 1,200
  CHECK(zoom.find(">#12") != std::string_view::npos);
  CHECK(zoom.find(">#1<") == std::string_view::npos);  // and not the first one
  // Everything but the timeline is the same run; the page is as deterministic as ever.
  CHECK(render(late_crash, 1, true).html == kept.html);
}

TEST_CASE("the cause table and the zooms escape every text they show", "[reports][html][text_safety]") {
  // Goal: nothing a record carries can inject markup through the new parts. Method: a record made by hand whose
  // violation details, cause example, lane id and fault target are full of markup.
  const admit::scenario::scenario sc = admit::scenario::load_scenario_text(R"({"name": "hand",
    "gate": {"kind": "fifo", "max_active": 1, "max_waiting": 1, "wait_deadline": "1s"},
    "workload": {"requests": [{"at": "0ms"}]}})");
  run_record rec;
  rec.seed = 1;
  rec.metrics.requests = 1;
  rec.metrics.simulated_ns = 5'000'000'000;
  rec.series.sample(0, 0, 0, 0);
  rec.series.sample(2'000'000'000, 1, 2, 0);
  rec.series.sample(3'000'000'000, 0, 0, 0);
  admit::world::invariant_result inv;
  inv.name = "portal_inflight_le_cap";
  inv.holds = false;
  inv.level = true;
  inv.checked = 3;
  inv.first = admit::world::violation{2'000'000'000, "<script>first()</script>", 0};
  inv.windows = 1;
  inv.time_in_violation_ns = 1'000'000'000;
  inv.worst = admit::check::worst_moment{2, 1, 2'000'000'000, "<script>worst()</script>"};
  admit::check::violation_window w;
  w.start_ns = w.peak_ns = 2'000'000'000;
  w.end_ns = 3'000'000'000;
  w.peak = 2;
  w.bound = 1;
  w.detail = "<script>window()</script>";
  inv.window_list.push_back(w);
  inv.causes.push_back(admit::check::cause_count{"unexplained", 1, "<img src=x onerror=alert(1)>"});
  rec.invariants.push_back(inv);
  admit::world::lane* l = rec.series.lane_for(1);
  REQUIRE(l != nullptr);
  l->id = "<b>lane</b>";
  l->arrived_ns = 1'900'000'000;
  l->granted_ns = l->work_start_ns = 1'950'000'000;
  l->work_end_ns = l->ended_ns = 2'500'000'000;
  l->outcome = "<u>done</u>";
  rec.series.add_window(admit::world::fault_window{"crash", "<i>worker</i>", 1'500'000'000, 1'600'000'000});
  admit::reports::report_input in;
  in.sc = &sc;
  in.file = "hand.json";
  in.rec = &rec;
  const std::string h = admit::reports::render_html(in);
  for (const char* raw : {"<script>first", "<script>worst", "<script>window", "<img", "<b>lane", "<u>done", "<i>worker"})
    CHECK(h.find(raw) == std::string::npos);
  CHECK(h.find("&lt;img src=x onerror=alert(1)&gt;") != std::string::npos);
  CHECK(h.find("&lt;b&gt;lane&lt;/b&gt;") != std::string::npos);
  CHECK(occurrences(h, "<table class=\"cause-table\"") == 1);
  CHECK(h.find(admit::check::find_cause("unexplained")->title) != std::string::npos);
  CHECK(occurrences(h, "class=\"zoom\"") == 1);  // the first violation is the worst moment
  CHECK(occurrences(h, "<g class=\"lane zoomed\">") == 1);
  CHECK(occurrences(h, "<script>") == 1);
}

TEST_CASE("the committed pages of a keep-going run and of a shrunk counterexample regenerate",
          "[reports][html][examples]") {
  // Goal: reports/examples/ shows what the code draws today for a run that keeps going past its first
  // violation and for a counterexample the search shrank. Method: render each page's scenario with its seed as
  // scripts/render-html-examples.sh does (admitsim run --html) and compare all but the diagnostics lines.
  for (const auto& [file, page, seed] :
       {std::tuple<const char*, const char*, std::uint64_t>{"scenarios/client_timeout_overshoot.json",
                                                            "client_timeout_overshoot", 17},
        {"reports/examples/shrunk/explore_redis_faults-seed75-seed-min.json", "explore_redis_faults-seed75-seed-min",
         75}}) {
    INFO(page << " (regenerate with scripts/render-html-examples.sh after an intended change)");
    const std::string recorded = admit::test::slurp(std::string("reports/examples/") + page + ".html");
    REQUIRE_FALSE(recorded.empty());
    CHECK(html_without_diagnostics(render_zoom_file(file, seed).html) == html_without_diagnostics(recorded));
  }
}

TEST_CASE("the shrunk example starts near zero and reproduces", "[reports][html][examples][rebase]") {
  // Goal: the committed counterexample is the readable story the search hands back. Method: its first event is
  // between 1s and 2s (rebased from the explored run), and run with its own seed it breaks what it expects.
  const auto sc = admit::scenario::load_scenario_text(
      admit::test::slurp("reports/examples/shrunk/explore_redis_faults-seed75-seed-min.json"));
  admit::sim::vtime_ns first = INT64_MAX;
  for (const auto& r : sc.requests) first = std::min(first, r.at_ns);
  for (const auto& f : sc.faults.schedule) first = std::min(first, f.at_ns);
  CHECK(first >= 1'000'000'000);
  CHECK(first < 2'000'000'000);
  CHECK(sc.description.find("earlier than in the explored run") != std::string::npos);
  const auto runs = admit::world::run_all(sc, sc.seed);
  REQUIRE(runs.size() == 1);
  CHECK(admit::reports::as_expected(sc, runs.front()));
  CHECK(runs.front().any_violation());
}

TEST_CASE("the page stays small with every invariant broken to the record's bounds", "[reports][html][limits]") {
  // Goal: the cause tables, violation windows and zooms are bounded by the record, not by the run. Method: a
  // record with its series, fault windows, lanes and lanes around spans filled, and every invariant of the FIFO
  // world broken with the most windows and causes a record keeps, each window with a long detail.
  const admit::scenario::scenario sc = admit::scenario::load_scenario_text(R"({"name": "bounds",
    "gate": {"kind": "fifo", "max_active": 1000, "max_waiting": 100000, "wait_deadline": "1h"},
    "service": {"service_time": "1s"},
    "workload": {"requests": [{"at": "0ms"}]}})");
  constexpr std::int64_t s = 1'000'000'000;
  run_record rec;
  rec.seed = 1;
  rec.metrics.requests = 1'000'000;
  rec.metrics.simulated_ns = 100LL * 3600 * s;
  rec.series.keep_lanes_in({admit::world::time_span{50LL * 3600 * s, 50LL * 3600 * s + 60 * s}});
  for (std::int64_t t = 0; t < rec.metrics.simulated_ns; t += 97 * s) {
    const std::int64_t k = t / (97 * s);
    rec.series.sample(t, k % 1000, (k * 7) % 1000, (k * 13) % 100000);
    rec.series.sample(t + 1, (k + 500) % 1000, (k * 3) % 1000, (k * 11) % 100000);
  }
  for (std::size_t i = 0; i < admit::world::timeline::max_windows; ++i)
    rec.series.add_window(admit::world::fault_window{"crash", "worker:0", static_cast<std::int64_t>(i) * 300 * s,
                                                     static_cast<std::int64_t>(i) * 300 * s + 60 * s});
  // The first lanes, and the most that can be alive around the span (none over, so none is dropped).
  for (std::uint64_t n = 1; n <= admit::world::timeline::max_lanes + admit::world::timeline::max_span_lanes; ++n)
    if (admit::world::lane* l = rec.series.lane_for(n)) {
      l->id = "arrivals/0/" + std::to_string(n);
      l->arrived_ns = n <= admit::world::timeline::max_lanes ? static_cast<std::int64_t>(n) * s : 50LL * 3600 * s;
    }
  const std::string long_detail(200, 'x');
  for (const char* name : admit::check::invariant_names) {
    if (!admit::check::applies(name, admit::check::world_fifo)) continue;
    admit::world::invariant_result inv;
    inv.name = name;
    inv.holds = false;
    inv.level = admit::check::find_invariant(name)->level;
    inv.checked = 1'000'000;
    inv.first = admit::world::violation{50LL * 3600 * s, long_detail, 0};
    inv.windows = 1'000'000;
    for (std::size_t w = 0; w < admit::check::max_windows_kept; ++w) {
      admit::check::violation_window win;
      win.start_ns = win.peak_ns = 50LL * 3600 * s + static_cast<std::int64_t>(w) * s;
      win.end_ns = win.start_ns + (inv.level ? s / 2 : 0);
      win.peak = 2000;
      win.bound = 1000;
      win.detail = long_detail;
      inv.window_list.push_back(win);
    }
    if (inv.level) inv.worst = admit::check::worst_moment{2000, 1000, 50LL * 3600 * s + 10 * s, long_detail};
    for (std::size_t c = 0; c < admit::check::max_causes_kept; ++c)
      inv.causes.push_back(admit::check::cause_count{"unexplained", 1000 - c, long_detail});
    rec.invariants.push_back(inv);
  }
  admit::reports::report_input in;
  in.sc = &sc;
  in.file = "bounds.json";
  in.rec = &rec;
  const std::string h = admit::reports::render_html(in);
  INFO("bytes: " << h.size());
  CHECK(occurrences(h, "class=\"zoom\"") == 2);
  CHECK(occurrences(h, "<g class=\"lane zoomed\">") == 80);
  CHECK(h.size() < 1'000'000);  // the bound docs/html-report.md gives per run
}
