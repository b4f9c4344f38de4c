// search_summary: the summary a seed search writes (DIR/<name>-explore.json, format
// admitsim-explore/1; docs/explore.md) as typed values, each part with its one JSON codec.
//
// `admitsim explore` fills a search_summary and writes it through to_json; `admitsim merge`
// reads each shard's with from_json, merges the values and writes them through the same to_json,
// so the merged file is, byte for byte, what the search on one machine writes. to_json writes the
// keys in the file's fixed order; from_json reads every key a summary has, checks its type and
// range and the rules that tie the parts together (a cause's seeds within its kind's, the findings
// in seed order, ...), and throws codec::codec_error naming the JSON path and what was expected.
// What holds only of a shard (complete, a seed count, swarm mode) is merge's to check.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "reports/confirmation_record.hpp"
#include "reports/evidence.hpp"
#include "sim/codec/json_codec.hpp"
#include "sim/check/results.hpp"
#include "sim/explore/explorer.hpp"
#include "sim/explore/swarm.hpp"

namespace admit::explore {

inline constexpr const char* explore_format = "admitsim-explore/1";
// The summary lists at most this many seeds with a violation or an error in full (the totals count
// them all; docs/limits.md).
inline constexpr std::size_t findings_listed_max = 1'000;

// "I/N" with 0 <= I < N (explore's --shard, a summary's seeds.shard), or nullopt.
std::optional<std::pair<std::uint64_t, std::uint64_t>> parse_shard(const std::string& s);

// The scenario a summary is of (the first keys of every explore summary, --exhaustive's and
// --placements' too).
struct scenario_ref {
  std::string name;
  std::string file;    // as given on the command line
  std::string sha256;  // of its bytes
  nlohmann::ordered_json to_json() const;
  static scenario_ref from_json(const nlohmann::ordered_json& j, const std::string& path);
  bool operator==(const scenario_ref&) const = default;
};

// "seeds": the range asked for, the shard, how many ran, whether the search finished.
struct seeds_record {
  struct until_bound_record {
    std::uint64_t bound_ppm = 0;
    std::uint64_t clean_seeds_needed = 0;
    bool reached = false;
  };
  std::uint64_t first = 0;
  std::optional<std::uint64_t> count;  // null: a --time search
  std::uint64_t shard_index = 0;
  std::uint64_t shard_count = 1;
  std::uint64_t ran = 0;
  std::optional<std::uint64_t> last;
  bool complete = true;  // written only when false (an interrupted search), so a finished one keeps its bytes
  std::optional<until_bound_record> until_bound;
  nlohmann::ordered_json to_json() const;
  static seeds_record from_json(const nlohmann::ordered_json& j, const std::string& path);
};

// One cause of a kind of finding (a row of sim/check/causes.hpp): in how many of the kind's seeds
// the world named it for the invariant the kind names, the first of them, and its sentence there.
struct kind_cause {
  std::uint64_t seeds = 0;
  std::uint64_t first_seed = 0;
  std::string example;
};

// A kind of finding (totals.by_kind): a variant and the first invariant it broke.
struct finding_kind {
  std::string variant;
  std::string invariant;
  bool counterexample = false;
  std::uint64_t first_seed = 0;
  std::uint64_t seeds = 0;
  std::map<std::string, kind_cause> causes;  // by cause kind
  auto key() const { return std::make_pair(variant, invariant); }

