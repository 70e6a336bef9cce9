#include "common/util/input.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <set>
#include <stdexcept>

#include "common/util/sys.h"

namespace wb {
namespace {

[[noreturn]] void refuse_input(const std::string& where, const std::string& why) {
  throw std::runtime_error(where + ": " + why);
}

// The limit in bytes: kDefaultMaxInputMiB, or WAKEBENCH_MAX_INPUT_MIB when set.
std::size_t max_input_bytes() {
  constexpr unsigned long kMaxMiB = 1ul << 20;  // 1 TiB
  const char* env = std::getenv(kMaxInputEnv);
  if (env == nullptr) return kDefaultMaxInputMiB << 20;
  char* end = nullptr;
  errno = 0;
  const unsigned long mib = std::strtoul(env, &end, 10);
  if (!std::isdigit(static_cast<unsigned char>(*env)) || *end != '\0' || errno != 0 || mib == 0 ||
      mib > kMaxMiB)
    throw std::runtime_error(std::string(kMaxInputEnv) + " " + json_text(env) +
                             ": expected a whole number of MiB in [1, " + std::to_string(kMaxMiB) +
                             "]");
  return static_cast<std::size_t>(mib) << 20;
}

// "is larger than the input limit of 256 MiB (WAKEBENCH_MAX_INPUT_MIB raises it)".
std::string over_limit(const std::string& is_larger) {
  return is_larger + " than the input limit of " + std::to_string(max_input_bytes() >> 20) +
         " MiB (" + kMaxInputEnv + " raises it)";
}

// Waits until `fd` (stdin left non-blocking by whoever started us) has data or its end.
void wait_readable(int fd) {
  pollfd p{fd, POLLIN, 0};
  while (poll(&p, 1, -1) < 0 && errno == EINTR) {
  }
}

// Everything `fd` holds up to its end, refused past the limit (a file that grows, /proc, stdin).
// Only stdin is waited for: a file whose read would block (tracefs' trace_pipe passes for a
// regular file) is refused, never waited on.
std::string read_all(int fd, std::size_t expected, const std::string& where, bool wait = false) {
  const std::size_t limit = max_input_bytes();
  std::string text;
  text.reserve(std::min(expected, limit));
  char buf[1 << 16];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0) {
      const int err = errno;
      if (err == EAGAIN && !wait)
        refuse_input(where, "its read would block (a pipe that passes for a file?): refused");
      if (err == EAGAIN)
        wait_readable(fd);
      else if (err != EINTR)
        refuse_input(where, std::string("read error: ") + std::strerror(err));
      continue;
    }
    if (n == 0) return text;
    if (text.size() + static_cast<std::size_t>(n) > limit)
      refuse_input(where, over_limit("is larger"));
    text.append(buf, static_cast<std::size_t>(n));
  }
}

// stdin, read once: a command that reads "-" again (search hashes its topology file) or is
// given "-" twice gets the same document.
std::string read_stdin(const std::string& where) {
  static std::optional<std::string> text;
  if (text) return *text;
  struct stat st {};
  if (fstat(STDIN_FILENO, &st) != 0)
    refuse_input(where, std::string("stdin: ") + std::strerror(errno));
  if (S_ISDIR(st.st_mode)) refuse_input(where, "stdin is a directory");
  text = read_all(STDIN_FILENO, S_ISREG(st.st_mode) ? static_cast<std::size_t>(st.st_size) : 0,
                  where, true);
  return *text;
}

}  // namespace

std::string read_input_file(const std::string& what, const std::string& path) {
  const std::string where = what + " " + path;
  if (path == "-") return read_stdin(where);
  const Fd fd(::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC));
  if (!fd) refuse_input(where, std::string("cannot open: ") + std::strerror(errno));
  struct stat st {};
  if (fstat(fd.get(), &st) != 0) refuse_input(where, std::string("fstat: ") + std::strerror(errno));
  if (!S_ISREG(st.st_mode))
    refuse_input(where, std::string("is ") + file_kind(st.st_mode) + ", not a regular file");
  if (static_cast<std::size_t>(st.st_size) > max_input_bytes())
    refuse_input(where, over_limit("is " + std::to_string(st.st_size) + " bytes, larger"));
  return read_all(fd.get(), static_cast<std::size_t>(st.st_size), where);
}

