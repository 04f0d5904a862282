//===- Json.h - a small strict JSON reader for the profiler tests ---------===//
//
// RFC 8259 values into a tree; parse() fails (with the byte offset) on
// anything that is not exactly one valid JSON value: what a trace viewer's
// JSON.parse would reject, this rejects. Test code only.
//
//===----------------------------------------------------------------------===//
#ifndef NNCC_TEST_RUNTIME_JSON_H
#define NNCC_TEST_RUNTIME_JSON_H

#include <cstdint>
#include <cstdlib>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace nncc::test {

struct Json {
  enum Kind { Null, Bool, Number, String, Array, Object } kind = Null;
  bool boolean = false;
  double number = 0;
  std::string string;
  std::vector<Json> array;
  std::map<std::string, Json> object;

  bool has(const std::string &key) const { return kind == Object && object.count(key); }
  const Json &operator[](const std::string &key) const {
    static const Json null;
    auto it = object.find(key);
    return it == object.end() ? null : it->second;
  }

  /// Parses `text`; on failure returns false and says where in *error.
  static bool parse(const std::string &text, Json *out, std::string *error) {
    Parser p{text, 0, {}};
    bool ok = p.value(out, 0);
    if (ok) {
      p.space();
      if (p.pos != text.size()) {
        p.fail("trailing characters");
        ok = false;
      }
    }
    if (!ok)
      *error = p.error;
    return ok;
  }

private:
  struct Parser {
    const std::string &s;
    size_t pos;
    std::string error;

