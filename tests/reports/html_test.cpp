#include <catch2/catch.hpp>
#include <string>
#include <string_view>
#include <utility>

#include "reports/html.hpp"
#include "tests/reports/html_test_support.hpp"
#include "tests/world/world_test_support.hpp"

namespace {

using admit::world::run_record;

using admit::test::html_without_diagnostics;
using admit::test::occurrences;

struct page {
  admit::test::rendered run;
  std::string html;
};

// Runs a scenario as the CLI does and renders both reports from the same records.
page render_text(const std::string& text, std::uint64_t seed, const std::string& file,
                 const std::string& name_override = {}, bool from_file = false) {
  // A catalogue file is loaded as the CLI loads it (its protocol files read beside it, and put inline in `doc`).
  nlohmann::ordered_json doc;
  admit::scenario::scenario sc = from_file ? admit::scenario::load_scenario_file(file, doc)
                                           : admit::scenario::load_scenario_text(text, doc);
  if (!name_override.empty()) sc.name = name_override;
  page p;
  p.run.runs = admit::world::run_all(sc, seed);
  p.run.rec = p.run.runs.front();
  admit::reports::report_input in;
  in.sc = &sc;
  in.source = &doc;
  in.file = file;
  in.sha256 = admit::reports::sha256_hex(text);
  for (const auto& r : p.run.runs) in.runs.push_back(&r);
  p.run.report = admit::reports::build_report(in);
  p.html = admit::reports::render_html(in);
  return p;
}

page render_file(const std::string& path, std::uint64_t seed) {
  return render_text(admit::test::slurp(path), seed, path, {}, true);
}

// The elements the page opens are closed again (a cheap structural check; the browser test loads it).
void check_balanced(const std::string& html) {
  CHECK(occurrences(html, "<svg ") == occurrences(html, "</svg>"));
  CHECK(occurrences(html, "<table") == occurrences(html, "</table>"));
  CHECK(occurrences(html, "<section") == occurrences(html, "</section>"));
  CHECK(occurrences(html, "<g ") + occurrences(html, "<g>") == occurrences(html, "</g>"));
  CHECK(occurrences(html, "<tr") == occurrences(html, "</tr>"));
  CHECK(occurrences(html, "<text") == occurrences(html, "</text>"));
  CHECK(occurrences(html, "<title>") == occurrences(html, "</title>"));
  CHECK(occurrences(html, "<script>") == 1);
  CHECK(occurrences(html, "</script>") == 1);
}

// Nothing is fetched: the only URL is the SVG namespace.
void check_self_contained(const std::string& html) {
  CHECK(occurrences(html, "http") == occurrences(html, "xmlns=\"http://www.w3.org/2000/svg\""));
  CHECK(occurrences(html, " src=\"") == 0);
  CHECK(occurrences(html, "<link") == 0);
  CHECK(occurrences(html, "@import") == 0);
}


}  // namespace

