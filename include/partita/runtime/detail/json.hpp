#pragma once
/// A small JSON reader for safetensors headers.
#include <charconv>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include "partita/core/error.hpp"

// A small strict JSON reader for safetensors headers. Headers come from untrusted files, so it
// bounds nesting depth, validates UTF-8 and never reads past its input.
namespace partita::detail::json {

inline constexpr int max_depth = 64;

struct member;

struct value {
  enum class kind : std::uint8_t { null, boolean, integer, number, string, array, object };
  kind type = kind::null;
  bool boolean = false;
  std::int64_t integer = 0;    // when type is integer
  std::string text;            // string contents, or the source spelling of a number
  std::vector<value> items;    // array elements
  std::vector<member> members; // object members in source order, duplicates kept
  std::size_t offset = 0;      // where the value starts in the input
};

struct member {
  std::string key;
  value val;
};

// Thrown for input that is not JSON; `offset` is the byte where reading stopped.
class syntax_error : public error {
 public:
  syntax_error(std::size_t at, const std::string& what)
      : error("byte " + std::to_string(at) + ": " + what), offset(at), reason(what) {}
  std::size_t offset;
  std::string reason;
};

// Length of the well-formed UTF-8 sequence at the start of `s`, or 0. Rejects overlong forms,
// surrogates and code points above U+10FFFF, as RFC 3629 requires.
constexpr std::size_t utf8_sequence_length(std::string_view s) {
  if (s.empty()) return 0;
  const auto b0 = static_cast<unsigned char>(s[0]);
  if (b0 < 0x80) return 1;
  std::size_t len = 0;
  unsigned char lo = 0x80, hi = 0xBF;  // allowed range of the second byte
  if (b0 >= 0xC2 && b0 <= 0xDF) len = 2;
  else if (b0 == 0xE0) len = 3, lo = 0xA0;
  else if (b0 >= 0xE1 && b0 <= 0xEC) len = 3;
  else if (b0 == 0xED) len = 3, hi = 0x9F;
  else if (b0 >= 0xEE && b0 <= 0xEF) len = 3;
  else if (b0 == 0xF0) len = 4, lo = 0x90;
  else if (b0 >= 0xF1 && b0 <= 0xF3) len = 4;
  else if (b0 == 0xF4) len = 4, hi = 0x8F;
  else return 0;
  if (s.size() < len) return 0;
  for (std::size_t i = 1; i < len; ++i) {
    const auto b = static_cast<unsigned char>(s[i]);
    if (b < (i == 1 ? lo : 0x80) || b > (i == 1 ? hi : 0xBF)) return 0;
  }
  return len;
}

// True when all of `s` is well-formed UTF-8.
constexpr bool is_utf8(std::string_view s) {
  while (!s.empty()) {
    const std::size_t n = utf8_sequence_length(s);
    if (n == 0) return false;
    s.remove_prefix(n);
  }
  return true;
}

class parser {
 public:
  explicit parser(std::string_view in) : in_(in) {}

  value parse_document() {
    skip_space();
    value v = parse_value(0);
    skip_space();
    if (pos_ != in_.size()) fail("unexpected " + describe_here() + " after the JSON value");
    return v;
  }

 private:
  [[noreturn]] void fail(const std::string& what) const { detail::raise(syntax_error(pos_, what)); }
  [[noreturn]] static void fail_at(std::size_t at, const std::string& what) { detail::raise(syntax_error(at, what)); }

  bool at_end() const { return pos_ >= in_.size(); }
  char peek() const { return in_[pos_]; }

  std::string describe_here() const {
    if (at_end()) return "end of input";
    const auto c = static_cast<unsigned char>(peek());
    if (c >= 0x21 && c < 0x7F) return std::string("'") + static_cast<char>(c) + "'";
    static constexpr char hex[] = "0123456789abcdef";
    return std::string("byte 0x") + hex[c >> 4] + hex[c & 15];
  }

  void skip_space() {
    while (!at_end() && (peek() == ' ' || peek() == '\t' || peek() == '\n' || peek() == '\r')) ++pos_;
  }