namespace {

// One line for a document nlohmann::json::parse refused (a parse_error, or an out_of_range such
// as the number 1e999), without nlohmann's "[json.exception...]" prefix.
std::string describe_json_error(const nlohmann::json::exception& e, size_t text_size) {
  std::string detail = e.what();
  if (const auto pos = detail.find("] "); pos != std::string::npos) detail.erase(0, pos + 2);
  if (const auto* p = dynamic_cast<const nlohmann::json::parse_error*>(&e)) {
    const bool truncated = p->byte >= text_size;
    return "invalid JSON at byte " + std::to_string(p->byte) +
           (truncated ? " (end of file: truncated?)" : "") + ": " + detail;
  }
  return "invalid JSON: " + detail;
}

// Where the arrays and objects of `text` first nest deeper than kMaxInputDepth, else npos. Exact
// for valid JSON; on invalid JSON the parser's error follows.
std::size_t json_too_deep_at(std::string_view text) {
  int depth = 0;
  bool in_string = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char ch = text[i];
    if (in_string) {
      if (ch == '\\')
        ++i;  // the escaped character
      else if (ch == '"')
        in_string = false;
    } else if (ch == '"') {
      in_string = true;
    } else if (ch == '[' || ch == '{') {
      if (++depth > kMaxInputDepth) return i;
    } else if (ch == ']' || ch == '}') {
      --depth;
    }
  }
  return std::string_view::npos;
}

// The end of the tag that starts at `from` (its '>', quoted values skipped), else npos.
std::size_t tag_end(std::string_view xml, std::size_t from) {
  char quote = 0;
  for (std::size_t i = from; i < xml.size(); ++i) {
    const char ch = xml[i];
    if (quote != 0) {
      if (ch == quote) quote = 0;
    } else if (ch == '"' || ch == '\'') {
      quote = ch;
    } else if (ch == '>') {
      return i;
    }
  }
  return std::string_view::npos;
}

}  // namespace

nlohmann::json parse_input_json(const std::string& text) {
  if (const std::size_t at = json_too_deep_at(text); at != std::string_view::npos)
    throw std::invalid_argument("invalid JSON at byte " + std::to_string(at) +
                                ": nested deeper than " + std::to_string(kMaxInputDepth) +
                                " levels");
  // Each open object's keys so far: a key twice in one object is refused (nlohmann keeps the
  // last, so a set could say one thing to a reader and another to a person).
  std::vector<std::set<std::string>> keys;
  const auto no_duplicate_keys = [&keys](int, nlohmann::json::parse_event_t event,
                                         nlohmann::json& parsed) {
    using Event = nlohmann::json::parse_event_t;
    if (event == Event::object_start) keys.emplace_back();
    if (event == Event::object_end) keys.pop_back();
    if (event == Event::key && !keys.back().insert(parsed.get<std::string>()).second)
      throw std::invalid_argument("invalid JSON: the key " + json_text(parsed.get<std::string>()) +
                                  " twice in one object");
    return true;
  };
  try {
    return nlohmann::json::parse(text, no_duplicate_keys);
  } catch (const nlohmann::json::exception& e) {
    throw std::invalid_argument(describe_json_error(e, text.size()));
  }
}

void check_xml_depth(std::string_view xml) {
  int depth = 0;
  for (std::size_t at = xml.find('<'); at != std::string_view::npos; at = xml.find('<', at)) {
    const std::string_view rest = xml.substr(at);
    std::size_t end;
    if (rest.substr(0, 4) == "<!--") {
      end = xml.find("-->", at);
    } else if (rest.substr(0, 9) == "<![CDATA[") {
      end = xml.find("]]>", at);
    } else {
      end = tag_end(xml, at + 1);
      const char kind = rest.size() > 1 ? rest[1] : '?';
      if (kind == '/') {
        --depth;
      } else if (kind != '?' && kind != '!' &&
                 (end == std::string_view::npos || xml[end - 1] != '/') &&
                 ++depth > kMaxInputDepth) {
        throw std::invalid_argument("XML nested deeper than " + std::to_string(kMaxInputDepth) +
                                    " levels at byte " + std::to_string(at));
      }
    }
    if (end == std::string_view::npos) return;  // unterminated: hwloc refuses it
    at = end + 1;
  }
}

