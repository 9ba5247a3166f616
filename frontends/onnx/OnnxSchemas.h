//===- OnnxSchemas.h - Operator versions of current ONNX --------*- C++ -*-===//
//
// The signature of every ai.onnx and ai.onnx.preview.training operator
// version, generated from a current `onnx` package (OnnxSchemas.inc, written
// by tools/onnx/gen_op_schemas.py). Debian's ONNX library, which the
// importer links for parsing, checking and shape inference, knows opsets up
// to 17 only; this table resolves each node's operator version by the
// operator's own history at any opset up to the generator's, and validates
// the nodes that library cannot judge.
//
//===----------------------------------------------------------------------===//

#ifndef REMAT_FRONTEND_ONNX_ONNXSCHEMAS_H
#define REMAT_FRONTEND_ONNX_ONNXSCHEMAS_H

#include "onnx/onnx_pb.h"

#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <optional>
#include <string>

namespace remat::onnximport {

/// One operator version's signature.
struct OpSignature {
  const char *domain; // "" for ai.onnx
  const char *op;
  int sinceVersion;
  bool deprecated;
  int minInputs, maxInputs, minOutputs, maxOutputs;
  /// "name:type[!],..." with type an AttributeProto::AttributeType and '!'
  /// marking a required attribute.
  const char *attributes;
};

/// The newest IR version and ai.onnx opset the table knows.
int64_t newestKnownIrVersion();
int64_t newestKnownOpset();
/// The oldest IR version and ai.onnx opset the importer accepts.
constexpr int64_t kOldestIrVersion = 3;
constexpr int64_t kOldestOpset = 7;

/// The ONNX training domain (Gradient and the optimizers).
constexpr const char *kTrainingDomain = "ai.onnx.preview.training";

/// True for "" and "ai.onnx".
bool isDefaultDomain(llvm::StringRef domain);
/// The domain as the table keys it: "" for ai.onnx, else unchanged.
std::string canonicalDomain(llvm::StringRef domain);
/// The domain as messages name it: "ai.onnx" for the default domain.
std::string displayDomain(llvm::StringRef domain);

/// The version of `op` in effect at `opset` of `domain` (the newest one
/// introduced at or before it), or null when no such operator exists there.
const OpSignature *resolveOpVersion(llvm::StringRef domain, llvm::StringRef op,
                                    int64_t opset);

/// True when the linked ONNX library's schema for `op` at `opset` is that
/// very version (so its checker and shape inference judge it correctly).
bool libraryHasVersion(const OpSignature &signature, int64_t opset);

/// Checks a node against its signature: input and output counts, attribute
/// names, types and presence. Returns the problem, or nullopt.
std::optional<std::string> checkNodeSignature(const onnx::NodeProto &node,
                                              const OpSignature &signature);

} // namespace remat::onnximport

#endif // REMAT_FRONTEND_ONNX_ONNXSCHEMAS_H
