//===- CppLiterals.h - Values written as C++ source -------------*- C++ -*-===//
//
// Private to the C++ emitter: the literal text of the values generated code
// passes to kernels and the harness. Each round-trips exactly.
//
//===----------------------------------------------------------------------===//

#ifndef REMAT_TARGET_CPP_CPPLITERALS_H
#define REMAT_TARGET_CPP_CPPLITERALS_H

#include "remat/runtime/Kernels.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <string>

namespace remat {

std::string cppBool(bool value);
std::string cppInt(int64_t value);
/// An unsigned 64-bit literal (`...ULL`).
std::string cppUnsigned(uint64_t value);
/// Round-trips exactly (17 significant digits, or the named infinities).
std::string cppDouble(double value);
std::string cppIntList(llvm::ArrayRef<int64_t> values);
/// A C++ string literal.
std::string cppString(llvm::StringRef text);

// The runtime's parameter types, as `remat::rt::...` expressions.
std::string cppLiteral(rt::UnaryOp op);
std::string cppLiteral(rt::BinaryOp op);
std::string cppLiteral(rt::ReduceOp op);
std::string cppLiteral(rt::LossReduction reduction);
std::string cppLiteral(rt::PadMode mode);
/// A braced list: initializes Dims without naming the type.
std::string cppLiteral(const rt::Dims &dims);
std::string cppLiteral(const rt::UnaryParams &params);
std::string cppLiteral(const rt::WindowParams &params);
std::string cppLiteral(const rt::SgdOptions &options);
std::string cppLiteral(const rt::AdamOptions &options);
std::string cppLiteral(rt::ScatterReduction reduction);
std::string cppLiteral(const rt::ResizeParams &params);

} // namespace remat

#endif // REMAT_TARGET_CPP_CPPLITERALS_H
