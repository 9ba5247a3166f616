//===- EmitCommand.cpp - remat-opt --emit=cpp|cuda|exe --------------------===//
//
// Code generation from the driver: the planned @train_step becomes
// train_step.cpp (or .cu) plus a CMakeLists.txt; --emit=exe then configures
// and builds that project with CMake against the RematRuntime package and
// copies the executable to -o. The source and build tree stay in
// `<output>.build/` so that the generated code can be read.
//
//===----------------------------------------------------------------------===//

#include "EmitCommand.h"

#include "remat/Dialect/RematDialect.h"
#include "remat/Target/Cpp/TrainStepEmitter.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>

using namespace mlir;

namespace remat {
namespace {

int fail(const llvm::Twine &message) {
  llvm::errs() << "remat-opt: error: " << message << "\n";
  return 1;
}

/// Where remat-opt's own build or install tree keeps the runtime package:
/// <bin>/../lib/cmake/RematRuntime.
std::string defaultRuntimeDir(const char *argv0) {
  std::string exe = llvm::sys::fs::getMainExecutable(
      argv0, reinterpret_cast<void *>(&defaultRuntimeDir));
  llvm::SmallString<256> dir(llvm::sys::path::parent_path(exe));
  llvm::sys::path::append(dir, "..", "lib", "cmake", "RematRuntime");
  llvm::SmallString<256> real;
  if (!llvm::sys::fs::real_path(dir, real))
    return std::string(real);
  return std::string(dir);
}

bool nvccAvailable() {
  if (llvm::sys::findProgramByName("nvcc"))
    return true;
  return static_cast<bool>(
      llvm::sys::findProgramByName("nvcc", {"/usr/local/cuda/bin"}));
}

/// Runs a command with its output in `log`; returns its exit status.
int runLogged(llvm::ArrayRef<llvm::StringRef> args, llvm::StringRef log,
              double &seconds) {
  auto start = std::chrono::steady_clock::now();
  std::optional<llvm::StringRef> redirects[] = {std::nullopt, log, log};
  std::string error;
  int status = llvm::sys::ExecuteAndWait(args[0], args, std::nullopt,
                                         redirects, 0, 0, &error);
  seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                          start)
                .count();
  if (status < 0)
    llvm::errs() << "remat-opt: error: cannot run " << args[0] << ": "
                 << error << "\n";
  return status;
}

std::string tail(llvm::StringRef path, size_t lines) {
  std::ifstream in(path.str());
  std::vector<std::string> all;
  for (std::string line; std::getline(in, line);)
    all.push_back(line);
  std::string text;
  for (size_t i = all.size() > lines ? all.size() - lines : 0; i < all.size();
       ++i)
    text += "  " + all[i] + "\n";
  return text;
}

int writeFile(llvm::StringRef path, llvm::StringRef text) {
  std::error_code ec;
  llvm::raw_fd_ostream os(path, ec);
  if (ec)
    return fail("cannot write '" + path + "': " + ec.message());
  os << text;
  return 0;
}

} // namespace

