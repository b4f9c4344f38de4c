// admitsim invariants [--world fifo|lease]: what admitsim checks, one line
// per invariant (its name, the worlds that check it, what it means), read
// from the one invariant table (sim/check/invariants.hpp): the names a
// scenario may give in checks.invariants and expect.violated.
#include <cstdio>
#include <string>

#include "sim/check/invariants.hpp"
#include "sim/cli/errors.hpp"
#include "sim/cli/verb.hpp"

namespace admit::cli {

namespace {

std::string worlds_text(unsigned worlds) {
  std::string out;
  for (const unsigned w : {check::world_fifo, check::world_lease})
    if ((worlds & w) != 0) out += std::string(out.empty() ? "" : ",") + (w == check::world_fifo ? "fifo" : "lease");
  return out;
}

class invariants_verb final : public verb {
 public:
  explicit invariants_verb(CLI::App& app)
      : verb(app.add_subcommand("invariants", "List the invariants admitsim checks, and the worlds that check each")) {
    world_ = sub_->add_option("--world", world_text_, "Only the invariants of this world: fifo or lease");
  }

  int run() const override {
    unsigned only = check::world_fifo | check::world_lease;
    if (world_->count() != 0) {
      if (world_text_ == "fifo") only = check::world_fifo;
      else if (world_text_ == "lease") only = check::world_lease;
      else throw input_error{"--world", "expected fifo or lease, got \"" + world_text_ + "\""};
    }
    for (const auto& row : check::invariant_table)
      if ((row.worlds & only) != 0)
        std::printf("%-24s %-11s %s\n", row.name, worlds_text(row.worlds).c_str(), row.checks);
    return exit_as_expected;
  }

 private:
  std::string world_text_;
  CLI::Option* world_ = nullptr;
};

}  // namespace

std::unique_ptr<verb> make_invariants_verb(CLI::App& app) { return std::make_unique<invariants_verb>(app); }

}  // namespace admit::cli
