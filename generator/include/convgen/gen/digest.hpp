// Content digests: SHA-256 (OpenSSL's libcrypto) as 64 lower-case hex digits.
// One function, used wherever convgen must notice that bytes changed: the
// manifest of a library's files and the checksum of a tuning database entry.
#pragma once

#include <string>
#include <string_view>

namespace convgen::gen {

// The SHA-256 of `bytes`, as 64 lower-case hex digits.
std::string sha256_hex(std::string_view bytes);

}  // namespace convgen::gen
