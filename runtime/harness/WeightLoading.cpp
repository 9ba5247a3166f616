//===- WeightLoading.cpp - Parameters and buffers from the ONNX model -----===//

#include "WeightLoading.h"

#include "HarnessRandom.h"

#include "remat/runtime/Kernels.h"

#include <algorithm>
#include <cctype>
#include <filesystem>

namespace fs = std::filesystem;

namespace remat::rt::harness {
namespace {

std::string describe(DType dtype, const Shape &shape) {
  return std::string(dtypeName(dtype)) + " " + shapeToString(shape);
}

std::string lower(std::string text) {
  for (char &c : text)
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return text;
}

/// The tensor --random-weights gives an argument without an initializer.
Tensor randomTensor(const ArgumentSpec &arg) {
  Tensor tensor(arg.dtype, arg.shape);
  if (std::string(arg.role) == "buffer") {
    const std::string name = lower(arg.name);
    const bool variance = name.find("running_var") != std::string::npos ||
                          name.find("moving_var") != std::string::npos;
    fill(tensor.view(), variance ? 1.0 : 0.0);
    return tensor;
  }
  if (!isFloat(arg.dtype))
    return tensor; // an integer parameter (unusual): zero
  // Drawn in float64 and cast, so every float dtype sees the same values.
  Tensor wide(DType::F64, arg.shape);
  Random random = Random::forName(arg.name);
  double *values = wide.as<double>();
  for (int64_t i = 0, n = wide.numel(); i < n; ++i)
    values[i] = 0.02 * random.normal();
  cast(wide.view(), tensor.view());
  return tensor;
}

} // namespace

void openWeightSource(const std::string &path, WeightSource &source) {
  source.path = path;
  wire::readModel(path, source.model); // messages name the file
  for (const wire::TensorRecord &init : source.model.initializers)
    source.initializers[init.name] = &init;
  const fs::path dir = fs::path(path).parent_path();
  source.dir = dir.empty() ? "." : dir.string();
  source.loaded = true;
}

WeightLoadCounts loadWeights(const ProgramSpec &program,
                             const WeightSource &source, bool randomWeights,
                             Device &device, char *persistent) {
  WeightLoadCounts counts;
  for (const ArgumentSpec &arg : program.arguments) {
    const std::string role = arg.role;
    if (role != "parameter" && role != "buffer")
      continue;
    const std::string label = role + " '" + arg.name + "'";
    const wire::TensorRecord *proto = nullptr;
    if (auto it = source.initializers.find(arg.name);
        it != source.initializers.end())
      proto = it->second;

    Tensor tensor;
    if (!proto) {
      if (!randomWeights)
        throw RuntimeError(
            label + " has no initializer in " +
            (source.loaded ? "'" + source.path + "'"
                           : std::string("the (absent) weights file")) +
            "; pass --weights MODEL.onnx with the trained model, or "
            "--random-weights to start from random values");
      tensor = randomTensor(arg);
      ++counts.random;
    } else {
      // Dtype and shape first, from the proto's header, so a mismatch does
      // not read (possibly gigabytes of) external data.
      const Shape &dims = proto->dims;
      DType dtype;
      try {
        dtype = wire::dtypeFromOnnx(proto->dataType);
      } catch (const RuntimeError &e) {
        throw RuntimeError(label + " in '" + source.path + "': " + e.what());
      }
      if (dtype != arg.dtype || dims != arg.shape)
        throw RuntimeError(label + " in '" + source.path + "' is " +
                           describe(dtype, dims) +
                           " but the program was compiled for " +
                           describe(arg.dtype, arg.shape) +
                           " (recompile the model, or pass the model it was "
                           "compiled from with --weights)");
      try {
        tensor = wire::decodeTensor(*proto, source.dir);
      } catch (const std::exception &e) {
        throw RuntimeError("cannot load " + label + " from '" + source.path +
                           "': " + e.what());
      }
      ++counts.loaded;
    }
    device.copyToDevice(persistent + arg.offset, tensor.data(),
                        tensor.bytes());
  }
  return counts;
}

} // namespace remat::rt::harness
