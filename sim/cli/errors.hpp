// errors: the exit codes of every verb and the one shape of every line in
// which the admitsim command says that something went wrong:
//
//   admitsim: SUBJECT: MESSAGE
//
// SUBJECT is what the line is about: a file (a scenario, a report, an output
// path or folder), an option (`--seed`, `--out and --out-dir`), or the verb
// (`explore`) when it is about neither (what CLI11 refuses, memory, SIGINT, a
// failure inside a run). MESSAGE says what was expected and what came; about
// a scenario or a report it opens with the JSON path:
//
//   admitsim: zero_cap.json: /gate/max_active: expected an integer from 1 to 1000000, got 0
//   admitsim: --jobs: expected an integer from 1 to 256, got "0"
//   admitsim: explore: --seeds excludes --time (admitsim explore --help shows the usage)
//
// Verbs throw input_error or run_error; main catches them and prints the line
// with print_error, the only function that writes one (docs/limits.md,
// tests/cli/error_shape_test.sh).
#pragma once

#include <string>
#include <string_view>

namespace admit::cli {

// Exit codes of every verb (README.md).
inline constexpr int exit_as_expected = 0;   // every run came out as its scenario expects
inline constexpr int exit_not_expected = 1;  // at least one did not (or a replay differed)
inline constexpr int exit_bad_input = 2;     // bad input or usage; nothing passed off as complete

// Bad input or usage: exit 2.
struct input_error {
  std::string subject;  // the file or option, else the verb
  std::string message;  // what was expected, got what
  // "SUBJECT: MESSAGE", the line without its "admitsim: " (list prints it on an INVALID row).
  std::string text() const { return subject + ": " + message; }
};

// A run that failed inside (an internal assertion): exit 1, as a run not as expected.
struct run_error {
  std::string subject;
  std::string message;
};

// Writes "admitsim: SUBJECT: MESSAGE\n" on stderr, control characters as \xNN
// so that a file name holding a newline still gives one line. Allocates
// nothing: it also reports running out of memory.
void print_error(std::string_view subject, std::string_view message);

// In a catch block: prints the line of the exception being handled and
// returns its exit code. input_error and std::bad_alloc are exit 2, run_error
// and any other std::exception exit 1; `verb` is the subject of the lines
// whose exception names none.
int report_current_exception(std::string_view verb);

}  // namespace admit::cli
