// Tests of the memory limits: the loader refuses a scenario whose worst case
// exceeds the memory limit, naming the biggest contributor, and accepts the
// whole catalogue; documents are torn down without allocating; the reserve
// for teardown after a bad_alloc.
#include <catch2/catch.hpp>
#include <filesystem>
#include <new>
#include <string>

#include "sim/scenario/json_parse.hpp"
#include "sim/scenario/loader.hpp"
#include "sim/scenario/memory_estimate.hpp"
#include "sim/scenario/memory_reserve.hpp"
#include "tests/scenario/scenario_test_support.hpp"

namespace {

namespace fs = std::filesystem;
using namespace admit::scenario;
using admit::test::read_bytes;
using admit::test::rejection;
using admit::test::source_path;

std::string fifo_doc(const std::string& gate_fields, long count) {
  return R"({"name": "m", "gate": {"kind": "fifo", )" + gate_fields + R"(}, "workload": {"arrivals": [{"kind": "poisson", "count": )" +
         std::to_string(count) + R"(, "mean_gap": "1ms"}]}, "checks": {"horizon": "30h"}})";
}

}  // namespace

TEST_CASE("a worst case beyond the memory limit is refused, naming its biggest part") {
  // Goal: what cannot fit is refused at load with a figure and a path. Method: a FIFO gate of 10,000,000 waiting places
  // fed 20,000,000 requests, and a lease fleet fed 100,000,000 items; exact messages.
  CHECK(rejection(fifo_doc(R"("max_active": 8, "max_waiting": 10000000, "wait_deadline": "24h")", 20'000'000)) ==
        "/: expected a scenario whose worst case fits in 4 GiB, got about 9.5 GiB, mostly /gate/max_waiting");
  CHECK(rejection(R"({"name": "m", "gates": [{"name": "a", "kind": "fifo", "max_active": 1000000, "max_waiting": 0},
                     {"name": "b", "kind": "fifo", "max_active": 1, "max_waiting": 4000000, "wait_deadline": "24h"}],
                     "workload": {"arrivals": [{"kind": "poisson", "count": 2000000, "mean_gap": "1ms", "gate": "a"},
                                               {"kind": "poisson", "count": 5000000, "mean_gap": "1ms", "gate": "b"}]},
                     "checks": {"horizon": "30h"}})") ==
        "/: expected a scenario whose worst case fits in 4 GiB, got about 4.8 GiB, mostly /gates/1/max_waiting");
  CHECK(rejection(R"({"name": "m", "gate": {"kind": "lease", "limit": 8, "lease": "15s"},
                     "workload": {"arrivals": [{"kind": "poisson", "count": 100000000, "mean_gap": "1ms"}]},
                     "checks": {"horizon": "30h"}})") ==
        "/: expected a scenario whose worst case fits in 4 GiB, got about 6.0 GiB, mostly /workload/arrivals/0/count");
}

TEST_CASE("requests bound a gate's queue: places that no request can take cost nothing") {
  // Goal: the estimate is not so conservative that it refuses sound scenarios. Method: the largest queue with few
  // requests loads; the same queue filled is refused; every catalogue file is estimated far below the limit.
  CHECK(rejection(fifo_doc(R"("max_active": 8, "max_waiting": 10000000, "wait_deadline": "24h")", 1000)).empty());
  CHECK(rejection(fifo_doc(R"("max_active": 1000000, "event_log": 1000000)", 1'000'000)).empty());
  int files = 0;
  for (const auto& e : fs::directory_iterator(source_path("scenarios"))) {
    if (e.path().extension() != ".json" || e.path().filename() == "schema.json") continue;
    CAPTURE(e.path().string());
    nlohmann::ordered_json doc;
    const scenario sc = load_scenario_file(e.path().string(), doc);  // with the protocol files it names, inline
    const memory_estimate est = estimate_memory(sc, doc);
    CHECK(est.bytes < memory_limit_bytes / 64);
    CHECK(est.biggest_bytes <= est.bytes);
    ++files;
  }
  CHECK(files >= 15);
}

TEST_CASE("dismantle_json takes any parsed document apart and leaves null") {
  // Goal: the allocation-free teardown reaches every value. Method: documents deep (64 levels), wide (a 100,000-element
  // array of objects) and mixed, dismantled; each ends null and can be reused.
  std::string deep;
  for (int i = 0; i < 32; ++i) deep += R"({"a": [)";
  deep += "1";
  for (int i = 0; i < 32; ++i) deep += "]}";
  std::string wide = "[";
  for (int i = 0; i < 100'000; ++i) wide += std::string(i ? "," : "") + R"({"id": "r", "at": [1, {"x": null}]})";
  wide += "]";
  for (const std::string& text : {deep, wide, std::string(R"({"s": "x", "n": 1.5, "e": {}, "l": []})"), std::string("7")}) {
    nlohmann::ordered_json doc = parse_json_text(text);
    REQUIRE_FALSE(doc.is_null());
    dismantle_json(doc);
    CHECK(doc.is_null());
    doc = parse_json_text(text);
    CHECK(doc == nlohmann::ordered_json::parse(text));
  }
}

TEST_CASE("the memory reserve is given back at the first failed allocation, which still throws") {
  // Goal: the reserve makes room for teardown without hiding the failure. Method: install a 1 MiB reserve and call the
  // new-handler as operator new does when malloc fails: std::bad_alloc each time, the reserve gone after the first.
  install_memory_reserve(std::size_t{1} << 20);
  REQUIRE(memory_reserve_held());
  const std::new_handler on_failure = std::get_new_handler();
  REQUIRE(on_failure != nullptr);
  CHECK_THROWS_AS(on_failure(), std::bad_alloc);
  CHECK_FALSE(memory_reserve_held());
  CHECK_THROWS_AS(on_failure(), std::bad_alloc);  // a second failure throws at once
  std::set_new_handler(nullptr);                   // the default again, for the other tests
}
