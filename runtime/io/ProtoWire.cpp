//===- ProtoWire.cpp - The protobuf wire format, read and written ---------===//

#include "ProtoWire.h"

#include "remat/runtime/Tensor.h"

#include <cstring>

namespace remat::rt::wire {

void Reader::malformed(const std::string &why) const {
  throw RuntimeError(what_ + ": malformed protobuf at byte " +
                     std::to_string(pos_) + ": " + why);
}

uint64_t Reader::varintAt(std::string_view bytes, size_t &pos) const {
  uint64_t value = 0;
  for (int shift = 0; shift < 64; shift += 7) {
    if (pos >= bytes.size())
      malformed("truncated varint");
    const auto byte = static_cast<uint8_t>(bytes[pos++]);
    value |= static_cast<uint64_t>(byte & 0x7F) << shift;
    if (!(byte & 0x80))
      return value;
  }
  malformed("varint longer than 10 bytes");
}

bool Reader::next(Field &field) {
  if (pos_ >= data_.size())
    return false;
  const size_t start = pos_;
  const uint64_t key = varintAt(data_, pos_);
  field.id = static_cast<uint32_t>(key >> 3);
  if (field.id == 0)
    malformed("field number 0");
  field.bytes = {};
  field.number = 0;
  switch (key & 7) {
  case Varint:
    field.type = Varint;
    field.number = varintAt(data_, pos_);
    break;
  case Fixed64:
  case Fixed32: {
    const size_t width = (key & 7) == Fixed64 ? 8 : 4;
    field.type = (key & 7) == Fixed64 ? Fixed64 : Fixed32;
    if (data_.size() - pos_ < width)
      malformed("truncated fixed-width field");
    std::memcpy(&field.number, data_.data() + pos_, width); // little-endian
    pos_ += width;
    break;
  }
  case Bytes: {
    field.type = Bytes;
    const uint64_t length = varintAt(data_, pos_);
    if (length > data_.size() - pos_)
      malformed("field " + std::to_string(field.id) + " runs past the end (" +
                std::to_string(length) + " bytes)");
    field.bytes = data_.substr(pos_, length);
    pos_ += length;
    break;
  }
  default:
    malformed("unsupported wire type " + std::to_string(key & 7));
  }
  field.encoded = data_.substr(start, pos_ - start);
  return true;
}

void putVarint(std::string &out, uint64_t value) {
  while (value >= 0x80) {
    out.push_back(static_cast<char>((value & 0x7F) | 0x80));
    value >>= 7;
  }
  out.push_back(static_cast<char>(value));
}

void putKey(std::string &out, uint32_t id, WireType type) {
  putVarint(out, (static_cast<uint64_t>(id) << 3) | type);
}

void putVarintField(std::string &out, uint32_t id, uint64_t value) {
  putKey(out, id, Varint);
  putVarint(out, value);
}

void putBytesField(std::string &out, uint32_t id, std::string_view bytes) {
  putKey(out, id, Bytes);
  putVarint(out, bytes.size());
  out.append(bytes);
}

} // namespace remat::rt::wire
