#include "sim/cli/write_file.hpp"

#include <filesystem>
#include <fstream>
#include <system_error>

namespace admit::cli {

std::optional<std::string> write_file_atomically(const std::string& path, const std::string& bytes,
                                                 const std::string& what) {
  namespace fs = std::filesystem;
  const fs::path p(path);
  std::error_code ec;
  if (p.has_parent_path()) fs::create_directories(p.parent_path(), ec);
  const fs::path tmp = p.string() + ".partial";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) return "cannot write the " + what;
    out << bytes;
    out.flush();
    if (!out) return "cannot write the " + what;
  }
  fs::rename(tmp, p, ec);
  if (ec) return "cannot write the " + what + " (" + ec.message() + ")";
  return std::nullopt;
}

}  // namespace admit::cli