    bool fail(const std::string &what) {
      if (error.empty())
        error = what + " at byte " + std::to_string(pos);
      return false;
    }
    void space() {
      while (pos < s.size() && (s[pos] == ' ' || s[pos] == '\t' || s[pos] == '\n' || s[pos] == '\r'))
        ++pos;
    }
    bool literal(const char *word) {
      size_t n = std::char_traits<char>::length(word);
      if (s.compare(pos, n, word) != 0)
        return fail("bad literal");
      pos += n;
      return true;
    }
    bool hex4(unsigned *out) {
      if (pos + 4 > s.size())
        return fail("short \\u escape");
      *out = 0;
      for (int i = 0; i < 4; ++i) {
        char c = s[pos++];
        unsigned d = c >= '0' && c <= '9'   ? c - '0'
                     : c >= 'a' && c <= 'f' ? c - 'a' + 10
                     : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                            : 16;
        if (d == 16)
          return fail("bad \\u escape");
        *out = *out * 16 + d;
      }
      return true;
    }
    static void utf8(unsigned cp, std::string *out) {
      if (cp < 0x80) {
        *out += char(cp);
      } else if (cp < 0x800) {
        *out += char(0xC0 | (cp >> 6));
        *out += char(0x80 | (cp & 0x3F));
      } else if (cp < 0x10000) {
        *out += char(0xE0 | (cp >> 12));
        *out += char(0x80 | ((cp >> 6) & 0x3F));
        *out += char(0x80 | (cp & 0x3F));
      } else {
        *out += char(0xF0 | (cp >> 18));
        *out += char(0x80 | ((cp >> 12) & 0x3F));
        *out += char(0x80 | ((cp >> 6) & 0x3F));
        *out += char(0x80 | (cp & 0x3F));
      }
    }
    bool string(std::string *out) {
      ++pos; // opening quote
      while (pos < s.size()) {
        unsigned char c = static_cast<unsigned char>(s[pos]);
        if (c == '"') {
          ++pos;
          return true;
        }
        if (c < 0x20)
          return fail("control character in string");
        if (c != '\\') {
          // UTF-8 must be well formed (a strict decoder rejects the file).
          size_t len = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
          if (len == 0 || pos + len > s.size())
            return fail("invalid UTF-8");
          for (size_t i = 1; i < len; ++i)
            if ((static_cast<unsigned char>(s[pos + i]) & 0xC0) != 0x80)
              return fail("invalid UTF-8");
          out->append(s, pos, len);
          pos += len;
          continue;
        }
        if (++pos >= s.size())
          return fail("unterminated escape");
        char e = s[pos++];
        switch (e) {
        case '"': *out += '"'; break;
        case '\\': *out += '\\'; break;
        case '/': *out += '/'; break;
        case 'b': *out += '\b'; break;
        case 'f': *out += '\f'; break;
        case 'n': *out += '\n'; break;
        case 'r': *out += '\r'; break;
        case 't': *out += '\t'; break;
        case 'u': {
          unsigned cp;
          if (!hex4(&cp))
            return false;
          if (cp >= 0xD800 && cp <= 0xDBFF) {
            unsigned lo;
            if (s.compare(pos, 2, "\\u") != 0)
              return fail("lone surrogate");
            pos += 2;
            if (!hex4(&lo) || lo < 0xDC00 || lo > 0xDFFF)
              return fail("bad surrogate pair");
            cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
          } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
            return fail("lone surrogate");
          }
          utf8(cp, out);
          break;
        }
        default:
          return fail("bad escape");
        }
      }
      return fail("unterminated string");
    }
    bool number(double *out) {
      size_t start = pos;
      if (s[pos] == '-')
        ++pos;
      auto digits = [&] {
        size_t d = pos;
        while (pos < s.size() && s[pos] >= '0' && s[pos] <= '9')
          ++pos;
        return pos - d;
      };
      if (pos < s.size() && s[pos] == '0')
        ++pos;
      else if (digits() == 0)
        return fail("bad number");
      if (pos < s.size() && s[pos] == '.') {
        ++pos;
        if (digits() == 0)
          return fail("bad number");
      }
      if (pos < s.size() && (s[pos] == 'e' || s[pos] == 'E')) {
        ++pos;
        if (pos < s.size() && (s[pos] == '+' || s[pos] == '-'))
          ++pos;
        if (digits() == 0)
          return fail("bad number");
      }
      *out = std::strtod(s.substr(start, pos - start).c_str(), nullptr);
      return true;
    }
    bool value(Json *out, int depth) {
      if (depth > 64)
        return fail("nested too deeply");
      space();
      if (pos >= s.size())
        return fail("unexpected end");
      char c = s[pos];
      if (c == '{') {
        out->kind = Object;
        ++pos;
        space();
        if (pos < s.size() && s[pos] == '}') {
          ++pos;
          return true;
        }
        for (;;) {
          space();
          if (pos >= s.size() || s[pos] != '"')
            return fail("expected a key");
          std::string key;
          if (!string(&key))
            return false;
          space();
          if (pos >= s.size() || s[pos] != ':')
            return fail("expected ':'");
          ++pos;
          Json v;
          if (!value(&v, depth + 1))
            return false;
          out->object[key] = std::move(v);
          space();
          if (pos < s.size() && s[pos] == ',') {
            ++pos;
            continue;
          }
          if (pos < s.size() && s[pos] == '}') {
            ++pos;
            return true;
          }
          return fail("expected ',' or '}'");
        }
      }
      if (c == '[') {
        out->kind = Array;
        ++pos;
        space();
        if (pos < s.size() && s[pos] == ']') {
          ++pos;
          return true;
        }
        for (;;) {
          Json v;
          if (!value(&v, depth + 1))
            return false;
          out->array.push_back(std::move(v));
          space();
          if (pos < s.size() && s[pos] == ',') {
            ++pos;
            continue;
          }
          if (pos < s.size() && s[pos] == ']') {
            ++pos;
            return true;
          }
          return fail("expected ',' or ']'");
        }
      }
      if (c == '"') {
        out->kind = String;
        return string(&out->string);
      }
      if (c == 't' || c == 'f') {
        out->kind = Bool;
        out->boolean = c == 't';
        return literal(c == 't' ? "true" : "false");
      }
      if (c == 'n')
        return literal("null");
      out->kind = Number;
      return number(&out->number);
    }
  };
};

} // namespace nncc::test

#endif // NNCC_TEST_RUNTIME_JSON_H
