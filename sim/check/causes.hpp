// causes: the one table of why an invariant can break, in the domain's words.
//
// A world names the cause of each violation it reports (check::cause, a row
// of this table and one sentence with the figures) from what it knows: the
// permit that left the set and what removed it, the lease released early,
// the gate that forgot its leases. The report groups an invariant's
// violations by cause and, for each, names the designs of the catalogue that
// address it. A kind not in the table is a programming error (asserted where
// the report reads it), so the table and the worlds cannot drift apart.
#pragma once

#include <cstddef>
#include <string_view>

namespace admit::check {

struct cause_info {
  const char* kind;
  const char* title;    // what happened, for a report's per-cause table
  const char* designs;  // the designs of the catalogue that address it, ", "-separated ("" when none does)
};

inline constexpr cause_info cause_table[] = {
    {"unexplained", "no cause the world could name", ""},
};

// The row of `kind`, or nullptr.
constexpr const cause_info* find_cause(std::string_view kind) {
  for (const auto& row : cause_table)
    if (kind == row.kind) return &row;
  return nullptr;
}

}  // namespace admit::check
