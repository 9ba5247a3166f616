//===- ProtoWire.h - The protobuf wire format, read and written -*- C++ -*-===//
//
// Just enough of protobuf's encoding (varints, fixed32/64, length-delimited
// fields) to read and write the few ONNX messages the training executable
// touches (runtime/io/OnnxWire.cpp), so that the executable needs neither
// libprotobuf nor ONNX's generated classes.
// https://protobuf.dev/programming-guides/encoding/
//
//===----------------------------------------------------------------------===//

#ifndef REMAT_RUNTIME_IO_PROTOWIRE_H
#define REMAT_RUNTIME_IO_PROTOWIRE_H

#include <cstdint>
#include <string>
#include <string_view>

namespace remat::rt::wire {

enum WireType : int { Varint = 0, Fixed64 = 1, Bytes = 2, Fixed32 = 5 };

/// One field of a message: its number, wire type, its value (a varint or
/// fixed value in `number`, a length-delimited payload in `bytes`) and the
/// field's whole encoding (key included), for copying it unchanged.
struct Field {
  uint32_t id = 0;
  WireType type = Varint;
  uint64_t number = 0;
  std::string_view bytes;
  std::string_view encoded;
};

/// Walks the fields of one serialized message. Malformed input (a
/// truncated field, an unknown or group wire type) throws RuntimeError
/// whose message starts with `what`.
class Reader {
public:
  Reader(std::string_view message, std::string what)
      : data_(message), what_(std::move(what)) {}
  /// The next field, or false at the end of the message.
  bool next(Field &field);
  /// Decodes one varint of a packed repeated field; advances `pos`.
  uint64_t varintAt(std::string_view packed, size_t &pos) const;

private:
  [[noreturn]] void malformed(const std::string &why) const;
  std::string_view data_;
  size_t pos_ = 0;
  std::string what_;
};

/// Appends fields to `out` in the order called. protobuf's serializers
/// write fields in ascending number order; callers do too, so that what
/// they write is byte-identical to protobuf's output.
void putVarint(std::string &out, uint64_t value);
void putKey(std::string &out, uint32_t id, WireType type);
void putVarintField(std::string &out, uint32_t id, uint64_t value);
void putBytesField(std::string &out, uint32_t id, std::string_view bytes);

} // namespace remat::rt::wire

#endif // REMAT_RUNTIME_IO_PROTOWIRE_H
