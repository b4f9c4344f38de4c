// protocol_loader: lease protocol files (docs/protocols.md) -> redis::protocol.
//
// A protocol file is JSON with the loader's strictness: unknown keys, wrong
// types, a script no operation calls, a template with an unknown placeholder
// are all errors naming the JSON Pointer and what was expected. Its scripts
// are Lua files beside it ({"file": "acquire.lua"}) or inline
// ({"source": "..."}).
//
// Two steps, so that loading stays free of I/O. `inline_protocol_files`
// rewrites a scenario document: each lease gate's "protocol" that names a
// file (a string) becomes that file's object, and each script "file" becomes
// {"source", "origin"}. The report embeds the rewritten document, so a replay
// needs none of the files. `read_protocol` then reads an inline object.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "gate/redis/protocol.hpp"

namespace admit::scenario {

inline constexpr const char* protocol_format = "admitsim-protocol/1";
inline constexpr std::size_t protocol_scripts_max = 16;
inline constexpr std::size_t protocol_script_bytes_max = std::size_t{1} << 20;  // 1 MiB of Lua per script
inline constexpr std::size_t protocol_setup_calls_max = 8;                      // set-up calls per protocol
inline constexpr std::size_t protocol_call_args_max = 32;                      // KEYS or ARGV entries per call
inline constexpr std::int64_t acknowledge_replicas_max = 16;                   // client.acknowledge.replicas

// Reads the bytes of a file (at most `limit`), or throws scenario_error /
// another std::exception whose message names the file. The CLI passes
// read_input (sim/cli/read_file.hpp): regular files only, bounded.
using file_reader = std::function<std::string(const std::string& path)>;

// Rewrites `doc` (a scenario document) in place: every /gate/protocol or
// /gates/N/protocol naming a file, alone or in a list, is replaced by the
// file's object, and every script {"file": F} in it by {"source": ...,
// "origin": F}. A protocol path is relative to `base_dir` (the scenario
// file's directory); a script path to its protocol file's directory.
// Throws scenario_error with the JSON Pointer of the reference that failed.
void inline_protocol_files(nlohmann::ordered_json& doc, const std::string& base_dir, const file_reader& read);

// The protocol object at `path` (every script inline). Throws scenario_error.
redis::protocol read_protocol(const nlohmann::ordered_json& v, const std::string& path);

// The directory part of a file path ("" for a bare name, "/" kept).
std::string directory_of(const std::string& file);

}  // namespace admit::scenario
