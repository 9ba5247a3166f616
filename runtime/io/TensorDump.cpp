//===- TensorDump.cpp - Write named tensors as DIR/<name>.pb --------------===//
//
// Moved here from remat-run so that the harness of generated executables
// writes exactly the same files.
//
//===----------------------------------------------------------------------===//

#include "remat/runtime/TensorDump.h"

#include "remat/runtime/OnnxWire.h"

#include <filesystem>

namespace fs = std::filesystem;

namespace remat::rt {

void dumpTensors(const std::string &dir, const NamedTensors &tensors) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec)
    throw RuntimeError("cannot create '" + dir + "': " + ec.message());
  for (const auto &[name, view] : tensors) {
    fs::path path = fs::path(dir) / (name + ".pb");
    // Initializer names may hold '/' (scoped exporters): keep the layout.
    if (path.has_parent_path() && path.parent_path() != fs::path(dir))
      fs::create_directories(path.parent_path(), ec);
    try {
      wire::writeTensorFile(path.string(), *view, name);
    } catch (const std::exception &e) {
      throw RuntimeError("cannot write '" + path.string() + "': " + e.what());
    }
  }
}

} // namespace remat::rt
