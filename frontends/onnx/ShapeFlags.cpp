//===- ShapeFlags.cpp - Parsing of NAME=VALUE import flags ----------------===//

#include "remat/Frontend/ShapeFlags.h"

#include "llvm/ADT/StringRef.h"

namespace remat {

bool parseShapeFlags(const std::vector<std::string> &flags,
                     std::map<std::string, std::vector<int64_t>> &shapes,
                     std::string &error) {
  for (const std::string &flag : flags) {
    auto [name, dims] = llvm::StringRef(flag).split('=');
    if (name.empty() || name.size() == flag.size()) {
      error = "--shape '" + flag + "' must look like NAME=2x64";
      return false;
    }
    std::vector<int64_t> shape;
    llvm::StringRef rest = dims;
    while (!rest.empty()) {
      auto [dim, tail] = rest.split('x');
      int64_t value;
      if (dim.getAsInteger(10, value) || value < 0) {
        error = "--shape '" + flag + "': '" + dim.str() +
                "' is not a non-negative dim";
        return false;
      }
      shape.push_back(value);
      rest = tail;
    }
    shapes[name.str()] = shape;
  }
  return true;
}

bool parsePaddingIdxFlags(const std::vector<std::string> &flags,
                          std::map<std::string, int64_t> &rows,
                          std::string &error) {
  for (const std::string &flag : flags) {
    auto [name, row] = llvm::StringRef(flag).split('=');
    int64_t value;
    if (name.empty() || name.size() == flag.size() ||
        row.getAsInteger(10, value)) {
      error = "--padding-idx '" + flag + "' must look like NAME=0";
      return false;
    }
    rows[name.str()] = value;
  }
  return true;
}

} // namespace remat