namespace {

// A C1 control character (U+0080 to U+009F, "\xC2\x80" to "\xC2\x9F" in UTF-8) at s[i].
bool c1_at(std::string_view s, std::size_t i) {
  return i + 1 < s.size() && s[i] == '\xC2' &&
         (static_cast<unsigned char>(s[i + 1]) & 0xE0) == 0x80;
}

// Why `s` cannot be a name, or nullptr when it can.
const char* name_fault(std::string_view s) {
  if (s.empty() || s.size() > 200) return "is empty or longer than 200 characters";
  for (char ch : s)
    if (!std::isalnum(static_cast<unsigned char>(ch)) &&
        (ch == '\0' || !std::strchr("._:,=/+-", ch)))
      return "has a character outside [A-Za-z0-9._:,=/+-]";
  // Split at '/', no part may be empty, "." or "..": a name joined to a folder stays in it.
  for (std::size_t from = 0, to; from <= s.size(); from = to + 1) {
    to = std::min(s.find('/', from), s.size());
    const std::string_view part = s.substr(from, to - from);
    if (part.empty() || part == "." || part == "..")
      return "has an empty, \".\" or \"..\" part between slashes";
  }
  return nullptr;
}

}  // namespace

std::string json_text(const std::string& s) {
  // nlohmann escapes C0 characters; DEL and C1 characters are escaped here.
  std::string out =
      nlohmann::json(s).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  for (std::size_t i = 0; i < out.size(); ++i) {
    const bool c1 = c1_at(out, i);
    if (!c1 && out[i] != 0x7f) continue;
    char escape[8];
    std::snprintf(escape, sizeof escape, "\\u%04x", static_cast<unsigned char>(out[i + c1]));
    out.replace(i, 1 + c1, escape);
  }
  return out;
}

bool is_safe_name(std::string_view s) { return name_fault(s) == nullptr; }

void check_name(const std::string& what, const std::string& s) {
  if (const char* fault = name_fault(s))
    throw std::invalid_argument(what + " " + json_text(s) + " " + fault);
}

std::size_t control_at(std::string_view s) {
  for (std::size_t i = 0; i < s.size(); ++i)
    if (static_cast<unsigned char>(s[i]) < 0x20 || s[i] == 0x7f || c1_at(s, i)) return i;
  return std::string_view::npos;
}

void check_text(const std::string& what, const std::string& s) {
  if (control_at(s) != std::string_view::npos)
    throw std::invalid_argument(what + " " + json_text(s) + " has a control character");
}

std::string quoted_line(std::string_view line) {
  std::string q = json_text(std::string(line.substr(0, 100)));
  if (line.size() > 100) q.insert(q.size() - 1, "...");
  return q;
}

namespace {

void check_texts_at(const nlohmann::json& v, const std::string& at,
                    const std::vector<std::string>& except) {
  if (std::find(except.begin(), except.end(), at) != except.end()) return;
  if (v.is_string()) check_text(at, v.get_ref<const std::string&>());
  if (v.is_array())
    for (std::size_t i = 0; i < v.size(); ++i)
      check_texts_at(v[i], at + "[" + std::to_string(i) + "]", except);
  if (!v.is_object()) return;
  for (const auto& [key, value] : v.items()) {
    check_text(at.empty() ? "key" : at + " key", key);
    check_texts_at(value, at.empty() ? key : at + "." + key, except);
  }
}

}  // namespace

void check_texts(const nlohmann::json& doc, const std::vector<std::string>& except) {
  check_texts_at(doc, "", except);  // recursion as deep as the document: kMaxInputDepth
}

}  // namespace wb
