#include "rules/sexpr.h"

#include <fmt/format.h>

#include "core/error.h"

namespace graphsub::rules {

std::string_view SExpr::head() const {
  if (kind != Kind::List || items.empty() || !items[0].is_atom()) return {};
  return items[0].text;
}

std::string location_str(const SourceLocation& loc) {
  return fmt::format("{}:{}:{}", loc.file.empty() ? "<text>" : loc.file, loc.line, loc.column);
}

void fail_at(const SourceLocation& loc, const std::string& message) {
  throw Error(fmt::format("{}: {}", location_str(loc), message));
}

namespace {

class Reader {
 public:
  Reader(std::string_view text, const std::string& file) : text_(text), file_(file) {}

  std::vector<SExpr> read_all() {
    std::vector<SExpr> out;
    skip_space();
    while (pos_ < text_.size()) {
      if (text_[pos_] == ')') fail_at(here(), "unexpected ')' with no open '('");
      out.push_back(read_one());
      skip_space();
    }
    return out;
  }

 private:
  SourceLocation here() const { return {file_, line_, col_}; }

  void advance() {
    if (text_[pos_] == '\n') {
      ++line_;
      col_ = 1;
    } else {
      ++col_;
    }
    ++pos_;
  }

  void skip_space() {
    while (pos_ < text_.size()) {
      char c = text_[pos_];
      if (c == ';') {
        while (pos_ < text_.size() && text_[pos_] != '\n') advance();
      } else if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
        advance();
      } else {
        return;
      }
    }
  }

  static bool is_delim(char c) {
    return c == '(' || c == ')' || c == ';' || c == '"' || c == ' ' || c == '\t' || c == '\n' ||
           c == '\r';
  }

  SExpr read_one() {
    SExpr e;
    e.loc = here();
    char c = text_[pos_];
    if (c == '(') {
      // Checked before descending: the reader itself recurses once per level.
      if (depth_ >= kMaxNesting)
        fail_at(e.loc, fmt::format("lists nested more than {} deep (the limit of the rule "
                                   "language; a real rule nests fewer than 10)",
                                   kMaxNesting));
      ++depth_;
      e.kind = SExpr::Kind::List;
      advance();
      skip_space();
      while (true) {
        if (pos_ >= text_.size())
          fail_at(e.loc, "expected ')' to close this '(' before the end of the file");
        if (text_[pos_] == ')') {
          advance();
          --depth_;
          return e;
        }
        e.items.push_back(read_one());
        skip_space();
      }
    }
    if (c == '"') {
      e.kind = SExpr::Kind::String;
      advance();
      while (true) {
        if (pos_ >= text_.size() || text_[pos_] == '\n')
          fail_at(e.loc, "expected '\"' to close this string on the same line");
        char d = text_[pos_];
        if (d == '"') {
          advance();
          return e;
        }
        if (d == '\\') {
          advance();
          if (pos_ >= text_.size()) fail_at(here(), "expected a character after '\\'");
          d = text_[pos_];
        }
        e.text += d;
        advance();
      }
    }
    while (pos_ < text_.size() && !is_delim(text_[pos_])) {
      e.text += text_[pos_];
      advance();
    }
    return e;
  }

  std::string_view text_;
  const std::string& file_;
  size_t pos_ = 0;
  int line_ = 1;
  int col_ = 1;
  int depth_ = 0;  // lists open at pos_
};

}  // namespace

std::vector<SExpr> read_sexprs(std::string_view text, const std::string& file) {
  return Reader(text, file).read_all();
}

}  // namespace graphsub::rules