int runEmitCommand(ModuleOp module, const PlanReport &report,
                   const std::string &optimizer,
                   const EmitCommandOptions &options) {
  if (options.output.empty() || options.output == "-")
    return fail("--emit=" + options.emit + " needs -o " +
                (options.emit == "exe" ? "PATH (the executable)"
                                       : "DIR (the source directory)"));
  CodegenBackend backend = CodegenBackend::Cpu;
  if (options.emit == "cuda") {
    backend = CodegenBackend::Cuda;
  } else if (options.emit == "exe") {
    std::string choice = options.backend;
    if (choice.empty()) {
#ifdef REMAT_HAVE_CUDA
      choice = nvccAvailable() ? "cuda" : "cpu";
#else
      choice = "cpu";
#endif
    }
    if (choice == "cuda") {
#ifndef REMAT_HAVE_CUDA
      return fail("--backend cuda: this remat was built without the CUDA "
                  "runtime (no nvcc at configure time); use --backend cpu");
#endif
      if (!nvccAvailable())
        return fail("--backend cuda needs nvcc on PATH or in "
                    "/usr/local/cuda/bin");
      backend = CodegenBackend::Cuda;
      // The NVIDIA driver's control device: without it the program builds
      // but cannot run here, which a user who took the default may not
      // expect.
      if (options.backend.empty() && !llvm::sys::fs::exists("/dev/nvidiactl"))
        llvm::outs() << "note: building the CUDA backend (the default when "
                        "nvcc exists), but this machine shows no NVIDIA GPU; "
                        "pass --backend cpu for an executable that runs "
                        "here\n";
    } else if (choice != "cpu") {
      return fail("--backend must be cpu or cuda, got '" + choice + "'");
    }
  }

  auto step = module.lookupSymbol<func::FuncOp>("train_step");
  auto forward = module.lookupSymbol<func::FuncOp>("forward");
  if (!step)
    return fail("no @train_step to emit");
  TrainStepEmitOptions emit;
  emit.backend = backend;
  // The executable may run from any directory: a relative model path (as
  // the importer records it) is resolved against this one.
  for (auto func : module.getOps<func::FuncOp>())
    if (auto path = func->getAttrOfType<StringAttr>(RematDialect::kModelPathAttr)) {
      std::error_code ec;
      auto absolute = std::filesystem::absolute(path.str(), ec);
      emit.modelPath = ec ? path.str() : absolute.lexically_normal().string();
    }
  emit.optimizer = optimizer;
  emit.strategy = report.strategy;
  emit.budgetBytes = report.budgetBytes;
  emit.workspaceBytes = report.workspaceBytes;
  emit.plannedPeakBytes = report.peakBytes;

  std::string source;
  llvm::raw_string_ostream sourceStream(source);
  if (failed(emitTrainStepSource(step, forward, emit, sourceStream)))
    return 1;

  const std::string dir =
      options.emit == "exe" ? options.output + ".build" : options.output;
  if (std::error_code ec = llvm::sys::fs::create_directories(dir))
    return fail("cannot create '" + dir + "': " + ec.message());
  const std::string sourceName = sourceFileName(backend);
  llvm::SmallString<256> sourcePath(dir), cmakePath(dir);
  llvm::sys::path::append(sourcePath, sourceName);
  llvm::sys::path::append(cmakePath, "CMakeLists.txt");
  if (writeFile(sourcePath, source) ||
      writeFile(cmakePath, emitCMakeProject(backend, sourceName, "train_step")))
    return 1;
  const size_t lines = llvm::count(source, '\n');
  llvm::outs() << "wrote " << sourcePath << " (" << lines << " lines, "
               << source.size() << " bytes) and " << cmakePath << "\n";
  if (options.emit != "exe") {
    llvm::outs() << "build: cmake -S " << dir << " -B " << dir
                 << "/build -DRematRuntime_DIR="
                 << (options.runtimeDir.empty()
                         ? defaultRuntimeDir(options.argv0)
                         : options.runtimeDir)
                 << " && cmake --build " << dir << "/build\n";
    return 0;
  }

  // --emit=exe: configure and build with CMake.
  auto cmake = llvm::sys::findProgramByName("cmake");
  if (!cmake)
    return fail("--emit=exe needs cmake on PATH");
  const std::string runtimeDir = options.runtimeDir.empty()
                                     ? defaultRuntimeDir(options.argv0)
                                     : options.runtimeDir;
  llvm::SmallString<256> config(runtimeDir);
  llvm::sys::path::append(config, "RematRuntimeConfig.cmake");
  if (!llvm::sys::fs::exists(config))
    return fail("no RematRuntime package at '" + runtimeDir +
                "' (pass --runtime-dir=<prefix>/lib/cmake/RematRuntime)");
  const std::string buildDir = dir + "/build";
  const std::string log = dir + "/build.log";
  std::vector<std::string> configure = {
      *cmake, "-S", dir, "-B", buildDir, "-DCMAKE_BUILD_TYPE=Release",
      "-DRematRuntime_DIR=" + runtimeDir};
  if (llvm::sys::findProgramByName("ninja"))
    configure.push_back("-GNinja");
  if (auto ccache = llvm::sys::findProgramByName("ccache")) {
    configure.push_back("-DCMAKE_CXX_COMPILER_LAUNCHER=" + *ccache);
    if (backend == CodegenBackend::Cuda)
      configure.push_back("-DCMAKE_CUDA_COMPILER_LAUNCHER=" + *ccache);
  }
  if (backend == CodegenBackend::Cuda && !llvm::sys::findProgramByName("nvcc"))
    configure.push_back("-DCMAKE_CUDA_COMPILER=/usr/local/cuda/bin/nvcc");
  std::vector<llvm::StringRef> configureArgs(configure.begin(),
                                             configure.end());
  double configureSeconds = 0, buildSeconds = 0;
  // Progress: a big model's source takes a minute or more to compile.
  llvm::outs() << "configuring " << buildDir << " (log: " << log << ")\n";
  llvm::outs().flush();
  if (runLogged(configureArgs, log, configureSeconds) != 0)
    return fail("configuring the generated project failed; " + log +
                " ends with:\n" + tail(log, 15));
  const std::string buildLog = dir + "/build-compile.log";
  std::vector<std::string> build = {*cmake, "--build", buildDir};
  std::vector<llvm::StringRef> buildArgs(build.begin(), build.end());
  llvm::outs() << "compiling " << sourceName << " (" << lines
               << " lines) and linking against the runtime (log: " << buildLog
               << ")\n";
  llvm::outs().flush();
  if (runLogged(buildArgs, buildLog, buildSeconds) != 0)
    return fail("building the generated program failed; " + buildLog +
                " ends with:\n" + tail(buildLog, 25));
  llvm::SmallString<256> built(buildDir);
  llvm::sys::path::append(built, "train_step");
  if (std::error_code ec = llvm::sys::fs::copy_file(built, options.output))
    return fail("cannot copy the executable to '" + options.output +
                "': " + ec.message());
  llvm::sys::fs::setPermissions(options.output, llvm::sys::fs::all_read |
                                                    llvm::sys::fs::all_exe |
                                                    llvm::sys::fs::owner_write);
  char timing[160];
  std::snprintf(timing, sizeof timing,
                "(%s backend; configure %.1f s, compile and link %.1f s)",
                backend == CodegenBackend::Cuda ? "cuda" : "cpu",
                configureSeconds, buildSeconds);
  llvm::outs() << "built " << options.output << " " << timing
               << "; run it with --steps N [--inputs DIR] [--json]\n";
  return 0;
}

} // namespace remat
