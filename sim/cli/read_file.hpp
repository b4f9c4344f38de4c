// read_file: how every verb reads a file it is given (a scenario, a report),
// so that no input can block the command or fill its memory: only a regular
// file, or standard input when the path is "-", and at most input_bytes_max
// bytes (docs/limits.md).
#pragma once

#include <cstddef>
#include <string>

#include <nlohmann/json.hpp>

#include "sim/scenario/scenario.hpp"

namespace admit::cli {

// The largest input read: a 1,000,000-request scenario is under 1 KiB (its
// arrivals are a process, not a list) and the largest report the tool writes
// is a few MiB, so 256 MiB refuses only what is not an admitsim file.
inline constexpr std::size_t input_bytes_max = std::size_t{256} << 20;

// The bytes of `path`, named in messages as `what` ("scenario file",
// "report"). "-" is standard input when `dash_is_stdin`. Throws input_error
// (errors.hpp) whose subject is the path: it cannot be opened, it is a
// directory, a FIFO, a device or a socket, it is larger than the limit, or a
// read failed.
std::string read_input(const std::string& path, const std::string& what, bool dash_is_stdin = true,
                       std::size_t limit = input_bytes_max);

// The scenario in `bytes` (read from `file`), validated by the loader, which
// refuses everything no world runs. Throws input_error FILE, "/path: what".
scenario::scenario parse_scenario(const std::string& file, const std::string& bytes);
// The same, keeping the parsed document (one parse for the scenario and the report's copy).
scenario::scenario parse_scenario(const std::string& file, const std::string& bytes, nlohmann::ordered_json& doc);

}  // namespace admit::cli