TEST_CASE("clock_skew: the violating variant is marked, with its cap, peak, trace and replay", "[reports][html]") {
  // Goal: what a person needs to see of a violation is on the page. Method: render clock_skew's
  // runs (seed variant violates portal_inflight_le_cap, server_time passes) and look for each part.
  const page p = render_file("scenarios/clock_skew.json", 11);
  const std::string& h = p.html;
  check_balanced(h);
  check_self_contained(h);
  CHECK(h.starts_with("<!DOCTYPE html>\n"));
  CHECK(h.find("id=\"verdict\" data-verdict=\"violation\"") != std::string::npos);
  CHECK(h.find(">VIOLATION<") != std::string::npos);
  CHECK(h.find("seed <b>11</b>") != std::string::npos);
  // The replay command is the JSON report's.
  const std::string replay = p.run.report["replay"].get<std::string>();
  CHECK(h.find("<pre class=\"replay\" id=\"replay\">" + replay + "</pre>") != std::string::npos);
  // One section per variant, the seed variant violating.
  CHECK(h.find("<section class=\"run\" id=\"run-seed\" data-verdict=\"violation\">") != std::string::npos);
  CHECK(h.find("<section class=\"run\" id=\"run-server_time\" data-verdict=\"pass\">") != std::string::npos);
  // Exactly one element carries the id; every violating run has a marker on its timeline and lanes.
  CHECK(occurrences(h, "id=\"violation-marker\"") == 1);
  CHECK(occurrences(h, "class=\"violation-marker\"") == 2);
  CHECK(h.find("data-invariant=\"portal_inflight_le_cap\" data-at-ns=\"5320000000\"") != std::string::npos);
  // The run keeps going past the first violation: the attempted connections (refused above the cap,
  // which the portal series never held) reach 8 against 4, drawn as the peak.
  CHECK(h.find("8 &gt; cap 4") != std::string::npos);
  // Caps: the lease limit and the portal cap, once per run.
  CHECK(occurrences(h, "class=\"cap-line\" data-cap=\"4\"") == 4);
  // The trace before the violation: every kept entry plus the violation row.
  const run_record& seed_run = p.run.runs.front();
  REQUIRE(seed_run.any_violation());
  CHECK(occurrences(h, "<table class=\"trace\">") == 1);
  CHECK(occurrences(h, "<tr class=\"violation-row\">") == 1);
  CHECK(h.find("worker 6 was refused: 5 connections asked of the portal (4 open, the rest refused with 429), above its true cap 4") != std::string::npos);
  // Swimlanes grouped per worker; the skewed clock is named on its group.
  CHECK(h.find("worker 0 (+20s)") != std::string::npos);
  CHECK(occurrences(h, "<g class=\"lane\">") ==
        p.run.runs[0].series.lanes().size() + p.run.runs[1].series.lanes().size());
  // A waiting-time histogram per run.
  CHECK(occurrences(h, "<svg class=\"histogram\"") == 2);
}

TEST_CASE("lab_fifo: a passing run has no violation marker, and a lane per request", "[reports][html]") {
  // Goal: the FIFO page of the lab scenario. Method: render it and check the verdict, caps and lanes.
  const page p = render_file("scenarios/lab_fifo.json", 1);
  const std::string& h = p.html;
  check_balanced(h);
  check_self_contained(h);
  CHECK(h.find("id=\"verdict\" data-verdict=\"pass\"") != std::string::npos);
  CHECK(h.find(">PASS<") != std::string::npos);
  CHECK(occurrences(h, "class=\"violation-marker\"") == 0);
  CHECK(occurrences(h, "<table class=\"trace\">") == 0);
  // Three gates of max_active 1: cap 3 for the gate and (by default) for the portal.
  CHECK(occurrences(h, "class=\"cap-line\" data-cap=\"3\"") == 3);  // gate, portal, and the queue's total max_waiting
  CHECK(occurrences(h, "<g class=\"lane\">") == 7);
  for (const char* id : {"first", "queued", "overflow", "slow_client", "promo_a", "promo_b", "broken"})
    CHECK(h.find(std::string(">") + id + "</text>") != std::string::npos);
  // The slow client's give-up is drawn; the outcomes are named.
  CHECK(occurrences(h, "class=\"gave-up\"") == 1);
  CHECK(h.find(">queue_full</text>") != std::string::npos);
  CHECK(h.find(">wait_timeout</text>") != std::string::npos);
  // Four requests were admitted at once: the histogram's zero bar.
  CHECK(h.find("4 admitted at once (0 ns)") != std::string::npos);
}

TEST_CASE("fault windows are shaded and labelled with their kind and target", "[reports][html]") {
  // Goal: a fault is visible where it happened. Method: redis_restart (one restart at 10s, 500ms)
  // and redis_partition (two partitions) render one labelled window per fault and run.
  const page rr = render_file("scenarios/redis_restart.json", 15);
  check_balanced(rr.html);
  const std::size_t runs = rr.run.runs.size();
  CHECK(occurrences(rr.html, "<g class=\"fault-window\" data-kind=\"redis_restart\">") == runs);
  CHECK(occurrences(rr.html, ">redis_restart redis</text>") == runs);
  CHECK(rr.html.find("<title>redis_restart redis, 10s – 10.5s</title>") != std::string::npos);
  const page rp = render_file("scenarios/redis_partition.json", 14);
  check_balanced(rp.html);
  CHECK(occurrences(rp.html, "<g class=\"fault-window\" data-kind=\"partition\">") == 2 * rp.run.runs.size());
  CHECK(rp.html.find(">partition worker:2|redis</text>") != std::string::npos);
}

