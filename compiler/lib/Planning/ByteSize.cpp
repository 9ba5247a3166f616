//===- ByteSize.cpp - Parsing and printing memory sizes -------------------===//

#include "remat/Planning/ByteSize.h"

#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace remat {

std::optional<int64_t> parseByteSize(std::string_view text, std::string &error) {
  std::string s(text);
  size_t i = 0;
  while (i < s.size() && (std::isdigit(static_cast<unsigned char>(s[i])) || s[i] == '.'))
    ++i;
  std::string number = s.substr(0, i);
  std::string unit = s.substr(i);
  while (!unit.empty() && unit.front() == ' ')
    unit.erase(unit.begin());
  char *end = nullptr;
  double value = number.empty() ? 0 : std::strtod(number.c_str(), &end);
  if (number.empty() || end != number.c_str() + number.size()) {
    error = "'" + s + "' is not a size (expected e.g. 40GB, 1.5GiB, 512MB)";
    return std::nullopt;
  }
  std::string lower;
  for (char c : unit)
    lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  struct Unit {
    const char *name;
    double factor;
  };
  static const Unit units[] = {
      {"", 1},         {"b", 1},
      {"kb", 1e3},     {"mb", 1e6},     {"gb", 1e9},     {"tb", 1e12},
      {"kib", 1024.0}, {"mib", 1048576.0}, {"gib", 1073741824.0},
      {"tib", 1099511627776.0},
  };
  for (const Unit &u : units) {
    if (lower != u.name)
      continue;
    double bytes = value * u.factor;
    if (bytes >= 9.2e18) {
      error = "'" + s + "' is too large";
      return std::nullopt;
    }
    if (u.factor == 1 && std::floor(value) != value) {
      error = "'" + s + "': a plain byte count must be a whole number";
      return std::nullopt;
    }
    return static_cast<int64_t>(std::llround(bytes));
  }
  error = "'" + s + "' has an unknown unit '" + unit +
          "' (use B, KB, MB, GB, TB, KiB, MiB, GiB or TiB)";
  return std::nullopt;
}

static std::string format(double value, const char *const *units, double base) {
  int u = 0;
  while (std::fabs(value) >= base && units[u + 1]) {
    value /= base;
    ++u;
  }
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, u == 0 ? "%.0f %s" : "%.2f %s", value,
                units[u]);
  return buffer;
}

std::string formatBytes(int64_t bytes) {
  static const char *const units[] = {"B", "KB", "MB", "GB", "TB", nullptr};
  return format(static_cast<double>(bytes), units, 1000.0);
}

std::string formatBinaryBytes(int64_t bytes) {
  static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB", nullptr};
  return format(static_cast<double>(bytes), units, 1024.0);
}

} // namespace remat
