//===- TensorDump.h - Write named tensors as DIR/<name>.pb -------*- C++ -*-===//
//
// The `--dump-params`/`--dump-grads`/`--dump-buffers` layout shared by
// remat-run and the training executable's harness: one serialized
// onnx.TensorProto per tensor, named after it, so that either tool's dump
// can be checked against the other's (remat-run --check-params DIR).
//
//===----------------------------------------------------------------------===//

#ifndef REMAT_RUNTIME_TENSORDUMP_H
#define REMAT_RUNTIME_TENSORDUMP_H

#include "remat/runtime/Tensor.h"

#include <map>
#include <string>

namespace remat::rt {

/// Named tensors to dump, check or write back; views into tensors the caller
/// owns. Ordered by name, so that output does not depend on insertion order.
using NamedTensors = std::map<std::string, const TensorView *>;

/// Writes DIR/<name>.pb for each tensor (creating DIR). A name holding '/'
/// (scoped exporters) becomes a subdirectory. Throws RuntimeError naming the
/// directory or file that cannot be written.
void dumpTensors(const std::string &dir, const NamedTensors &tensors);

} // namespace remat::rt

#endif // REMAT_RUNTIME_TENSORDUMP_H