  // Adds `c` (a seed's, or another shard's for the same kind): the seeds summed (by the caller,
  // which checks the sum), the example of the least first seed kept. Seeds arrive in any order
  // across shards, so the example is chosen by seed, never by arrival.
  void add_cause(const std::string& kind, const kind_cause& c);
  // Most seeds first, then the earliest, then by kind: an order of the counts alone, so a merge
  // of shards writes it as the search as one does.
  std::vector<std::pair<std::string, kind_cause>> causes_in_order() const;
  nlohmann::ordered_json to_json() const;
  static finding_kind from_json(const nlohmann::ordered_json& j, const std::string& path);
};

using finding_kind_map = std::map<std::pair<std::string, std::string>, finding_kind>;

// The kinds in the summary's order: counterexamples first, then by the seed that first showed
// them; ties keep (variant, invariant) order.
std::vector<finding_kind> kinds_in_summary_order(const finding_kind_map& kinds);

// "totals".
struct totals_record {
  std::uint64_t runs = 0;
  std::uint64_t seeds_with_violation = 0;
  std::uint64_t seeds_with_counterexample = 0;
  std::uint64_t errors = 0;
  std::uint64_t seeds_inconclusive = 0;
  // With perturbed ties only: per variant ("fifo" for a FIFO run), in the summary's order.
  std::optional<std::vector<std::pair<std::string, std::uint64_t>>> distinct_orderings;
  bool distinct_orderings_capped = false;  // written only when true (the counts are lower bounds)
  std::vector<finding_kind> by_kind;       // kinds_in_summary_order
  nlohmann::ordered_json to_json() const;
  static totals_record from_json(const nlohmann::ordered_json& j, const std::string& path);
};

// An entry of "evidence_by_variant": the variant's name ("fifo" for a FIFO run) and its evidence.
struct variant_evidence {
  std::string variant;
  reports::evidence ev;
  nlohmann::ordered_json to_json() const;
  static variant_evidence from_json(const nlohmann::ordered_json& j, const std::string& path);
};

// An entry of "expected_violations": a variant expected to break, and the first seed that did.
struct expected_violation {
  std::string variant;
  std::string verdict;
  std::vector<std::string> violated;
  std::optional<std::uint64_t> shown_first_by_seed;
  nlohmann::ordered_json to_json() const;
  static expected_violation from_json(const nlohmann::ordered_json& j, const std::string& path);
};

// One broken invariant of a run, as the explore summaries write it (the --exhaustive and
// --placements summaries too): its causes most first, each with its first sentence.
struct break_record {
  std::string invariant;
  std::int64_t at_ns = 0;
  std::string detail;
  std::vector<check::cause_count> causes;
  static break_record of(const invariant_break& b);
  nlohmann::ordered_json to_json() const;
  static break_record from_json(const nlohmann::ordered_json& j, const std::string& path);
};

// One run of a finding's seed.
struct finding_run {
  std::string variant;
  std::string expected;  // the verdict expected: "pass", "violation" or "inconclusive"
  bool counterexample = false;
  std::vector<break_record> broken;
  std::string run_status;
  std::optional<std::string> inconclusive;  // only on a cut run: other summaries keep their bytes
  std::uint64_t requests = 0;
  std::int64_t portal_inflight_max = 0;
  static finding_run of(const run_outcome& r);
  nlohmann::ordered_json to_json() const;
  static finding_run from_json(const nlohmann::ordered_json& j, const std::string& path);
};

// A seed with a violation or an error ("findings"): what it drew and what each of its runs did.
struct finding {
  std::uint64_t seed = 0;
  swarm_record swarm;
  // A guided seed: where its plan came from, and the seed its world ran with; "" otherwise.
  std::string origin;
  std::uint64_t run_seed = 0;
  std::optional<std::string> error;
  std::vector<finding_run> runs;
  static finding of(const seed_outcome& o);
  nlohmann::ordered_json to_json() const;
  static finding from_json(const nlohmann::ordered_json& j, const std::string& path);
};

// One measure of a shrink: {"before", "after", "removed"}.
struct size_change {
  std::int64_t before = 0;
  std::int64_t after = 0;
  nlohmann::ordered_json to_json() const;
  static size_change from_json(const nlohmann::ordered_json& j, const std::string& path);
};

// An entry of "shrunk": a kind's first seed shrunk, and the files it wrote.
struct shrunk_entry {
  std::uint64_t seed = 0;
  std::string variant;
  std::string invariant;
  bool counterexample = false;
  std::string explored_scenario;
  std::string explored_report;
  std::optional<std::string> minimal_scenario;  // null when the shrink did not start
  std::optional<std::string> minimal_report;    // null exactly when minimal_scenario is
  bool reproduced = false;
  bool needs_perturbed_order = false;
  std::string replay;
  size_change faults, requests, workers;
  std::uint64_t shrink_runs = 0;
  bool budget_exhausted = false;
  std::int64_t rebased_by_ns = 0;
  std::int64_t violation_at_ns = 0;
  std::string detail;
  // With --confirm only (a measurement: a summary without it keeps its bytes): the scenario run on a
  // real redis-server (the minimal one when it reproduced, else the seed's explored one), and how it went.
  std::string confirmed_scenario;  // written only with a confirmation
  std::optional<reports::confirmation_record> confirmation;
  // Neither reproduced nor waiting on a perturbed order: the search is not as expected.
  bool failed() const { return !reproduced && !needs_perturbed_order; }
  nlohmann::ordered_json to_json() const;
  static shrunk_entry from_json(const nlohmann::ordered_json& j, const std::string& path);
};

// "exit": the code the search exited with, and why it is not 0.
struct exit_record {
  int code = 0;
  std::vector<std::string> why;
  nlohmann::ordered_json to_json() const;
  static exit_record from_json(const nlohmann::ordered_json& j, const std::string& path);
};

// "merge": what `admitsim merge` needs beyond the rest to write the summary of the search as one
// (docs/explore.md, "Searches across machines"); only a shard's summary has it.
struct merge_record {
  bool shrink = true;
  std::uint64_t shrink_max = 0;
  std::uint64_t shrink_runs = 0;
  std::optional<std::pair<std::uint64_t, std::string>> first_inconclusive;  // seed, reason
  nlohmann::ordered_json to_json() const;
  static merge_record from_json(const nlohmann::ordered_json& j, const std::string& path);
};

// The whole summary, its keys in this order.
struct search_summary {
  scenario_ref scenario;
  seeds_record seeds;
  std::string mode;                     // swarm, plain, guided, perturb_ties or ties_only
  std::optional<swarm_record> bounds;   // the scenario's fault rates (no faults_drawn), or null
  totals_record totals;
  reports::evidence evidence;
  std::vector<variant_evidence> evidence_by_variant;
  std::vector<expected_violation> expected_violations;
  std::vector<finding> findings;  // at most findings_listed_max, in seed order
  std::uint64_t findings_omitted = 0;
  std::vector<shrunk_entry> shrunk;
  exit_record exit;
  std::optional<merge_record> merge;

  nlohmann::ordered_json to_json() const;
  // The file's bytes (codec::render_json of to_json).
  std::string render() const;
  static search_summary from_json(const nlohmann::ordered_json& j);
};

}  // namespace admit::explore
