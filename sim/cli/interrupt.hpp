// interrupt: SIGINT for the verbs that search (explore, matrix, sweep).
//
// catch_sigint() installs a handler that only sets a flag, which the search
// polls between its runs (its `stop`): the work stops taking new runs, the
// runs under way finish, and the verb writes what it has, marked incomplete.
// The handler resets itself, so a second SIGINT ends the process at once.
#pragma once

namespace admit::cli {

void catch_sigint();
// Whether a SIGINT arrived since catch_sigint().
bool sigint_seen() noexcept;

}  // namespace admit::cli
