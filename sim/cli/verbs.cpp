// The verbs of the admitsim command: the one list a new verb joins.
#include <memory>
#include <vector>

#include "sim/cli/verb.hpp"

namespace admit::cli {

// Each defined in its own file.
std::unique_ptr<verb> make_run_verb(CLI::App& app);      // run_verb.cpp
std::unique_ptr<verb> make_replay_verb(CLI::App& app);   // replay_verb.cpp
std::unique_ptr<verb> make_check_verb(CLI::App& app);    // check_verb.cpp
std::unique_ptr<verb> make_list_verb(CLI::App& app);     // list_verb.cpp
std::unique_ptr<verb> make_explore_verb(CLI::App& app);  // explore.cpp (docs/explore.md)
std::unique_ptr<verb> make_invariants_verb(CLI::App& app);  // invariants_verb.cpp
std::unique_ptr<verb> make_sweep_verb(CLI::App& app);    // sweep_verb.cpp (docs/sweep.md)
std::unique_ptr<verb> make_matrix_verb(CLI::App& app);   // matrix_verb.cpp (docs/matrix.md)
std::unique_ptr<verb> make_merge_verb(CLI::App& app);    // merge_verb.cpp (docs/explore.md)
std::unique_ptr<verb> make_confirm_verb(CLI::App& app);  // confirm_verb.cpp (docs/confirm.md)

std::vector<std::unique_ptr<verb>> make_verbs(CLI::App& app) {
  std::vector<std::unique_ptr<verb>> verbs;
  verbs.push_back(make_run_verb(app));
  verbs.push_back(make_replay_verb(app));
  verbs.push_back(make_check_verb(app));
  verbs.push_back(make_list_verb(app));
  verbs.push_back(make_explore_verb(app));
  verbs.push_back(make_invariants_verb(app));
  verbs.push_back(make_sweep_verb(app));
  verbs.push_back(make_matrix_verb(app));
  verbs.push_back(make_merge_verb(app));
  verbs.push_back(make_confirm_verb(app));
  return verbs;
}

}  // namespace admit::cli
