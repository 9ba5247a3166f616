//===- ProgramChecks.cpp - Consistency of a generated ProgramSpec ---------===//

#include "ProgramChecks.h"

#include <string>

namespace remat::rt::harness {
namespace {

[[noreturn]] void fail(const std::string &what) {
  throw RuntimeError("the program is inconsistent (a code generation bug): " +
                     what);
}

std::string str(const char *text) { return text ? text : "(null)"; }

void checkSlot(const std::string &what, Region region, int64_t offset,
               int64_t bytes, const ProgramSpec &program) {
  const int64_t size = region == Region::Arena ? program.arenaBytes
                                               : program.persistentBytes;
  if (offset < 0 || bytes < 0 || offset > size || bytes > size - offset)
    fail(what + " at offset " + std::to_string(offset) + " (" +
         std::to_string(bytes) + " bytes) lies outside the " +
         (region == Region::Arena ? "arena" : "persistent region") + " of " +
         std::to_string(size) + " bytes");
}

int64_t slotBytes(DType dtype, const Shape &shape) {
  return numElements(shape) * static_cast<int64_t>(dtypeSize(dtype));
}

} // namespace

void checkProgram(const ProgramSpec &program) {
  if (!program.trainStep)
    fail("no train step function");
  if (program.arenaBytes < 0 || program.persistentBytes < 0 ||
      program.workspaceBytes < 0)
    fail("a negative region size");
  for (size_t i = 0; i < program.arguments.size(); ++i) {
    const ArgumentSpec &arg = program.arguments[i];
    if (!arg.name || !arg.role)
      fail("argument " + std::to_string(i) + " has no name or role");
    const std::string role = arg.role;
    const std::string what = role + " '" + arg.name + "'";
    if (role != "input" && !isPersistentRole(role))
      fail(what + " has an unknown role");
    if (isPersistentRole(role) && arg.region != Region::Persistent)
      fail(what + " is not in the persistent region");
    checkSlot(what, arg.region, arg.offset, slotBytes(arg.dtype, arg.shape),
              program);
  }
  int losses = 0;
  for (size_t i = 0; i < program.results.size(); ++i) {
    const ResultSpec &result = program.results[i];
    if (!result.name || !result.role)
      fail("result " + std::to_string(i) + " has no name or role");
    const std::string role = result.role;
    const std::string what = "result " + std::to_string(i) + " (" + role +
                             " '" + result.name + "')";
    checkSlot(what, result.region, result.offset,
              slotBytes(result.dtype, result.shape), program);
    if (role == "loss") {
      ++losses;
      if (numElements(result.shape) != 1 || !isFloat(result.dtype))
        fail(what + " is " + dtypeName(result.dtype) + " " +
             shapeToString(result.shape) + ", not a float scalar");
    }
    if (!isPersistentRole(role))
      continue;
    // State is updated in place: the harness never copies it back.
    if (result.argument < 0 ||
        result.argument >= static_cast<int>(program.arguments.size()))
      fail(what + " names no argument");
    const ArgumentSpec &arg = program.arguments[result.argument];
    if (str(arg.name) != result.name || str(arg.role) != role ||
        arg.dtype != result.dtype || arg.shape != result.shape)
      fail(what + " does not match argument " +
           std::to_string(result.argument) + " (" + str(arg.role) + " '" +
           str(arg.name) + "')");
    if (result.region != arg.region || result.offset != arg.offset)
      fail(what + " is not written in place into its argument's slot");
  }
  if (losses != 1)
    fail("the step has " + std::to_string(losses) +
         " loss results; exactly one is expected");
  for (size_t i = 0; i < program.constants.size(); ++i) {
    const ConstantSpec &c = program.constants[i];
    const std::string what = "constant " + std::to_string(i);
    if (!c.data)
      fail(what + " has no data");
    checkSlot(what, Region::Persistent, c.offset, slotBytes(c.dtype, c.shape),
              program);
  }
}

size_t lossResult(const ProgramSpec &program) {
  for (size_t i = 0; i < program.results.size(); ++i)
    if (std::string(program.results[i].role) == "loss")
      return i;
  fail("the step has no loss result");
}

} // namespace remat::rt::harness
