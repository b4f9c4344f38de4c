// A run's whole trace through world::run_all's trace_to (what --trace writes):
// each run between its begin and end, in run order; the same seed gives the
// same entries and another seed others; the report's bounded trace is the
// stream's own entries; and a traced run is the same run as an untraced one.
#include <catch2/catch.hpp>

#include <string>
#include <string_view>
#include <vector>

#include "sim/check/trace_sink.hpp"
#include "world_test_support.hpp"

using namespace admit;

namespace {

// Every call the sink got, as text: "begin NAME", one line per entry, "end".
class collecting_sink final : public check::trace_sink {
 public:
  std::vector<std::string> lines;
  std::vector<std::string> lost_why;
  void begin_run(std::string_view run) override { lines.push_back("begin " + std::string(run)); }
  void entry(const check::trace_line& e) noexcept override {
    lines.push_back(std::to_string(e.at_ns) + " " + std::string(e.source) + " " + std::string(e.what) + " " +
                    std::to_string(e.active) + " " + std::to_string(e.waiting) + " " + std::to_string(e.ref));
  }
  void end_run() override { lines.push_back("end"); }
  void lost(std::string_view why) noexcept override { lost_why.emplace_back(why); }
};

std::string line_of(const world::trace_entry& e) {
  return std::to_string(e.at_ns) + " " + e.source + " " + e.what + " " + std::to_string(e.active) + " " +
         std::to_string(e.waiting) + " " + std::to_string(e.ref);
}

struct traced {
  std::vector<world::run_record> runs;
  collecting_sink sink;
};

traced run_traced(const scenario::scenario& sc, std::uint64_t seed, const world::lease_run_options& opts = {}) {
  traced t;
  t.runs = world::run_all(sc, seed, opts, &t.sink);
  return t;
}

scenario::scenario load(const std::string& text) {
  nlohmann::ordered_json doc;
  return scenario::load_scenario_text(text, doc);
}
scenario::scenario load_file(const std::string& path) {
  nlohmann::ordered_json doc;
  return scenario::load_scenario_text(test::slurp(path), doc,
                                      {scenario::directory_of(path), scenario::plain_file_reader()});
}

// The report's bytes, diagnostics included (what admitsim replay compares).
std::string report_of(const scenario::scenario& sc, const std::vector<world::run_record>& runs) {
  reports::report_input in;
  in.sc = &sc;
  in.file = "inline.json";
  for (const auto& r : runs) in.runs.push_back(&r);
  return reports::render_report(reports::build_report(in));
}

// The entries of the run between lines[from] ("begin ...") and its "end".
std::vector<std::string> entries_of(const std::vector<std::string>& lines, std::size_t& from) {
  REQUIRE(lines.at(from).starts_with("begin "));
  std::vector<std::string> out;
  ++from;
  while (lines.at(from) != "end") out.push_back(lines[from++]);
  ++from;
  return out;
}

// A leak found only at the end of the run (liveness, lease_released_once): nothing is traced after the
// first violation, so a ring big enough holds the run's every entry.
const std::string leak = R"({"name": "leak", "gate": {"kind": "fifo", "max_active": 1, "max_waiting": 2,
  "wait_deadline": "1s", "mutation": "leak_handover_on_cancel"}, "service": {"service_time": "100ms"},
  "workload": {"requests": [{"id": "a", "at": "0ms"}, {"id": "b", "at": "10ms", "cancel_at": "100ms"}]},
  "checks": {"trace": 100000}})";

}  // namespace

TEST_CASE("a FIFO run's trace is one run, named \"\", and the ring's entries are its own", "[world][trace]") {
  // Goal: the stream is the run's whole trace. Method: the leak run, whose ring holds everything, against the stream.
  const scenario::scenario sc = load(leak);
  traced t = run_traced(sc, 1);
  REQUIRE(t.runs.size() == 1);
  REQUIRE(t.runs.front().any_violation());
  std::size_t at = 0;
  CHECK(t.sink.lines.front() == "begin ");
  const std::vector<std::string> streamed = entries_of(t.sink.lines, at);
  CHECK(at == t.sink.lines.size());
  std::vector<std::string> ring;
  for (const auto& e : t.runs.front().trace) ring.push_back(line_of(e));
  CHECK(t.runs.front().trace_dropped == 0);
  CHECK(streamed == ring);
  CHECK(streamed.size() > 10);
  CHECK(t.sink.lost_why.empty());
}

TEST_CASE("the stream goes on past the first violation; the ring keeps the entries before it", "[world][trace]") {
  // Goal: a trace file has the whole run. Method: an off-by-one admit breaks the cap at 10ms and the run goes on.
  const scenario::scenario sc = load(R"({"name": "cap", "gate": {"kind": "fifo", "max_active": 1, "max_waiting": 1,
    "mutation": "admit_off_by_one"}, "service": {"service_time": "100ms"},
    "workload": {"requests": [{"id": "a", "at": "0ms"}, {"id": "b", "at": "10ms"}, {"id": "c", "at": "500ms"}]},
    "checks": {"trace": 1000}})");
  traced t = run_traced(sc, 1);
  REQUIRE(t.runs.front().any_violation());
  std::size_t at = 0;
  const std::vector<std::string> streamed = entries_of(t.sink.lines, at);
  const auto& ring = t.runs.front().trace;
  REQUIRE(ring.size() < streamed.size());
  for (std::size_t i = 0; i < ring.size(); ++i) CHECK(line_of(ring[i]) == streamed[i]);
  CHECK(streamed.back().starts_with("600000000 "));  // c's work ends at 600ms: traced after the violation
}

