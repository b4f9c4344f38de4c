// matrix_report: the outcome of `admitsim matrix` (docs/matrix.md) as plain
// data, and its writers: the summary JSON (format admitsim-matrix/1), the
// HTML table, the Markdown table of the docs, and the JUnit test cases.
//
// The table is rows of designs by columns of faults, row-major. Every figure
// is an integer (counts, nanoseconds, parts per million), the order of every
// list is fixed by the matrix file and the seeds, and nothing here reads a
// clock: the same matrix and seeds give the same bytes, whatever --jobs was.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "reports/confirmation_record.hpp"
#include "reports/evidence.hpp"
#include "reports/junit.hpp"

namespace admit::reports {

// How a cell came out over its seeds.
enum class cell_status {
  holds,         // every seed ran to its end and nothing broke
  breaks,        // at least one seed broke an invariant
  inconclusive,  // nothing broke, but a limit cut at least one seed's run, or a stop left seeds unrun:
                 // never shown as holding
  error,         // nothing broke, but at least one seed's run threw (an internal assertion)
};
const char* to_string(cell_status s);

struct matrix_overshoot {
  std::string invariant;  // a level invariant (a cap): portal_inflight_le_cap, gate_inflight_le_cap
  std::int64_t value = 0;  // the worst moment's peak
  std::int64_t bound = 0;  // the cap it was above
  std::uint64_t seed = 0;  // the first seed that reached it
};

struct matrix_cause {
  std::string kind;        // a row of the cause table (sim/check/causes.hpp)
  std::uint64_t count = 0;  // summed over every seed's runs
  std::string example;      // the sentence of the first seed that gave it
};

struct matrix_violation {
  std::uint64_t seed = 0;
  std::string invariant;
  std::int64_t at_ns = 0;
  std::string detail;
  std::optional<std::pair<std::string, std::string>> cause;  // its invariant's most frequent cause: kind, example
};

struct matrix_counterexample {
  std::uint64_t seed = 0;
  std::string invariant;
  bool shrunk = false;      // the shrinker's minimal scenario (else the seed's explored scenario, unshrunk)
  bool reproduced = false;  // its file, loaded back and run, breaks the invariant
  std::string scenario;     // the file written, as its path is given (--out joined with its name)
  std::string report;       // that file's report, as admitsim run writes it
  std::string replay;       // the command that replays it
  std::uint64_t requests = 0;
  std::int64_t workers = 0;
  std::uint64_t faults = 0;
  std::string href;  // the scenario file relative to the HTML page (not in the JSON)
  // With --confirm only: the counterexample run on a real redis-server (a measurement; a summary
  // without it keeps its bytes). Every writer shows it as confirmation_words says.
  std::optional<confirmation_record> confirmation;
};

struct matrix_cell {
  std::string design;
  std::string fault;
  cell_status status = cell_status::holds;
  std::optional<std::string> expected;  // "holds" or "breaks" when the matrix file says
  bool as_expected = true;
  std::uint64_t seeds_run = 0;
  std::uint64_t seeds_violating = 0;
  std::uint64_t seeds_inconclusive = 0;
  std::uint64_t seeds_error = 0;
  std::uint64_t seeds_not_run = 0;  // of the budget, left unrun by a stop (SIGINT): the cell is then not known to hold
  std::optional<matrix_overshoot> worst_overshoot;
  // Time over the cap: per seed the longest time any level invariant spent in violation.
  std::int64_t over_cap_worst_ns = 0;
  std::optional<std::uint64_t> over_cap_worst_seed;
  std::int64_t over_cap_total_ns = 0;
  std::vector<std::pair<std::string, std::uint64_t>> broken;  // invariant -> seeds that broke it, by name
  std::vector<matrix_cause> causes;                           // the top ones, most first
  std::optional<matrix_violation> first_violation;            // of the first violating seed
  std::optional<std::pair<std::uint64_t, std::string>> first_inconclusive;  // seed, reason
  std::optional<std::pair<std::uint64_t, std::string>> first_error;         // seed, what it threw
  std::optional<matrix_counterexample> counterexample;
  // What the cell's outcome rests on: the seeds judged (neither an error nor cut by a limit before
  // anything broke), those that broke, the faults injected (reports/evidence.hpp).
  evidence ev;

  // Violating seeds per million run (0 when none ran).
  std::uint64_t violation_rate_ppm() const;

  // The cell as the summary file's "cells" holds it (its evidence without each bucket's seeds, no
  // href). from_json reads it back, checks every field and the figures derived from others
  // (violation_rate_ppm, over_by), and throws codec_error (reports/json_codec.hpp) naming the JSON
  // path below `path`; the evidence's hit buckets come back unnamed (evidence::from_json).
  nlohmann::ordered_json to_json() const;
  static matrix_cell from_json(const nlohmann::ordered_json& j, const std::string& path);
};

// The words of a cell whose counterexample was run on a real redis-server (--confirm), the same in
// every output: "broke (confirmed on redis-server 7.0.15)", "broke (not confirmed in 3 real runs)",
// "broke (confirmation inconclusive)"; "" for a cell with no confirmation.
std::string confirmation_words(const matrix_cell& c);

// The most seeds a matrix runs per cell (the matrix file's bound).
inline constexpr std::uint64_t matrix_seeds_max = 1'000'000;

struct matrix_row_info {
  std::string name;
  std::string changes;  // "variant renewal", "protocol ../protocols/x.json", with "+ gate {...}", "+ service {...}"
};

struct matrix_column_info {
  std::string name;
  std::string kind;  // "baseline", "fault" or "combined"
  std::string summary;  // what the column's faults are, in one line
};

struct matrix_table {
  std::string name;
  std::string description;
  std::string file;    // the matrix file as given
  std::string sha256;  // of its bytes
  std::string scenario_name;
  std::optional<std::string> scenario_file;  // the base scenario's path, as the matrix file gives it; nullopt inline
  std::uint64_t first_seed = 0;
  std::uint64_t seeds = 0;
  std::vector<matrix_row_info> designs;
  std::vector<matrix_column_info> faults;
  std::vector<matrix_cell> cells;  // row-major: cells[d * faults.size() + f]
  bool complete = true;  // false: a stop (SIGINT) left some cell's seeds unrun
  int exit_code = 0;
  std::vector<std::string> why;  // why the exit code is 1

  const matrix_cell& at(std::size_t design, std::size_t fault) const { return cells[design * faults.size() + fault]; }
};

// The summary file, 2-space indented with a final newline.
std::string render_matrix_json(const matrix_table& t);
// A self-contained page: the table coloured holds / breaks / inconclusive, then each cell that broke.
std::string render_matrix_html(const matrix_table& t);
// The table as Markdown (what docs/matrix.md and README.md hold), with its legend line.
std::string render_matrix_markdown(const matrix_table& t);
// One test case per cell (classname "<matrix>.<design>", name the fault); a cell that breaks is a
// failure carrying its first violation, its cause and the replay command; an inconclusive or
// error cell an error.
std::string render_matrix_junit(const matrix_table& t);

// A duration for people, at most three significant digits: "12.5s", "350ms", "2.1min".
std::string short_duration(std::int64_t ns);

}  // namespace admit::reports
