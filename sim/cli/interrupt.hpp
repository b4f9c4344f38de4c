// interrupt: SIGINT for the verbs that search (explore, matrix, sweep).
//
// catch_sigint() installs a handler that only sets a flag, which the search
// polls between its runs (its `stop`): the work stops taking new runs, the
// runs under way finish, and the verb writes what it has, marked incomplete.
// The handler resets itself, so a second SIGINT ends the process at once.
#pragma once

#include <atomic>

namespace admit::cli {

void catch_sigint();
// Whether a SIGINT arrived since catch_sigint() (or a SIGTERM since catch_sigterm()).
bool sigint_seen() noexcept;
// SIGTERM sets the same flag (confirm: its servers are stopped and its folders removed before it exits).
void catch_sigterm();
// The flag itself, for a loop that polls it.
const std::atomic<bool>* interrupt_flag() noexcept;

}  // namespace admit::cli
