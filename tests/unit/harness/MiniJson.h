//===- MiniJson.h - A strict little JSON reader for the harness test -*- C++ -*-===//
//
// The harness's --json output must be valid JSON that any reader accepts.
// This reader follows RFC 8259 strictly (no NaN, no trailing commas, no
// comments) and is independent of the harness's writer. LLVM's JSON parser
// would do, but linking LLVMSupport alone fails with Debian's LLVM CMake
// package (its zstd dependency is not found), so the test carries its own.
//
//===----------------------------------------------------------------------===//

#ifndef REMAT_TESTS_UNIT_HARNESS_MINIJSON_H
#define REMAT_TESTS_UNIT_HARNESS_MINIJSON_H

#include <cctype>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace remat::test::json {

struct Value {
  enum Kind { Null, Bool, Number, String, Array, Object } kind = Null;
  bool boolean = false;
  double number = 0;
  std::string string;
  std::vector<Value> array;
  std::map<std::string, Value> object;

  const Value *get(const std::string &key) const {
    auto it = object.find(key);
    return it == object.end() ? nullptr : &it->second;
  }
};

/// Parses `text` (one value, surrounding whitespace allowed); throws
/// std::runtime_error with the offset of the first error.
class Parser {
public:
  explicit Parser(const std::string &text) : text_(text) {}

  Value parseDocument() {
    Value value = parseValue();
    skipSpace();
    if (pos_ != text_.size())
      fail("trailing characters");
    return value;
  }

private:
  [[noreturn]] void fail(const std::string &what) {
    throw std::runtime_error("JSON: " + what + " at offset " +
                             std::to_string(pos_));
  }
  void skipSpace() {
    while (pos_ < text_.size() && std::strchr(" \t\r\n", text_[pos_]))
      ++pos_;
  }
  bool consume(const char *word) {
    const size_t n = std::strlen(word);
    if (text_.compare(pos_, n, word) != 0)
      return false;
    pos_ += n;
    return true;
  }
  void expect(char c) {
    skipSpace();
    if (pos_ >= text_.size() || text_[pos_] != c)
      fail(std::string("expected '") + c + "'");
    ++pos_;
  }

  std::string parseString() {
    expect('"');
    std::string out;
    while (true) {
      if (pos_ >= text_.size())
        fail("unterminated string");
      const char c = text_[pos_++];
      if (c == '"')
        return out;
      if (static_cast<unsigned char>(c) < 0x20)
        fail("control character in string");
      if (c != '\\') {
        out += c;
        continue;
      }
      if (pos_ >= text_.size())
        fail("unterminated escape");
      const char e = text_[pos_++];
      switch (e) {
      case '"': case '\\': case '/': out += e; break;
      case 'b': out += '\b'; break;
      case 'f': out += '\f'; break;
      case 'n': out += '\n'; break;
      case 'r': out += '\r'; break;
      case 't': out += '\t'; break;
      case 'u': {
        if (pos_ + 4 > text_.size())
          fail("short \\u escape");
        const unsigned code = std::stoul(text_.substr(pos_, 4), nullptr, 16);
        pos_ += 4;
        out += code < 0x80 ? static_cast<char>(code) : '?';
        break;
      }
      default: fail("bad escape");
      }
    }
  }

  double parseNumber() {
    // RFC 8259: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
    const size_t start = pos_;
    auto digits = [&] {
      const size_t from = pos_;
      while (pos_ < text_.size() && std::isdigit((unsigned char)text_[pos_]))
        ++pos_;
      if (pos_ == from)
        fail("expected a digit");
    };
    if (text_[pos_] == '-')
      ++pos_;
    if (pos_ < text_.size() && text_[pos_] == '0')
      ++pos_;
    else
      digits();
    if (pos_ < text_.size() && text_[pos_] == '.')
      ++pos_, digits();
    if (pos_ < text_.size() && (text_[pos_] == 'e' || text_[pos_] == 'E')) {
      ++pos_;
      if (pos_ < text_.size() && (text_[pos_] == '+' || text_[pos_] == '-'))
        ++pos_;
      digits();
    }
    return std::strtod(text_.substr(start, pos_ - start).c_str(), nullptr);
  }

  Value parseValue() {
    skipSpace();
    if (pos_ >= text_.size())
      fail("unexpected end");
    Value v;
    const char c = text_[pos_];
    if (c == '{') {
      v.kind = Value::Object;
      ++pos_;
      skipSpace();
      if (pos_ < text_.size() && text_[pos_] == '}')
        return ++pos_, v;
      while (true) {
        skipSpace();
        std::string key = parseString();
        expect(':');
        if (v.object.count(key))
          fail("duplicate key '" + key + "'");
        v.object[key] = parseValue();
        skipSpace();
        if (pos_ < text_.size() && text_[pos_] == ',') {
          ++pos_;
          continue;
        }
        expect('}');
        return v;
      }
    }
    if (c == '[') {
      v.kind = Value::Array;
      ++pos_;
      skipSpace();
      if (pos_ < text_.size() && text_[pos_] == ']')
        return ++pos_, v;
      while (true) {
        v.array.push_back(parseValue());
        skipSpace();
        if (pos_ < text_.size() && text_[pos_] == ',') {
          ++pos_;
          continue;
        }
        expect(']');
        return v;
      }
    }
    if (c == '"') {
      v.kind = Value::String;
      v.string = parseString();
      return v;
    }
    if (consume("true") || consume("false")) {
      v.kind = Value::Bool;
      v.boolean = text_[pos_ - 1] == 'e' && text_[pos_ - 2] == 'u'; // true
      return v;
    }
    if (consume("null"))
      return v;
    if (c == '-' || std::isdigit(static_cast<unsigned char>(c))) {
      v.kind = Value::Number;
      v.number = parseNumber();
      return v;
    }
    fail(std::string("unexpected '") + c + "'");
  }

  const std::string &text_;
  size_t pos_ = 0;
};

inline Value parse(const std::string &text) {
  return Parser(text).parseDocument();
}

} // namespace remat::test::json

#endif // REMAT_TESTS_UNIT_HARNESS_MINIJSON_H
