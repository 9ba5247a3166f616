//===- PickleWriter.h - Python pickles of dicts, lists and scalars -*- C++ -*-===//
//
// Writes Python pickle protocol 2 as a stream: nested dicts, lists and
// tuples of str, int, float, bool and None, which is all a PyTorch memory
// snapshot holds. Containers are written as EMPTY_DICT/EMPTY_LIST + MARK ...
// SETITEMS/APPENDS, so nothing is buffered and no memo is needed. Opcodes:
// Python's Lib/pickletools.py.
//
//===----------------------------------------------------------------------===//

#ifndef REMAT_TARGET_PLANVIEWS_PICKLEWRITER_H
#define REMAT_TARGET_PLANVIEWS_PICKLEWRITER_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <cstring>

namespace remat {

class PickleWriter {
public:
  explicit PickleWriter(llvm::raw_ostream &os) : os(os) {
    os << '\x80' << '\x02'; // PROTO 2
  }
  /// Ends the pickle (STOP) after its one top-level value.
  void finish() { os << '.'; }

  template <typename Body> void dict(Body body) {
    os << '}' << '('; // EMPTY_DICT, MARK
    body();           // key, value, key, value, ...
    os << 'u';        // SETITEMS
  }
  template <typename Body> void list(Body body) {
    os << ']' << '('; // EMPTY_LIST, MARK
    body();
    os << 'e'; // APPENDS
  }
  template <typename Body> void tuple(Body body) {
    os << '('; // MARK
    body();
    os << 't'; // TUPLE
  }

  void value(llvm::StringRef text) {
    os << 'X'; // BINUNICODE: 4-byte little-endian length, UTF-8
    writeLittleEndian(static_cast<uint64_t>(text.size()), 4);
    os << text;
  }
  void value(const char *text) { value(llvm::StringRef(text)); }
  void value(bool b) { os << (b ? '\x88' : '\x89'); } // NEWTRUE / NEWFALSE
  void none() { os << 'N'; }
  void value(int64_t v) {
    if (v >= INT32_MIN && v <= INT32_MAX) {
      os << 'J'; // BININT: 4-byte signed little-endian
      writeLittleEndian(static_cast<uint64_t>(v), 4);
      return;
    }
    os << '\x8a' << '\x08'; // LONG1 with 8 bytes, two's complement
    writeLittleEndian(static_cast<uint64_t>(v), 8);
  }
  void value(int v) { value(static_cast<int64_t>(v)); }
  void value(double v) {
    os << 'G'; // BINFLOAT: 8-byte big-endian IEEE double
    uint64_t bits;
    std::memcpy(&bits, &v, sizeof bits);
    for (int shift = 56; shift >= 0; shift -= 8)
      os << static_cast<char>((bits >> shift) & 0xff);
  }

  /// A dict entry: key then value.
  template <typename T> void entry(llvm::StringRef key, const T &v) {
    value(key);
    value(v);
  }

private:
  void writeLittleEndian(uint64_t v, int bytes) {
    for (int i = 0; i < bytes; ++i)
      os << static_cast<char>((v >> (8 * i)) & 0xff);
  }

  llvm::raw_ostream &os;
};

} // namespace remat

#endif // REMAT_TARGET_PLANVIEWS_PICKLEWRITER_H
