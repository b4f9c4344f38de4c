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
  CHECK(value_text(lease, *parse_value(lease, "1500ms")) == "1500ms");
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
  CHECK(value_text(offset, g[1]) == "+2500ms");
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
