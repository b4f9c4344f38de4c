// The explore summary's codec: real summaries read back and written again give their own bytes,
// and from_json refuses a malformed one at its JSON path. Method: summaries admitsim explore
// wrote (tests/fixtures/explore: a shard's, with findings, causes, shrinks and its merge block; a
// --perturb-ties search's; a guided search's), each parsed, read and rendered; then one of them
// edited key by key; and the findings of an in-process search, each through its codec.
#include <catch2/catch.hpp>

#include <functional>

#include "sim/codec/json_codec.hpp"
#include "sim/explore/search_summary.hpp"
#include "tests/explore/explore_test_support.hpp"

namespace {

using namespace admit;
using json = nlohmann::ordered_json;
using test::catalogue;
using test::read_bytes;
using test::source_path;

const char* const fixtures[] = {"tests/fixtures/explore/clock_steps_shard1of4-explore.json",
                                "tests/fixtures/explore/handover_race_perturb-explore.json",
                                "tests/fixtures/explore/clock_steps_guided-explore.json"};

json fixture(const char* name) { return json::parse(read_bytes(source_path(name))); }

// The codec_error from_json throws for `doc` (fails the test if it throws none).
codec::codec_error refusal(const json& doc) {
  try {
    (void)explore::search_summary::from_json(doc);
  } catch (const codec::codec_error& e) {
    return e;
  }
  FAIL("from_json accepted a malformed summary");
  return codec::codec_error("", "");
}

// The shard's summary with one edit at a JSON pointer.
json edited(const std::function<void(json&)>& edit) {
  json doc = fixture(fixtures[0]);
  edit(doc);
  return doc;
}

}  // namespace

TEST_CASE("search_summary: a real summary read and written again is the same bytes", "[explore][summary]") {
  for (const char* name : fixtures) {
    INFO(name);
    const std::string bytes = read_bytes(source_path(name));
    const explore::search_summary s = explore::search_summary::from_json(json::parse(bytes));
    CHECK(s.render() == bytes);
    // And once more from its own output: the codec is a fixed point, not a lucky first pass.
    CHECK(explore::search_summary::from_json(s.to_json()).render() == bytes);
  }
}

TEST_CASE("search_summary: the fixtures hold every part the codec reads", "[explore][summary]") {
  // Guards the round trip above against fixtures too plain to test it.
  const explore::search_summary shard = explore::search_summary::from_json(fixture(fixtures[0]));
  REQUIRE(shard.merge.has_value());
  CHECK(shard.seeds.shard_count == 4);
  CHECK_FALSE(shard.findings.empty());
  CHECK_FALSE(shard.shrunk.empty());
  CHECK_FALSE(shard.totals.by_kind.empty());
  CHECK_FALSE(shard.totals.by_kind.front().causes.empty());
  CHECK_FALSE(shard.expected_violations.empty());
  CHECK(shard.bounds.has_value());
  const explore::search_summary perturbed = explore::search_summary::from_json(fixture(fixtures[1]));
  CHECK(perturbed.totals.distinct_orderings.has_value());
  const explore::search_summary guided = explore::search_summary::from_json(fixture(fixtures[2]));
  CHECK(guided.mode == "guided");
  bool any_origin = false;
  for (const auto& f : guided.findings) any_origin = any_origin || !f.origin.empty();
  CHECK(any_origin);
}

TEST_CASE("search_summary: the findings of an in-process search go through their codec unchanged", "[explore][summary]") {
  const scenario::scenario sc = catalogue("explore_clock_steps");
  explore::explore_options opt;
  opt.seeds.count = 8;
  opt.jobs = 1;
  const explore::explore_summary found = explore::run_explore(sc, opt);
  std::size_t findings = 0;
  for (const auto& o : found.seeds) {
    if (!o.any_violation()) continue;
    ++findings;
    const json j = explore::finding::of(o).to_json();
    CHECK(explore::finding::from_json(j, "/findings/0").to_json() == j);
  }
  CHECK(findings != 0);
}