TEST_CASE("every string from a scenario or the command line is escaped", "[reports][html]") {
  // Goal: a scenario cannot inject markup or script into the page. Method: a description, a name
  // (set past the loader, which only admits plain names) and a file path full of markup and quotes.
  const std::string text = R"({"name": "escape",
    "description": "<script>alert(\"x\")</script> & 'quoted' <img src=x onerror=alert(1)>",
    "gate": {"kind": "fifo", "max_active": 1, "max_waiting": 1, "wait_deadline": "100ms"},
    "service": {"service_time": "50ms"},
    "workload": {"requests": [{"id": "a", "at": "0ms"}, {"id": "b", "at": "10ms"}]}})";
  const page p = render_text(text, 1, "dir/<b>\"x\"'.json", "<script>\"name\"</script>");
  const std::string& h = p.html;
  check_balanced(h);
  check_self_contained(h);
  CHECK(h.find("<script>alert") == std::string::npos);
  CHECK(h.find("<img") == std::string::npos);
  CHECK(h.find("<b>\"x\"") == std::string::npos);
  CHECK(h.find("<script>\"name\"") == std::string::npos);
  CHECK(h.find("&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &#39;quoted&#39; &lt;img src=x") !=
        std::string::npos);
  CHECK(h.find("&lt;script&gt;&quot;name&quot;&lt;/script&gt;") != std::string::npos);
  CHECK(h.find("dir/&lt;b&gt;&quot;x&quot;&#39;.json") != std::string::npos);
}

TEST_CASE("the same run renders the same bytes", "[reports][html][determinism]") {
  // Goal: the HTML is as reproducible as the JSON. Method: run and render twice in one process.
  for (const auto& [file, seed] : {std::pair<const char*, std::uint64_t>{"scenarios/clock_skew.json", 11},
                                   {"scenarios/lab_fifo.json", 1},
                                   {"scenarios/fifo_ramp_cancel.json", 11},
                                   {"scenarios/fifo_crash_restart.json", 1}}) {
    INFO(file);
    CHECK(render_file(file, seed).html == render_file(file, seed).html);
  }
}

TEST_CASE("the page stays small however much a run records", "[reports][html]") {
  // Goal: the size is bounded by the timeline's bounds, not by the run's length. Method: fill
  // every bound of one record (buckets, fault windows, lanes, trace, histogram) and render it.
  const std::string text = R"({"name": "bounds",
    "gate": {"kind": "fifo", "max_active": 1000, "max_waiting": 100000, "wait_deadline": "1h"},
    "service": {"service_time": "1s"},
    "workload": {"requests": [{"at": "0ms"}]}})";
  const admit::scenario::scenario sc = admit::scenario::load_scenario_text(text);
  run_record rec;
  rec.seed = 1;
  admit::world::invariant_result broken;
  broken.name = "gate_inflight_le_cap";
  broken.enabled = true;
  broken.holds = false;
  broken.checked = 1;
  broken.first = admit::world::violation{3'600'000'000'000, "over", 10};
  rec.invariants.push_back(std::move(broken));
  rec.metrics.requests = 1'000'000;
  rec.metrics.simulated_ns = 100LL * 3600 * 1'000'000'000;
  rec.metrics.gate_inflight_max = 1001;
  // Every bucket different, so no two neighbours merge in the drawing.
  for (std::int64_t t = 0; t < rec.metrics.simulated_ns; t += 97'000'000'000) {
    const std::int64_t k = t / 97'000'000'000;
    rec.series.sample(t, k % 1000, (k * 7) % 1000, (k * 13) % 100000);
    rec.series.sample(t + 1, (k + 500) % 1000, (k * 3) % 1000, (k * 11) % 100000);
  }
  REQUIRE(rec.series.buckets().size() > admit::world::timeline::max_buckets / 2);
  for (std::size_t i = 0; i < admit::world::timeline::max_windows + 10; ++i)
    rec.series.add_window(admit::world::fault_window{"client_timeout_burst", "worker:99999",
                                                     static_cast<std::int64_t>(i) * 300'000'000'000,
                                                     static_cast<std::int64_t>(i) * 300'000'000'000 + 60'000'000'000});
  for (std::uint64_t n = 1; n <= admit::world::timeline::max_lanes; ++n) {
    admit::world::lane* l = rec.series.lane_for(n);
    REQUIRE(l != nullptr);
    const auto t = static_cast<std::int64_t>(n) * 1'000'000;
    l->id = "arrivals/0/" + std::to_string(n);
    l->arrived_ns = t;
    l->granted_ns = t + 500;
    l->work_start_ns = t + 500;
    l->work_end_ns = t + 900'000;
    l->gave_up_ns = t + 800'000;
    l->ended_ns = t + 900'000;
    l->outcome = "completed";
  }
  for (int i = 0; i < 64; ++i)
    rec.trace.push_back(admit::world::trace_entry{i, "a-gate-name-of-some-length", "promoted", i, i, 1});
  for (std::int64_t v = 1; v < INT64_MAX / 32; v += v / 16 + 1) rec.metrics.wait_ns.add(v);
  admit::reports::report_input in;
  in.sc = &sc;
  in.file = "bounds.json";
  in.rec = &rec;
  const std::string h = admit::reports::render_html(in);
  check_balanced(h);
  INFO("bytes: " << h.size());
  CHECK(h.size() < 1'000'000);
  // On the timeline; the swimlanes' axis (the first 400 requests) ends long before it.
  CHECK(occurrences(h, "class=\"violation-marker\"") == 1);
}

