// matrix: which design survives which fault (`admitsim matrix`, docs/matrix.md).
//
// A matrix file names a base lease scenario, rows of designs (what each
// changes in the base's gate, and optionally its service and fleet) and columns of
// faults (each a scenario `faults` object). The loader builds every cell's
// scenario as JSON, base + the row's gate, service and fleet + the column's faults,
// and validates it with the scenario loader, so a cell runs exactly what the
// scenario format says and a cell no world could run is refused (exit 2)
// before anything runs. Beside the file's columns it adds a baseline column
// (the base's own faults, "none") and a column of every column's faults
// together ("all_faults"): schedules are concatenated in column order, rates
// of one kind are summed (superposed Poisson processes), and each shared
// parameter of the rates (until, mean_duration, max_step,
// max_replication_lag) must agree among the columns whose drawn kinds read
// it, or the combination is refused naming both columns.
//
// Running a cell is explore's search (explore_one, swarm.hpp) over the seed
// budget, each run going to its end (explore_mode::run_to_end) so that its
// outcome says how bad it got. The work is two phases over one pool of
// `jobs` threads: every (cell, seed) pair, then one shrink per cell that
// broke (its first violating seed's first broken invariant). Each pair's
// outcome is folded into its cell by rules that do not depend on the order
// the pairs finish in (counts, sums, and "the smallest seed wins" for every
// first and worst), so the results are the same for every `jobs`.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "reports/matrix_report.hpp"
#include "sim/scenario/protocol_loader.hpp"
#include "sim/scenario/scenario.hpp"

namespace admit::explore {

inline constexpr const char* matrix_format = "admitsim-matrix/1";
inline constexpr std::size_t matrix_designs_max = 64;
inline constexpr std::size_t matrix_faults_max = 64;  // the file's columns (plus "none" and "all_faults")
inline constexpr std::uint64_t matrix_seeds_max = reports::matrix_seeds_max;
inline constexpr std::uint64_t matrix_seeds_default = 20;
inline constexpr std::size_t matrix_name_max = 31;  // design and fault names: "<design>.<fault>" is a scenario name
inline constexpr const char* baseline_column = "none";
inline constexpr const char* combined_column = "all_faults";

struct matrix_cell_spec {
  std::size_t design = 0;
  std::size_t fault = 0;
  scenario::scenario sc;                // the cell's scenario: one run (one variant or protocol), expect pass
  std::optional<std::string> expected;  // "holds" or "breaks"
};

struct matrix_spec {
  reports::matrix_table table;  // names, rows, columns; cells filled in by run_matrix
  std::uint64_t seeds = matrix_seeds_default;
  std::uint64_t first_seed = 0;
  std::vector<matrix_cell_spec> cells;  // row-major, as table.cells will be
};

// The matrix file's text, read from `file` (whose folder relative paths start from); `read` reads
// the base scenario and protocol files. Throws scenario::scenario_error with the JSON path in the
// matrix file of what is wrong.
matrix_spec load_matrix(std::string_view text, const std::string& file, const scenario::file_reader& read);

struct matrix_options {
  std::optional<std::uint64_t> seeds;  // overrides the file's budget
  unsigned jobs = 1;
  bool shrink = true;
  std::size_t shrink_runs = 2'000;
  // Polled before each (cell, seed) run and each shrink: once it says stop, no new seed runs and no
  // counterexample is shrunk (run_matrix then sets matrix_table::complete to false).
  std::function<bool()> stop;
};

// A cell's outcome, and for a cell that broke the scenario that shows it (shrunk when the shrinker
// reproduced it, else the seed's explored scenario, focused on the invariant).
struct matrix_cell_outcome {
  reports::matrix_cell cell;
  std::optional<scenario::scenario> counterexample;
};

// Every cell over the seed budget, on `jobs` threads (std::system_error when one cannot be started).
// A cell some of whose seeds a stop left unrun is inconclusive unless a seed that ran broke it.
// The cells' expectation and the table's exit code are not set here (the verb writes the
// counterexamples first).
std::vector<matrix_cell_outcome> run_matrix(const matrix_spec& spec, const matrix_options& options);

// Whether each cell came out as the matrix file expects: an inconclusive or error cell never does;
// a cell with no expectation does otherwise. Sets as_expected, the exit code and its reasons.
void judge_matrix(reports::matrix_table& t);

}  // namespace admit::explore