TEST_CASE("search_summary: from_json refuses a malformed summary at its JSON path", "[explore][summary]") {
  SECTION("a missing key") {
    const auto e = refusal(edited([](json& d) { d["totals"]["by_kind"][0]["causes"][0].erase("example"); }));
    CHECK(e.path == "/totals/by_kind/0/causes/0/example");
    CHECK(std::string(e.what()) == "missing");
  }
  SECTION("a wrong type") {
    const auto e = refusal(edited([](json& d) { d["seeds"]["ran"] = "ten"; }));
    CHECK(e.path == "/seeds/ran");
    CHECK(std::string(e.what()) == "expected an integer from 0 to 2^64-1, got \"ten\"");
  }
  SECTION("a negative number") {
    const auto e = refusal(edited([](json& d) { d["findings"][0]["runs"][0]["broken"][0]["at_ns"] = -5; }));
    CHECK(e.path == "/findings/0/runs/0/broken/0/at_ns");
    CHECK(std::string(e.what()) == "expected an integer from 0 to 2^63-1, got -5");
    const auto seeds = refusal(edited([](json& d) { d["totals"]["runs"] = -1; }));
    CHECK(seeds.path == "/totals/runs");
  }
  SECTION("a part that does not agree with another") {
    const auto cause = refusal(edited([](json& d) { d["totals"]["by_kind"][0]["causes"][0]["seeds"] = 0; }));
    CHECK(cause.path == "/totals/by_kind/0/causes/0/seeds");
    const auto minimal = refusal(edited([](json& d) { d["shrunk"][0]["minimal_report"] = nullptr; }));
    CHECK(minimal.path == "/shrunk/0/minimal_report");
    const auto removed = refusal(edited([](json& d) { d["shrunk"][0]["faults"]["removed"] = 99; }));
    CHECK(removed.path == "/shrunk/0/faults/removed");
  }
  SECTION("the evidence, below its own path") {
    const auto e = refusal(edited([](json& d) { d["evidence_by_variant"][0].erase("violating"); }));
    CHECK(e.path == "/evidence_by_variant/0/violating");
  }
  SECTION("not a summary") {
    CHECK(refusal(json::array()).path.empty());
    const auto e = refusal(edited([](json& d) { d["format"] = "admitsim-report/1"; }));
    CHECK(e.path == "/format");
    CHECK(refusal(edited([](json& d) { d["mode"] = "sideways"; })).path == "/mode");
    CHECK(refusal(edited([](json& d) { d["seeds"]["shard"] = "4/4"; })).path == "/seeds/shard");
  }
}

TEST_CASE("search_summary: a shrunk entry's confirmation (explore --confirm) reads back to its bytes",
          "[explore][summary][confirm]") {
  // A confirmation is written only with --confirm: the fixtures have none, and keep their bytes above.
  json doc = fixture(fixtures[0]);
  REQUIRE_FALSE(doc["shrunk"].empty());
  CHECK_FALSE(doc["shrunk"][0].contains("confirmation"));
  doc["shrunk"][0]["confirmation"] = json::parse(R"({"scenario": "out/x-seed1-seed-min.json",
    "label": "not confirmed in 2 real runs", "time_scale": 0.5,
    "simulated": {"verdict": "violation", "broken": ["portal_inflight_le_cap"]}, "verdict": "not_confirmed",
    "as_expected": false, "why": "no watched invariant broke in 2 real runs", "real_runs": []})");
  const std::string bytes = codec::render_json(doc);
  const explore::search_summary s = explore::search_summary::from_json(doc);
  REQUIRE(s.shrunk[0].confirmation.has_value());
  CHECK(s.shrunk[0].confirmed_scenario == "out/x-seed1-seed-min.json");
  CHECK(s.shrunk[0].confirmation->words() == "not confirmed in 2 real runs");
  CHECK(s.render() == bytes);
  doc["shrunk"][0]["confirmation"]["verdict"] = "confirmed";
  CHECK(refusal(doc).path == "/shrunk/0/confirmation/label");
  doc["shrunk"][0]["confirmation"].erase("scenario");
  CHECK(refusal(doc).path == "/shrunk/0/confirmation/scenario");
}
