// The sweep's parts that need no run: the JSON-pointer patch (which fields it
// takes, how values read and are written back), the grid, the default
// tolerance, and how a grid of classes is judged (a boundary, none, not
// monotone, an inconclusive value never counted as safe).
#include <catch2/catch.hpp>

#include "sim/explore/scenario_patch.hpp"
#include "sim/explore/sweep.hpp"

namespace {

using json = nlohmann::ordered_json;
using namespace admit::explore;

const json doc = json::parse(R"({"gate": {"lease": "15s", "limit": 4, "f": 0.8, "on": true},
                                 "fleet": {"clocks": [{"worker": 0, "offset": "+2s"}]}})");

param_target target(const std::string& pointer) {
  const target_or_error t = find_target(doc, pointer);
  INFO(t.why);
  REQUIRE(t.target.has_value());
  return *t.target;
}

value_result with(const param_target& t, const std::string& text, std::uint64_t seeds, std::uint64_t violating,
                  std::uint64_t inconclusive = 0) {
  value_result r;
  r.value = *parse_value(t, text);
  r.seeds_run = seeds;
  r.violating = violating;
  r.inconclusive = inconclusive;
  return r;
}

sweep_result judged(const param_target& t, std::vector<value_result> grid) {
  sweep_result r;
  r.grid = std::move(grid);
  judge_grid(t, r);
  return r;
}

}  // namespace

