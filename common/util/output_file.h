// Every file wakebench writes (result sets, noise files, report files) goes through here. A target
// is a regular file or absent: a device, FIFO, socket, symlink or folder is refused, root or not.
// A file is written through a temporary file in its folder and renamed (or linked, when it must
// not replace one), so a reader never sees half a file.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "common/util/sys.h"

namespace wb {

// Throws std::runtime_error "<what> PATH: ..." unless PATH is a regular file or absent.
void check_output_target(const std::string& what, const std::string& path);

// check_output_target, then the folder exists or is created and a temporary file can be created
// and written there (a full, read-only or pseudo filesystem fails): what a command checks before
// it does the work whose result it writes. Throws std::runtime_error "<what> PATH: ...".
void check_output_writable(const std::string& what, const std::string& path);

// Writes `text` to `path` atomically, creating its folder. Throws std::runtime_error
// "cannot write PATH: ..." (a refused target as check_output_target says it).
void write_file_atomic(const std::string& path, const std::string& text);

// `doc` (one space of indent, a final newline) written with write_file_atomic.
void write_json_atomic(const std::string& path, const nlohmann::ordered_json& doc);

// Writes `text` to `<stem><ext>`, else `<stem>-2<ext>`, `<stem>-3<ext>`, ...: the first name no
// file has, so two writers of one stem never replace each other's file. Returns the path.
std::string write_new_file(const std::string& stem, const std::string& ext,
                           const std::string& text);

// A file too large to hold in memory, written piece by piece into a temporary file beside its
// target and published whole: renamed to `path`, or with `path` empty linked to a new
// `<stem><ext>` as write_new_file names it. Removed, never published, when it is destroyed first
// (an error, an exception): no reader sees half of it. append() and publish() throw
// std::runtime_error "cannot write PATH: ...".
class StreamedFile {
 public:
  StreamedFile(std::string path, std::string stem, std::string ext);
  ~StreamedFile();
  StreamedFile(const StreamedFile&) = delete;
  StreamedFile& operator=(const StreamedFile&) = delete;
  void append(std::string_view text);
  std::string publish();  // the path it went to

 private:
  std::string target() const;

  std::string path_, stem_, ext_, tmp_;
  Fd fd_;
};

// Where a result that must not be lost went: `path` ("" when nowhere could take it: the caller
// prints it to standard output) and, when that is not where it was asked to go, why (one line).
struct Saved {
  std::string path;
  std::string warning;
};
// Writes `text` to `path` (write_file_atomic), or with `path` empty to a new `<stem><ext>`
// (write_new_file); when that fails, to a new `<stem><ext>`; when that fails too, nowhere.
Saved write_or_fallback(const std::string& path, const std::string& stem, const std::string& ext,
                        const std::string& text);

// `name` with every character outside [A-Za-z0-9._-] replaced by '_' ("" becomes "_"): a name
// from outside (a host name) made safe as one path component.
std::string safe_file_name(const std::string& name);

}  // namespace wb
