#include "sim/cli/errors.hpp"

#include <cstdio>
#include <exception>
#include <new>

namespace admit::cli {

namespace {

// `s` on stderr byte by byte, C0 controls and DEL as \xNN: the loader's
// messages escape every byte outside printable ASCII already (\x1B stays as
// it is), paths from the command line do not, and UTF-8 names stay legible.
void put_escaped(std::string_view s) {
  for (const char c : s) {
    const auto b = static_cast<unsigned char>(c);
    if (b < 0x20 || b == 0x7f) std::fprintf(stderr, "\\x%02X", b);
    else std::fputc(c, stderr);
  }
}

}  // namespace

void print_error(std::string_view subject, std::string_view message) {
  std::fputs("admitsim: ", stderr);
  put_escaped(subject);
  std::fputs(": ", stderr);
  put_escaped(message);
  std::fputc('\n', stderr);
}

int report_current_exception(std::string_view verb) {
  try {
    throw;
  } catch (const input_error& e) {
    print_error(e.subject, e.message);
    return exit_bad_input;
  } catch (const run_error& e) {
    print_error(e.subject, e.message);
    return exit_not_expected;
  } catch (const std::bad_alloc&) {
    // What the verbs held is freed by now (their teardown allocates nothing, and the reserve is given back).
    print_error(verb,
                "out of memory: the scenario needs more memory than this process may use (docs/scenarios.md#limits)");
    return exit_bad_input;
  } catch (const std::exception& e) {
    print_error(verb, e.what());
    return exit_not_expected;
  }
}

}  // namespace admit::cli
