// Tests that every scenario field is read by the world that runs it or
// refused by the loader, as docs/scenarios.md ("Which world reads what")
// says. Method: for each field, one FIFO and one lease scenario that set it;
// the loader accepts exactly those the docs table marks "read", refuses the
// others at the field's path, and the docs row says the same.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "sim/scenario/loader.hpp"
#include "tests/scenario/scenario_test_support.hpp"

namespace {

using admit::test::rejection;

struct field_row {
  std::string docs_label;  // the first cell of its row in docs/scenarios.md
  std::string fifo_doc;    // a FIFO scenario that sets the field
  std::string lease_doc;   // a lease scenario that sets it
  bool fifo_reads;
  bool lease_reads;
  std::string path;  // where a refusal points
};

const std::string fifo_gate = R"("gate": {"kind": "fifo", "max_active": 1})";
const std::string lease_gate = R"("gate": {"kind": "lease", "limit": 1})";
const std::string one = R"("workload": {"requests": [{"id": "a", "at": "0ms"}]})";

std::string doc(const std::string& gate, const std::string& rest) { return "{\"name\": \"t\", " + gate + ", " + rest + "}"; }

std::vector<field_row> rows() {
  auto both = [](const std::string& rest) { return std::make_pair(doc(fifo_gate, rest), doc(lease_gate, rest)); };
  std::vector<field_row> out;
  auto add = [&](std::string label, std::pair<std::string, std::string> docs, bool f, bool l, std::string path) {
    out.push_back(field_row{std::move(label), std::move(docs.first), std::move(docs.second), f, l, std::move(path)});
  };
  add("`fleet`", both(one + R"(, "fleet": {"workers": 2})"), false, true, "/fleet");
  add("`service.portal_cap`, `service.service_time`, `service.client_timeout`",
      both(one + R"(, "service": {"portal_cap": 1, "service_time": "1s", "client_timeout": "5s"})"), true, true, "");
  add("`service.over_cap`", both(one + R"(, "service": {"over_cap": "reject_429"})"), false, true,
      "/service/over_cap");
  add("`service.on_client_close`", both(one + R"(, "service": {"on_client_close": "free_slot"})"), false, true,
      "/service/on_client_close");
  add("`workload.requests[].id`, `gate`, `at`, `service`, `client_timeout`",
      both(R"("workload": {"requests": [{"id": "a", "at": "0ms", "service": "1s", "client_timeout": "2s"}]})"), true,
      true, "");
  add("`workload.requests[].cancel_at`, `fail`",
      both(R"("workload": {"requests": [{"at": "0ms", "cancel_at": "1ms"}]})"), true, false,
      "/workload/requests/0/cancel_at");
  add("`workload.requests[].cancel_at`, `fail`",
      both(R"("workload": {"requests": [{"at": "0ms", "fail": "constructor"}]})"), true, false,
      "/workload/requests/0/fail");
  add("`workload.arrivals[]` (kind, count, start, gaps, `gate`, `service`, `client_timeout`)",
      both(R"("workload": {"arrivals": [{"kind": "constant", "count": 2, "every": "1s", "service": "1s",
           "client_timeout": "2s"}]})"),
      true, true, "");
  add("`workload.arrivals[].cancel_after`, `fail_ppm`",
      both(R"("workload": {"arrivals": [{"kind": "constant", "count": 2, "every": "1s", "cancel_after": "1ms"}]})"),
      true, false, "/workload/arrivals/0/cancel_after");
  add("`workload.arrivals[].cancel_after`, `fail_ppm`",
      both(R"("workload": {"arrivals": [{"kind": "constant", "count": 2, "every": "1s", "fail_ppm": 10}]})"), true,
      false, "/workload/arrivals/0/fail_ppm");
  add("`cases`", both(one + R"(, "cases": [{"name": "c", "response": "a"}])"), true, false, "/cases");
  add("`checks.*`",
      both(one + R"(, "checks": {"max_events": 100, "horizon": "1h", "max_wall": "1m", "trace": 8,
           "liveness_horizon": "30m"})"),
      true, true, "");
  add("`expect.verdict`, `expect.violated`",
      both(one + R"(, "expect": {"verdict": "violation", "violated": ["liveness"]})"), true, true, "");
  add("`expect.variants`", both(one + R"(, "expect": {"verdict": "pass", "variants": {"seed": {"verdict": "pass"}}})"),
      false, true, "/expect/variants/seed");
  return out;
}

// The cells of the docs table row whose first cell is `label`.
std::vector<std::string> docs_row(const std::string& label) {
  const std::string text = admit::test::read_bytes(admit::test::source_path("docs/scenarios.md"));
  const auto section = text.find("## Which world reads what");
  REQUIRE(section != std::string::npos);
  const auto at = text.find("\n| " + label + " |", section);
  REQUIRE(at != std::string::npos);
  const auto end = text.find('\n', at + 1);
  // "| label | FIFO cell | lease cell |": the cells after the label, trimmed.
  const std::string line = text.substr(at + 1, end - at - 1);
  std::vector<std::string> cells;
  std::size_t from = line.find('|', 1);  // the end of the label cell
  while (from != std::string::npos) {
    const auto to = line.find('|', from + 1);
    if (to == std::string::npos) break;
    std::string cell = line.substr(from + 1, to - from - 1);
    cell.erase(0, cell.find_first_not_of(' '));
    cell.erase(cell.find_last_not_of(' ') + 1);
    cells.push_back(cell);
    from = to;
  }
  return cells;
}

}  // namespace

TEST_CASE("each field is read by its world or refused, as docs/scenarios.md says") {
  for (const field_row& r : rows()) {
    CAPTURE(r.docs_label, r.fifo_doc, r.lease_doc);
    const std::string fifo = rejection(r.fifo_doc);
    const std::string lease = rejection(r.lease_doc);
    CHECK(fifo.empty() == r.fifo_reads);
    CHECK(lease.empty() == r.lease_reads);
    if (!r.fifo_reads) CHECK(fifo.rfind(r.path + ": ", 0) == 0);
    if (!r.lease_reads) CHECK(lease.rfind(r.path + ": ", 0) == 0);
    const std::vector<std::string> cells = docs_row(r.docs_label);
    REQUIRE(cells.size() >= 2);
    CHECK((cells[0].rfind("read", 0) == 0) == r.fifo_reads);
    CHECK((cells[1].rfind("read", 0) == 0) == r.lease_reads);
    if (!r.fifo_reads) CHECK(cells[0].rfind("refused", 0) == 0);
    if (!r.lease_reads) CHECK(cells[1].rfind("refused", 0) == 0);
  }
}