  void expect(char c) {
    if (at_end() || peek() != c) fail(std::string("expected '") + c + "', found " + describe_here());
    ++pos_;
  }

  value parse_value(int depth) {
    if (at_end()) fail("unexpected end of input, expected a value");
    value v;
    v.offset = pos_;
    switch (peek()) {
      case '{': parse_object(v, depth + 1); break;
      case '[': parse_array(v, depth + 1); break;
      case '"':
        v.type = value::kind::string;
        v.text = parse_string();
        break;
      case 't':
        parse_literal("true");
        v.type = value::kind::boolean;
        v.boolean = true;
        break;
      case 'f':
        parse_literal("false");
        v.type = value::kind::boolean;
        break;
      case 'n': parse_literal("null"); break;
      default:
        if (peek() == '-' || (peek() >= '0' && peek() <= '9')) parse_number(v);
        else fail("unexpected " + describe_here() + ", expected a value");
    }
    return v;
  }

  void parse_literal(std::string_view word) {
    if (in_.substr(pos_, word.size()) != word) fail("invalid literal, expected '" + std::string(word) + "'");
    pos_ += word.size();
  }

  void check_depth(int depth) const {
    if (depth > max_depth) fail("nesting deeper than " + std::to_string(max_depth) + " levels");
  }

  void parse_object(value& v, int depth) {
    check_depth(depth);
    v.type = value::kind::object;
    ++pos_;  // '{'
    skip_space();
    if (!at_end() && peek() == '}') {
      ++pos_;
      return;
    }
    for (;;) {
      skip_space();
      if (at_end() || peek() != '"') fail("expected a string key, found " + describe_here());
      std::string key = parse_string();
      skip_space();
      expect(':');
      skip_space();
      value child = parse_value(depth);
      v.members.push_back(member{std::move(key), std::move(child)});
      skip_space();
      if (!at_end() && peek() == ',') {
        ++pos_;
        continue;
      }
      expect('}');
      return;
    }
  }

  void parse_array(value& v, int depth) {
    check_depth(depth);
    v.type = value::kind::array;
    ++pos_;  // '['
    skip_space();
    if (!at_end() && peek() == ']') {
      ++pos_;
      return;
    }
    for (;;) {
      skip_space();
      v.items.push_back(parse_value(depth));
      skip_space();
      if (!at_end() && peek() == ',') {
        ++pos_;
        continue;
      }
      expect(']');
      return;
    }
  }

  // Four hex digits after "\u".
  unsigned parse_hex4() {
    unsigned cp = 0;
    for (int i = 0; i < 4; ++i) {
      if (at_end()) fail("unterminated \\u escape");
      const char c = peek();
      unsigned d = 0;
      if (c >= '0' && c <= '9') d = static_cast<unsigned>(c - '0');
      else if (c >= 'a' && c <= 'f') d = static_cast<unsigned>(c - 'a' + 10);
      else if (c >= 'A' && c <= 'F') d = static_cast<unsigned>(c - 'A' + 10);
      else fail("invalid hex digit " + describe_here() + " in \\u escape");
      cp = cp * 16 + d;
      ++pos_;
    }
    return cp;
  }

  static void append_utf8(std::string& out, unsigned cp) {
    if (cp < 0x80) {
      out += static_cast<char>(cp);
    } else if (cp < 0x800) {
      out += static_cast<char>(0xC0 | (cp >> 6));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
      out += static_cast<char>(0xE0 | (cp >> 12));
      out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    } else {
      out += static_cast<char>(0xF0 | (cp >> 18));
      out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
      out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    }
  }

