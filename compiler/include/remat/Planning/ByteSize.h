//===- ByteSize.h - Parsing and printing memory sizes -----------*- C++ -*-===//

#ifndef REMAT_PLANNING_BYTESIZE_H
#define REMAT_PLANNING_BYTESIZE_H

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace remat {

/// Parses "40GB", "1.5 GiB", "512MB", "1000000" (bytes): B, KB/MB/GB/TB
/// (powers of 1000), KiB/MiB/GiB/TiB (powers of 1024), case-insensitive
/// units, optional space. Returns nullopt with a message naming the
/// problem for anything else (negative, unknown unit, overflow).
std::optional<int64_t> parseByteSize(std::string_view text, std::string &error);

/// "1.50 GB" (powers of 1000, as budgets are usually written) and
/// "1.40 GiB" (powers of 1024).
std::string formatBytes(int64_t bytes);
std::string formatBinaryBytes(int64_t bytes);

} // namespace remat

#endif // REMAT_PLANNING_BYTESIZE_H
