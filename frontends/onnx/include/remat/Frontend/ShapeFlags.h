//===- ShapeFlags.h - Parsing of NAME=VALUE import flags ---------*- C++ -*-===//

#ifndef REMAT_FRONTEND_SHAPEFLAGS_H
#define REMAT_FRONTEND_SHAPEFLAGS_H

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace remat {

/// Parses `NAME=AxBxC` flags (a scalar is `NAME=`); on a malformed flag,
/// returns false with a message naming it.
bool parseShapeFlags(const std::vector<std::string> &flags,
                     std::map<std::string, std::vector<int64_t>> &shapes,
                     std::string &error);

/// Parses `--padding-idx NAME=ROW` flags (ROW may be negative, counting from
/// the last row, as torch.nn.Embedding allows); on a malformed flag,
/// returns false with a message naming it.
bool parsePaddingIdxFlags(const std::vector<std::string> &flags,
                          std::map<std::string, int64_t> &rows,
                          std::string &error);

} // namespace remat

#endif // REMAT_FRONTEND_SHAPEFLAGS_H
