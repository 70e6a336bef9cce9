#include "common/util/output_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <stdexcept>

#include "common/util/sys.h"

namespace wb {
namespace {

namespace fs = std::filesystem;

[[noreturn]] void refuse_output(const std::string& what, const std::string& path,
                                const std::string& why) {
  throw std::runtime_error(what + " " + path + ": " + why);
}

void make_folder(const std::string& what, const fs::path& target) {
  if (!target.has_parent_path()) return;
  std::error_code ec;
  fs::create_directories(target.parent_path(), ec);
  if (ec) refuse_output(what, target.string(), "cannot create its folder: " + ec.message());
}

// A temporary file beside `target`, unique in this process and among processes (`err`: the errno
// of a failed open, else 0).
struct Temp {
  std::string path;
  Fd fd;
  int err = 0;
};
Temp create_temp(const fs::path& target) {
  static std::atomic<unsigned> serial{0};
  Temp t{target.string() + ".tmp." + std::to_string(getpid()) + "." +
             std::to_string(serial.fetch_add(1)),
         Fd(), 0};
  t.fd = Fd(::open(t.path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666));
  if (!t.fd) t.err = errno;
  return t;
}

// 0 or the errno of the first failed write.
int write_text(int fd, std::string_view text) {
  for (size_t done = 0; done < text.size();) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return errno;
    done += static_cast<size_t>(n);
  }
  return 0;
}

// 0 or the errno of the first failed write or fsync.
int write_all(int fd, const std::string& text) {
  if (const int err = write_text(fd, text)) return err;
  return ::fsync(fd) == 0 ? 0 : errno;
}

// Links `tmp` to the first free `<stem>[-N]<ext>` (link(2) fails with EEXIST where rename(2)
// would replace): that path, or throws.
std::string link_new_name(const std::string& tmp, const std::string& stem, const std::string& ext) {
  for (int n = 1;; ++n) {
    const std::string path = stem + (n > 1 ? "-" + std::to_string(n) : "") + ext;
    if (::link(tmp.c_str(), path.c_str()) == 0) return path;
    if (errno != EEXIST || n >= 1000) refuse_output("cannot write", path, std::strerror(errno));
  }
}

// The text in a temporary file beside `target`, then `publish(tmp)` (rename or link): 0 or errno.
template <typename Publish>
int write_through_temp(const fs::path& target, const std::string& text, Publish publish) {
  Temp tmp = create_temp(target);
  if (tmp.err) return tmp.err;
  int err = write_all(tmp.fd.get(), text);
  tmp.fd.reset();
  if (err == 0 && publish(tmp.path) != 0) err = errno;
  ::unlink(tmp.path.c_str());  // after a rename: gone already (ENOENT, ignored)
  return err;
}

}  // namespace

void check_output_target(const std::string& what, const std::string& path) {
  if (path.empty()) refuse_output(what, "\"\"", "empty path");
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) {
    if (errno != ENOENT) refuse_output(what, path, std::strerror(errno));
    return;
  }
  if (!S_ISREG(st.st_mode))
    refuse_output(what, path,
                  std::string("is ") + file_kind(st.st_mode) + ", not a regular file (refused)");
}

void check_output_writable(const std::string& what, const std::string& path) {
  check_output_target(what, path);
  make_folder(what, path);
  // A result set is some 100 KiB: a filesystem that cannot take a block now will not take it.
  const int err =
      write_through_temp(path, std::string(4096, '\n'), [](const std::string&) { return 0; });
  if (err)
    refuse_output(what, path, std::string("cannot write in its folder: ") + std::strerror(err));
}

void write_file_atomic(const std::string& path, const std::string& text) {
  if (path.empty()) refuse_output("cannot write", "\"\"", "empty path");
  StreamedFile file(path, "", "");
  file.append(text);
  file.publish();
}

void write_json_atomic(const std::string& path, const nlohmann::ordered_json& doc) {
  write_file_atomic(path, doc.dump(1) + "\n");
}

std::string write_new_file(const std::string& stem, const std::string& ext,
                           const std::string& text) {
  StreamedFile file("", stem, ext);
  file.append(text);
  return file.publish();
}

StreamedFile::StreamedFile(std::string path, std::string stem, std::string ext)
    : path_(std::move(path)), stem_(std::move(stem)), ext_(std::move(ext)) {
  if (!path_.empty()) check_output_target("cannot write", target());  // a link never replaces
  make_folder("cannot write", target());
  Temp t = create_temp(target());
  if (t.err) refuse_output("cannot write", target(), std::strerror(t.err));
  tmp_ = t.path;
  fd_ = std::move(t.fd);
}

StreamedFile::~StreamedFile() {
  fd_.reset();
  if (!tmp_.empty()) ::unlink(tmp_.c_str());
}

void StreamedFile::append(std::string_view text) {
  if (!fd_) throw std::logic_error("StreamedFile::append after publish");
  if (const int err = write_text(fd_.get(), text))
    refuse_output("cannot write", target(), std::strerror(err));
}

std::string StreamedFile::publish() {
  if (!fd_) throw std::logic_error("StreamedFile::publish twice");
  const int err = ::fsync(fd_.get()) == 0 ? 0 : errno;
  fd_.reset();
  if (err) refuse_output("cannot write", target(), std::strerror(err));
  std::string out = path_;
  if (path_.empty())
    out = link_new_name(tmp_, stem_, ext_);
  else if (std::rename(tmp_.c_str(), path_.c_str()) != 0)
    refuse_output("cannot write", path_, std::strerror(errno));
  ::unlink(tmp_.c_str());  // after a rename: gone already (ENOENT, ignored)
  tmp_.clear();
  return out;
}

std::string StreamedFile::target() const { return path_.empty() ? stem_ + ext_ : path_; }

Saved write_or_fallback(const std::string& path, const std::string& stem, const std::string& ext,
                        const std::string& text) {
  std::string why;
  try {
    return {path.empty() ? write_new_file(stem, ext, text) : (write_file_atomic(path, text), path),
            ""};
  } catch (const std::runtime_error& e) {
    why = e.what();
  }
  if (!path.empty()) try {
      const std::string there = write_new_file(stem, ext, text);
      return {there, why + "; written to " + there + " instead"};
    } catch (const std::runtime_error& e) {
      why += std::string("; ") + e.what();
    }
  return {"", why + "; written to standard output instead"};
}

std::string safe_file_name(const std::string& name) {
  std::string out = name.empty() ? "_" : name;
  for (char& ch : out)
    if (!std::isalnum(static_cast<unsigned char>(ch)) && ch != '.' && ch != '_' && ch != '-')
      ch = '_';
  return out;
}

}  // namespace wb
