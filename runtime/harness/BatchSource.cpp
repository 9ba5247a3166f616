//===- BatchSource.cpp - The batch each training step reads ---------------===//

#include "BatchSource.h"

#include "SyntheticData.h"

#include "remat/runtime/OnnxWire.h"

#include <filesystem>
#include <fstream>

namespace fs = std::filesystem;

namespace remat::rt::harness {
namespace {

/// Host memory the batch cache may hold (a data set of small batches is
/// read once; a large one is streamed).
constexpr size_t kCacheBytes = size_t(512) << 20;

std::string inputPath(const std::string &dir, int k) {
  return (fs::path(dir) / ("input_" + std::to_string(k) + ".pb")).string();
}

std::string describe(DType dtype, const Shape &shape) {
  return std::string(dtypeName(dtype)) + " " + shapeToString(shape);
}

std::string trim(const std::string &line) {
  const char *space = " \t\r\n";
  const size_t begin = line.find_first_not_of(space);
  if (begin == std::string::npos)
    return "";
  return line.substr(begin, line.find_last_not_of(space) - begin + 1);
}

/// The directories a --data file lists, resolved against its directory.
std::vector<std::string> readDataFile(const std::string &file) {
  std::ifstream in(file);
  if (!in)
    throw RuntimeError("cannot open --data file '" + file + "'");
  const fs::path base = fs::path(file).parent_path();
  std::vector<std::string> dirs;
  std::string line;
  while (std::getline(in, line)) {
    line = trim(line);
    if (line.empty() || line[0] == '#')
      continue;
    fs::path dir(line);
    dirs.push_back((dir.is_absolute() ? dir : base / dir).string());
  }
  if (dirs.empty())
    throw RuntimeError("--data file '" + file +
                       "' lists no batch directories");
  return dirs;
}

} // namespace

BatchSource::BatchSource(const ProgramSpec &program,
                         const std::string &inputsDir,
                         const std::string &dataFile) {
  for (const ArgumentSpec &arg : program.arguments)
    if (std::string(arg.role) == "input")
      inputs_.push_back(&arg);

  if (!inputsDir.empty()) {
    directories_.push_back(inputsDir);
    description_ = inputsDir;
  } else if (!dataFile.empty()) {
    directories_ = readDataFile(dataFile);
    description_ = dataFile + " (" + std::to_string(directories_.size()) +
                   " batch" + (directories_.size() == 1 ? "" : "es") + ")";
  } else {
    description_ = "synthetic";
    std::vector<Tensor> batch;
    for (const ArgumentSpec *arg : inputs_)
      batch.push_back(syntheticInput(*arg));
    cache_.emplace(0, std::move(batch));
    return;
  }

  // Every file must be there before step 1, not discovered missing at step
  // 900; their contents are checked when read.
  for (const std::string &dir : directories_) {
    if (!fs::is_directory(dir))
      throw RuntimeError("batch directory '" + dir + "' does not exist" +
                         (dataFile.empty() ? ""
                                           : " (listed in '" + dataFile + "')"));
    for (const ArgumentSpec *arg : inputs_) {
      if (arg->inputFile < 0)
        throw RuntimeError("input '" + std::string(arg->name) +
                           "' of the program has no input file index");
      const std::string path = inputPath(dir, arg->inputFile);
      if (!fs::is_regular_file(path))
        throw RuntimeError("'" + path + "' is missing: input '" +
                           std::string(arg->name) + "' (" +
                           describe(arg->dtype, arg->shape) +
                           ") is read from input_" +
                           std::to_string(arg->inputFile) + ".pb");
    }
  }
  batch(0); // read and check the first batch now
}

std::vector<Tensor> BatchSource::readBatch(const std::string &dir) const {
  std::vector<Tensor> batch;
  for (const ArgumentSpec *arg : inputs_) {
    const std::string path = inputPath(dir, arg->inputFile);
    Tensor tensor = wire::readTensorFile(path); // messages name the file
    if (tensor.dtype() != arg->dtype || tensor.shape() != arg->shape)
      throw RuntimeError("'" + path + "' holds " +
                         describe(tensor.dtype(), tensor.shape()) +
                         " but input '" + std::string(arg->name) +
                         "' of the program is " +
                         describe(arg->dtype, arg->shape) +
                         " (the plan is for fixed shapes: recompile for "
                         "another batch size)");
    batch.push_back(std::move(tensor));
  }
  return batch;
}

const std::vector<Tensor> &BatchSource::batch(int64_t step) {
  const int64_t index = step % batchCount();
  if (auto it = cache_.find(index); it != cache_.end())
    return it->second;
  std::vector<Tensor> batch = readBatch(directories_[index]);
  size_t bytes = 0;
  for (const Tensor &tensor : batch)
    bytes += tensor.bytes();
  if (cachedBytes_ + bytes > kCacheBytes) {
    cache_.clear(); // streaming: keep only the batch in use
    cachedBytes_ = 0;
  }
  cachedBytes_ += bytes;
  return cache_.emplace(index, std::move(batch)).first->second;
}

} // namespace remat::rt::harness