TEST_CASE("each run's kernel diagnostics are one line of the page", "[reports][html]") {
  // Goal: the page shows the JSON report's diagnostics on a line of their own, which the examples'
  // comparison below leaves out and nothing more. Method: clock_skew's two runs, their lines and figures.
  const page p = render_file("scenarios/clock_skew.json", 11);
  REQUIRE(p.run.runs.size() == 2);
  CHECK(occurrences(p.html, "\n<p class=\"note diagnostics\">") == 2);
  CHECK(p.html.find("<dt>events</dt>") == std::string::npos);
  for (const auto& r : p.run.runs) {
    const auto n = [](std::uint64_t x) {  // 1234567 -> "1,234,567", as the page groups digits
      const std::string d = std::to_string(x);
      std::string o;
      for (std::size_t i = 0; i < d.size(); ++i) {
        if (i > 0 && (d.size() - i) % 3 == 0) o += ',';
        o += d[i];
      }
      return o;
    };
    CHECK(p.html.find("<p class=\"note diagnostics\">Kernel: " + n(r.diagnostics.events) + " events run, " +
                      n(r.diagnostics.sequence_numbers) + " sequence numbers drawn.</p>\n") != std::string::npos);
  }
  const std::string rest = html_without_diagnostics(p.html);
  CHECK(occurrences(rest, "diagnostics") == 0);
  CHECK(p.html.size() - rest.size() < 200);
  check_balanced(rest);
}

TEST_CASE("the committed HTML examples regenerate byte for byte but for their diagnostics",
          "[reports][html][examples]") {
  // Goal: reports/examples/*.html show what the code draws today, and a change of the kernel alone does
  // not make them stale. Method: render each committed page's scenario with its seed, as
  // scripts/render-html-examples.sh does, and compare the bytes without the kernel's diagnostics lines.
  for (const auto& [name, seed] : {std::pair<const char*, std::uint64_t>{"clock_skew", 11},
                                   {"lab_fifo", 1},
                                   {"redis_restart", 15}}) {
    INFO(name << " (regenerate with scripts/render-html-examples.sh after an intended change)");
    const std::string recorded = admit::test::slurp(std::string("reports/examples/") + name + ".html");
    REQUIRE_FALSE(recorded.empty());
    CHECK(html_without_diagnostics(render_file(std::string("scenarios/") + name + ".json", seed).html) ==
          html_without_diagnostics(recorded));
  }
}
