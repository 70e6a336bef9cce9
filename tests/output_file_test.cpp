// Output files (common/util/output_file.h, issue 25): one atomic write for every command, default
// names that never collide, and a result that cannot go where it was asked goes somewhere else.
#include "common/util/output_file.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <set>
#include <stdexcept>
#include <string>

#include "tests/support.h"

namespace {

namespace fs = std::filesystem;
using wb::test::slurp;

class OutputFile : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("wb-output-file-" + std::to_string(getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  // The names in the folder: no temporary file may be left.
  std::set<std::string> names() const {
    std::set<std::string> out;
    for (const auto& e : fs::directory_iterator(dir_)) out.insert(e.path().filename().string());
    return out;
  }
  fs::path dir_;
};

// Two runs in the same second (one stem) get two files; neither replaces the other.
TEST_F(OutputFile, NewFilesOfOneStemNeverCollide) {
  const std::string stem = (dir_ / "results" / "host-20261201T000000Z").string();
  const std::string a = wb::write_new_file(stem, ".json", "first\n");
  const std::string b = wb::write_new_file(stem, ".json", "second\n");
  EXPECT_EQ(a, stem + ".json");
  EXPECT_EQ(b, stem + "-2.json");
  EXPECT_EQ(slurp(a), "first\n");
  EXPECT_EQ(slurp(b), "second\n");
  EXPECT_EQ(std::distance(fs::directory_iterator(dir_ / "results"), fs::directory_iterator()), 2);
}

// A file written in pieces appears whole at publish() and not before; destroyed first, it leaves
// nothing behind.
TEST_F(OutputFile, AStreamedFileAppearsWholeOrNotAtAll) {
  const std::string target = (dir_ / "r.decisions.txt").string();
  {
    wb::StreamedFile file(target, "", "");
    file.append("one\n");
    EXPECT_EQ(names().size(), 1u);  // its temporary file only
    EXPECT_FALSE(fs::exists(target));
  }
  EXPECT_TRUE(names().empty());
  wb::StreamedFile file(target, "", "");
  file.append("one\n");
  file.append("two\n");
  EXPECT_EQ(file.publish(), target);
  EXPECT_EQ(slurp(target), "one\ntwo\n");
  const std::string stem = (dir_ / "r").string();
  wb::StreamedFile next("", stem, ".decisions.txt");  // a new name, never the one there
  next.append("three\n");
  EXPECT_EQ(next.publish(), stem + "-2.decisions.txt");
  EXPECT_EQ(names(), (std::set<std::string>{"r.decisions.txt", "r-2.decisions.txt"}));
}

TEST_F(OutputFile, AtomicWriteReplacesARegularFileAndRefusesASymlink) {
  const std::string target = (dir_ / "r.json").string();
  wb::write_file_atomic(target, "one");
  wb::write_file_atomic(target, "two");
  EXPECT_EQ(slurp(target), "two");
  fs::create_symlink(target, dir_ / "link");
  EXPECT_THROW(wb::write_file_atomic((dir_ / "link").string(), "three"), std::runtime_error);
  EXPECT_TRUE(fs::is_symlink(dir_ / "link"));
  EXPECT_EQ(slurp(target), "two");
  EXPECT_EQ(names(), (std::set<std::string>{"r.json", "link"}));
}

// The result a run measured is never dropped: where --out cannot take it, a new file of the
// default stem does; where nothing can, the caller prints it (path "").
TEST_F(OutputFile, AResultThatCannotBeWrittenGoesToTheFallback) {
  const std::string stem = (dir_ / "fallback").string();
  const wb::Saved asked = wb::write_or_fallback((dir_ / "r.json").string(), stem, ".json", "x");
  EXPECT_EQ(asked.path, (dir_ / "r.json").string());
  EXPECT_EQ(asked.warning, "");

  const wb::Saved moved = wb::write_or_fallback("/proc/wb-never/r.json", stem, ".json", "x");
  EXPECT_EQ(moved.path, stem + ".json");
  EXPECT_EQ(slurp(moved.path), "x");
  EXPECT_NE(moved.warning.find("cannot write /proc/wb-never/r.json"), std::string::npos)
      << moved.warning;
  EXPECT_NE(moved.warning.find("written to " + stem + ".json instead"), std::string::npos);
  EXPECT_EQ(moved.warning.find('\n'), std::string::npos);

  const wb::Saved lost =
      wb::write_or_fallback("/proc/wb-never/r.json", "/proc/wb-never/s", ".json", "x");
  EXPECT_EQ(lost.path, "");
  EXPECT_NE(lost.warning.find("written to standard output instead"), std::string::npos);
}

TEST_F(OutputFile, SafeFileNameKeepsOnePathComponent) {
  EXPECT_EQ(wb::safe_file_name("box-1.example"), "box-1.example");
  EXPECT_EQ(wb::safe_file_name("../x y"), ".._x_y");
  EXPECT_EQ(wb::safe_file_name(""), "_");
}

}  // namespace
