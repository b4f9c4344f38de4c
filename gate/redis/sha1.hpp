// admit::redis::sha1: the SHA-1 digest (FIPS 180-4), for script SHAs.
//
// Redis names a cached script by the SHA-1 of its body in lower-case hex
// (SCRIPT LOAD's reply, EVALSHA's argument) and offers redis.sha1hex to
// scripts. This is a plain one-shot implementation over a byte string; it is
// not meant for security, only to give the same 40 hex digits as Redis.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace admit::redis {

[[nodiscard]] std::array<std::uint8_t, 20> sha1(std::string_view data) noexcept;
// The digest as 40 lower-case hex digits, as Redis prints script SHAs.
[[nodiscard]] std::string sha1_hex(std::string_view data);

}  // namespace admit::redis
