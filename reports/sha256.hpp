// SHA-256 of a byte string, as 64 lowercase hex digits (FIPS 180-4).
// Used to name the exact scenario bytes a report came from.
#pragma once

#include <string>
#include <string_view>

namespace admit::reports {

std::string sha256_hex(std::string_view bytes);

}  // namespace admit::reports