TEST_CASE("a sweep reads a field by its type and writes it back the same way", "[explore][sweep]") {
  // Goal: values are typed like the field they replace. Method: each kind of field, a value patched in.
  const param_target offset = target("/fleet/clocks/0/offset");
  CHECK(offset.kind == param_kind::duration);
  CHECK(offset.signed_text);
  CHECK(offset.current_n == 2'000'000'000);
  CHECK(patched(doc, offset, *parse_value(offset, "2.5s"))["fleet"]["clocks"][0]["offset"] == "+2500ms");
  CHECK(patched(doc, offset, *parse_value(offset, "-1s"))["fleet"]["clocks"][0]["offset"] == "-1s");
  const param_target lease = target("/gate/lease");
  CHECK_FALSE(lease.signed_text);
  CHECK(value_exact(lease, *parse_value(lease, "1500ms")) == "1500ms");
  CHECK(value_text(lease, *parse_value(lease, "1500ms")) == "1.5s");
  const param_target limit = target("/gate/limit");
  CHECK(limit.kind == param_kind::integer);
  CHECK_FALSE(parse_value(limit, "2.5").has_value());
  CHECK_FALSE(parse_value(limit, "4x").has_value());
  CHECK(patched(doc, limit, *parse_value(limit, "7"))["gate"]["limit"] == 7);
  const param_target f = target("/gate/f");
  CHECK(f.kind == param_kind::number);
  CHECK(patched(doc, f, *parse_value(f, "0.5"))["gate"]["f"] == 0.5);
  CHECK_FALSE(parse_value(f, "nan").has_value());
  CHECK_FALSE(parse_value(lease, "15").has_value());
}

TEST_CASE("a sweep refuses a pointer to nothing, to a non-value, or no pointer", "[explore][sweep]") {
  CHECK_FALSE(find_target(doc, "/gate/missing").target.has_value());
  CHECK(find_target(doc, "/gate/missing").why.find("names nothing") != std::string::npos);
  CHECK_FALSE(find_target(doc, "/fleet/clocks/3/offset").target.has_value());
  CHECK_FALSE(find_target(doc, "/gate").target.has_value());
  CHECK_FALSE(find_target(doc, "/gate/on").target.has_value());
  CHECK_FALSE(find_target(doc, "gate/lease").target.has_value());
  CHECK_FALSE(find_target(doc, "/fleet/clocks/x/offset").target.has_value());
}

TEST_CASE("an even grid is exact, increasing and without duplicates", "[explore][sweep]") {
  const param_target offset = target("/fleet/clocks/0/offset");
  const auto g = even_grid(offset, *parse_value(offset, "2s"), *parse_value(offset, "4s"), 5);
  REQUIRE(g.size() == 5);
  CHECK(value_exact(offset, g[1]) == "+2500ms");
  CHECK(value_text(offset, g[1]) == "+2.5s");
  CHECK(value_text(offset, g[4]) == "+4s");
  const param_target limit = target("/gate/limit");
  const auto ints = even_grid(limit, *parse_value(limit, "1"), *parse_value(limit, "3"), 11);
  REQUIRE(ints.size() == 3);  // 1, 1, 1, 1, 1, 2, ... rounded down and deduplicated
  CHECK(ints[0].n == 1);
  CHECK(ints[2].n == 3);
  // A sixteenth of the smallest step, at least one unit.
  CHECK(default_tolerance(offset, g).n == 500'000'000 / 16);
  CHECK(default_tolerance(limit, ints).n == 1);
}

TEST_CASE("a grid is judged: one change of class is a boundary, more is none", "[explore][sweep]") {
  // Goal: never claim a boundary the data do not show. Method: crafted grids of classes.
  const param_target t = target("/fleet/clocks/0/offset");
  SECTION("safe then unsafe: a boundary, unsafe above") {
    const auto r = judged(t, {with(t, "1s", 10, 0), with(t, "2s", 10, 0), with(t, "3s", 10, 4), with(t, "4s", 10, 10)});
    CHECK(r.kind == boundary_kind::found);
    CHECK(r.increasing);
    CHECK(value_text(t, *r.safe) == "+2s");
    CHECK(value_text(t, *r.unsafe) == "+3s");
  }
  SECTION("unsafe then safe: a boundary, unsafe below") {
    const auto r = judged(t, {with(t, "1s", 10, 3), with(t, "2s", 10, 0)});
    CHECK(r.kind == boundary_kind::found);
    CHECK_FALSE(r.increasing);
    CHECK(value_text(t, *r.safe) == "+2s");
    CHECK(value_text(t, *r.unsafe) == "+1s");
  }
  SECTION("not monotone: safe, unsafe, safe again") {
    const auto r = judged(t, {with(t, "1s", 10, 0), with(t, "2s", 10, 1), with(t, "3s", 10, 0)});
    CHECK(r.kind == boundary_kind::not_monotone);
    CHECK_FALSE(r.safe.has_value());
  }
  SECTION("a rate that rises and falls but stays positive is one class: no boundary in range") {
    const auto r = judged(t, {with(t, "1s", 10, 5), with(t, "2s", 10, 1), with(t, "3s", 10, 9)});
    CHECK(r.kind == boundary_kind::none_all_unsafe);
  }
  SECTION("no value violates") {
    const auto r = judged(t, {with(t, "1s", 10, 0), with(t, "2s", 10, 0)});
    CHECK(r.kind == boundary_kind::none_all_safe);
  }
  SECTION("an inconclusive value is never safe") {
    const auto r = judged(t, {with(t, "1s", 10, 0, 1), with(t, "2s", 10, 0, 10)});
    CHECK(r.grid[0].cls() == value_class::unknown);
    CHECK(r.kind == boundary_kind::unknown);
  }
  SECTION("an inconclusive value between safe and unsafe blocks the claim") {
    const auto r = judged(t, {with(t, "1s", 10, 0), with(t, "2s", 10, 0, 2), with(t, "3s", 10, 2)});
    CHECK(r.kind == boundary_kind::bracketed);
    CHECK(r.note.find("+2s") != std::string::npos);
  }
  SECTION("a violating seed makes a value unsafe even when others were inconclusive") {
    CHECK(with(t, "1s", 10, 1, 3).cls() == value_class::unsafe);
  }
}

TEST_CASE("a grid of decimal numbers holds the decimals a person typed", "[explore][sweep]") {
  // Goal: 0.1 to 1.0 gives 0.7, not 0.7000000000000001. Method: grids, midpoints and the tolerance
  // of decimal inputs, compared with the doubles of their decimal spellings and as the JSON prints them.
  const param_target f = target("/gate/f");
  const auto g = even_grid(f, *parse_value(f, "0.1"), *parse_value(f, "1.0"), 10);
  REQUIRE(g.size() == 10);
  for (std::size_t i = 0; i < g.size(); ++i) {
    INFO(i);
    CHECK(g[i].x == static_cast<double>(i + 1) / 10);
    CHECK(value_text(f, g[i]) == std::string(i + 1 == 10 ? "1.0" : "0." + std::to_string(i + 1)));
  }
  const auto thirds = even_grid(f, *parse_value(f, "0.05"), *parse_value(f, "0.35"), 4);
  REQUIRE(thirds.size() == 4);
  CHECK(value_text(f, thirds[1]) == "0.15");
  CHECK(value_text(f, thirds[2]) == "0.25");
  // A sixteenth of the step 0.1: 0.00625, not 0.006249999999999999.
  CHECK(value_text(f, default_tolerance(f, g)) == "0.00625");
  // A bisection between 0.2 and 0.3 runs 0.25, and its width reads 0.05.
  sweep_request req;
  req.target = f;
  req.seeds = 10;
  sweep_result r;
  r.kind = boundary_kind::found;
  r.safe = *parse_value(f, "0.7");
  r.unsafe = *parse_value(f, "0.8");
  r.grid = {with(f, "0.7", 10, 0), with(f, "0.8", 10, 3)};
  CHECK(boundary_words(req, r).find("lies within 0.1") != std::string::npos);
}

TEST_CASE("a sweep writes durations for people, and exactly where a program reads them", "[explore][sweep]") {
  // Goal: "+1.996s", not "+1996093750ns", in the words; the JSON keeps the exact value. Method: a
  // bisected bracket of the clock-skew sweep, its words and its JSON.
  const param_target t = target("/fleet/clocks/0/offset");
  sweep_request req;
  req.target = t;
  req.seeds = 20;
  req.bisect = true;
  req.grid = even_grid(t, *parse_value(t, "1s"), *parse_value(t, "3s"), 9);  // 250ms apart
  req.tolerance = default_tolerance(t, req.grid);                             // 15.625ms
  CHECK(text_resolution_ns(req) == 15'625'000 / 2);
  sweep_result r;
  r.grid = {with(t, "1s", 20, 0), with(t, "1.75s", 20, 0), with(t, "2s", 20, 5)};
  r.kind = boundary_kind::found;
  r.safe = *parse_value(t, "1996093750ns");
  r.unsafe = *parse_value(t, "2s");
  const std::string words = boundary_words(req, r);
  INFO(words);
  CHECK(words.find("safe at and below +1.996s of /fleet/clocks/0/offset") != std::string::npos);
  CHECK(words.find("violations from +2s (5 of 20 seeds)") != std::string::npos);
  CHECK(words.find("lies within 3.906ms") != std::string::npos);
  CHECK(words.find("1996093750") == std::string::npos);
  const auto j = sweep_json(req, r);
  CHECK(j["boundary"]["safe"] == "+1996093750ns");
  CHECK(j["boundary"]["safe_x"] == 1996093750.0);
  CHECK(j["bisect"]["tolerance"] == "15625us");
  // A bracket narrower than a thousandth of its unit keeps the decimals that tell its ends apart.
  r.safe = *parse_value(t, "2.9999s");
  r.unsafe = *parse_value(t, "3s");
  CHECK(boundary_words(req, r).find("safe at and below +2.9999s") != std::string::npos);
}
