// write_file: how every verb writes a file, so that a reader never sees half
// of one: the bytes go to PATH.partial, then a rename puts them in place.
#pragma once

#include <optional>
#include <string>

namespace admit::cli {

// Writes `bytes` to `path`, creating its parent directories. Returns nullopt
// on success, else why it failed, naming the file as `what` (such as "cannot
// write the report (Permission denied)"), for the caller to report with the
// path.
std::optional<std::string> write_file_atomically(const std::string& path, const std::string& bytes,
                                                 const std::string& what = "file");

}  // namespace admit::cli
