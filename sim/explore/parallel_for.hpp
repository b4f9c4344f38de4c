// parallel_for: the explorer's one way to spread independent tasks over threads.
//
// parallel_for(n, jobs, task) runs task(i) for every i < n on min(jobs, n)
// threads (one thread, or n = 0, runs them on the calling thread, which
// otherwise waits) and returns once every started task has ended. Tasks are
// handed out in index order from one counter; what they write must go to
// their own slot (or under the caller's lock) so that the result does not
// depend on which thread ran which task.
//
// Failures. After a task throws, no thread takes another task; every task
// already taken runs to its end. The exception rethrown is the one of the
// least failing index, which is the same whatever the threads' timing: every
// index below a failing one was taken before it and so has run. A thread
// that cannot be started is a std::system_error, after the started threads
// are joined (destroying a joinable thread would abort).
//
// Stopping. `stop`, when given, is polled before each task is taken: once it
// says true no thread takes another task (every task already taken runs to
// its end), so a stop ends the loop in the time of the tasks running, not in
// the time of n empty ones. The caller learns which tasks ran from its own
// slots.
//
// run_explore (explorer.hpp) keeps its own runner: it streams outcomes in
// seed order through a bounded window while the threads run, which a plain
// loop over indices does not do.
#pragma once

#include <cstddef>
#include <functional>

namespace admit::explore {

void parallel_for(std::size_t n, unsigned jobs, const std::function<void(std::size_t)>& task,
                  const std::function<bool()>& stop = {});

}  // namespace admit::explore