TEST_CASE("a lease scenario's runs are traced one after another, each named", "[world][trace]") {
  // Goal: lines of different runs are told apart. Method: crashed_holder's two variants.
  const scenario::scenario sc = load_file("scenarios/crashed_holder.json");
  traced t = run_traced(sc, 13);
  REQUIRE(t.runs.size() == 2);
  std::size_t at = 0;
  CHECK(t.sink.lines.at(at) == "begin seed");
  const auto first = entries_of(t.sink.lines, at);
  CHECK(t.sink.lines.at(at) == "begin server_time");
  const auto second = entries_of(t.sink.lines, at);
  CHECK(at == t.sink.lines.size());
  CHECK(first.size() > 100);
  CHECK(second.size() > 100);
  CHECK(t.sink.lost_why.empty());
}

TEST_CASE("an error reply is traced as the error, and the EVALSHA-to-EVAL fallback as what it is", "[world][trace]") {
  // Goal: a NOSCRIPT reply does not read "-> 0". Method: redis_restart's protocol run (the restart empties the
  // script cache), its trace searched for the NOSCRIPT reply and the same token's acquire answered next.
  const scenario::scenario sc = load_file("scenarios/redis_restart.json");
  traced t = run_traced(sc, 15);
  std::size_t noscript = 0, answered_after = 0;
  for (std::size_t i = 0; i < t.sink.lines.size(); ++i) {
    const std::string& l = t.sink.lines[i];
    if (l.find(" -> error NOSCRIPT No matching script.") == std::string::npos) continue;
    ++noscript;
    CHECK(l.find("the client resends it by EVAL") != std::string::npos);
    // The acquire traced before the error (the token) is answered again, by EVAL, as a number.
    const std::string head = l.substr(0, l.find(" -> "));
    const std::string op_token = head.substr(head.find(" redis ") + 7);
    bool answered = false;
    for (std::size_t j = i + 1; j < t.sink.lines.size() && !answered; ++j)
      answered = t.sink.lines[j].find(" redis " + op_token + " -> ") != std::string::npos &&
                 t.sink.lines[j].find(" -> error") == std::string::npos;
    answered_after += answered ? 1 : 0;
  }
  CHECK(noscript > 0);
  CHECK(answered_after > 0);
  for (const auto& l : t.sink.lines) {
    const bool plain = l.find("NOSCRIPT") == std::string::npos || l.find(" -> error NOSCRIPT") != std::string::npos;
    CHECK(plain);
  }
}

TEST_CASE("the same seed gives the same trace, another seed another", "[world][trace][determinism]") {
  // Goal: traces diff by what the runs did. Method: lab_fifo and crashed_holder twice with one seed, once with another.
  for (const char* file : {"scenarios/lab_fifo.json", "scenarios/crashed_holder.json", "scenarios/fifo_poisson.json"}) {
    INFO(file);
    const scenario::scenario sc = load_file(file);
    const traced a = run_traced(sc, 5);
    const traced b = run_traced(sc, 5);
    CHECK(a.sink.lines == b.sink.lines);
    if (std::string_view(file) != "scenarios/lab_fifo.json") {  // the lab's requests are fixed: no seed changes them
      const traced c = run_traced(sc, 6);
      CHECK(a.sink.lines != c.sink.lines);
    }
  }
}

TEST_CASE("a traced run is the same run as an untraced one", "[world][trace]") {
  // Goal: --trace changes no report. Method: runs with and without a sink, with the full and the lean options, compared field by field.
  for (const char* file : {"scenarios/fifo_crash_restart.json", "scenarios/redis_failover.json"}) {
    INFO(file);
    const scenario::scenario sc = load_file(file);
    world::lease_run_options lean;
    lean.timeline = false;
    lean.trace = false;
    for (const world::lease_run_options& opts : {world::lease_run_options{}, lean}) {
      const std::vector<world::run_record> plain = world::run_all(sc, sc.seed, opts);
      const traced t = run_traced(sc, sc.seed, opts);
      REQUIRE(plain.size() == t.runs.size());
      CHECK(report_of(sc, plain) == report_of(sc, t.runs));
      for (std::size_t i = 0; i < plain.size(); ++i) {
        CHECK(plain[i].trace.size() == t.runs[i].trace.size());
        CHECK(plain[i].trace_dropped == t.runs[i].trace_dropped);
        for (std::size_t j = 0; j < plain[i].trace.size(); ++j)
          CHECK(line_of(plain[i].trace[j]) == line_of(t.runs[i].trace[j]));
      }
    }
  }
}