  // After a backslash; `start` is the backslash, so that surrogate errors point at the escape.
  void parse_escape(std::string& out) {
    const std::size_t start = pos_ - 1;
    if (at_end()) fail("unterminated escape");
    const char c = peek();
    const char simple = c == '"' ? '"' : c == '\\' ? '\\' : c == '/' ? '/' : c == 'b' ? '\b'
                      : c == 'f' ? '\f' : c == 'n' ? '\n' : c == 'r' ? '\r' : c == 't' ? '\t' : '\0';
    if (simple != '\0') {
      out += simple;
      ++pos_;
      return;
    }
    if (c != 'u') fail("invalid escape " + describe_here());
    ++pos_;
    unsigned cp = parse_hex4();
    if (cp >= 0xDC00 && cp <= 0xDFFF) fail_at(start, "lone low surrogate in \\u escape");
    if (cp >= 0xD800 && cp <= 0xDBFF) {
      if (in_.substr(pos_, 2) != "\\u") fail_at(start, "high surrogate not followed by a low one");
      pos_ += 2;
      const unsigned low = parse_hex4();
      if (low < 0xDC00 || low > 0xDFFF) fail_at(start, "high surrogate not followed by a low one");
      cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
    }
    append_utf8(out, cp);
  }

  std::string parse_string() {
    ++pos_;  // opening quote
    std::string out;
    for (;;) {
      if (at_end()) fail("unterminated string");
      const char c = peek();
      const auto u = static_cast<unsigned char>(c);
      if (c == '"') {
        ++pos_;
        return out;
      }
      if (c == '\\') {
        ++pos_;
        parse_escape(out);
      } else if (u < 0x20) {
        fail("control character " + describe_here() + " in string");
      } else if (u < 0x80) {
        out += c;
        ++pos_;
      } else {
        const std::size_t n = utf8_sequence_length(in_.substr(pos_));
        if (n == 0) fail("invalid UTF-8 in string");
        out.append(in_.substr(pos_, n));
        pos_ += n;
      }
    }
  }

  bool digit_here() const { return !at_end() && peek() >= '0' && peek() <= '9'; }

  // Integers that fit in 64 bits become `integer`; fractions, exponents and larger integers
  // stay `number`, with their spelling, so that callers can reject them by name.
  void parse_number(value& v) {
    const std::size_t start = pos_;
    bool integral = true;
    if (peek() == '-') ++pos_;
    if (!digit_here()) fail("expected a digit, found " + describe_here());
    if (peek() == '0') {
      ++pos_;
      if (digit_here()) fail("leading zero in number");
    } else {
      while (digit_here()) ++pos_;
    }
    if (!at_end() && peek() == '.') {
      integral = false;
      ++pos_;
      if (!digit_here()) fail("expected a digit after '.', found " + describe_here());
      while (digit_here()) ++pos_;
    }
    if (!at_end() && (peek() == 'e' || peek() == 'E')) {
      integral = false;
      ++pos_;
      if (!at_end() && (peek() == '+' || peek() == '-')) ++pos_;
      if (!digit_here()) fail("expected a digit in exponent, found " + describe_here());
      while (digit_here()) ++pos_;
    }
    v.text = std::string(in_.substr(start, pos_ - start));
    v.type = value::kind::number;
    if (integral) {
      std::int64_t n = 0;
      const auto [end, ec] = std::from_chars(v.text.data(), v.text.data() + v.text.size(), n);
      if (ec == std::errc{} && end == v.text.data() + v.text.size()) {
        v.type = value::kind::integer;
        v.integer = n;
      }
    }
  }

  std::string_view in_;
  std::size_t pos_ = 0;
};

// `s` as a JSON string literal, escaped the way serde_json writes it so that headers match the
// reference implementation byte for byte.
inline std::string quote(std::string_view s) {
  static constexpr char hex[] = "0123456789abcdef";
  std::string r = "\"";
  for (char c : s) {
    const auto u = static_cast<unsigned char>(c);
    switch (c) {
      case '"': r += "\\\""; break;
      case '\\': r += "\\\\"; break;
      case '\b': r += "\\b"; break;
      case '\f': r += "\\f"; break;
      case '\n': r += "\\n"; break;
      case '\r': r += "\\r"; break;
      case '\t': r += "\\t"; break;
      default:
        if (u < 0x20) {
          r += "\\u00";
          r += hex[u >> 4];
          r += hex[u & 15];
        } else {
          r += c;
        }
    }
  }
  return r + "\"";
}

// Parses one JSON document that must span all of `text`, surrounding whitespace aside.
inline value parse(std::string_view text) { return parser(text).parse_document(); }

}  // namespace partita::detail::json
