// Shared memory for one case: an anonymous MAP_SHARED mapping from Boost.Interprocess. It is
// inherited by forked tasks and has no name, so nothing can outlive the case in /dev/shm, even when
// wakebench itself is killed.
#pragma once

#include <boost/interprocess/anonymous_shared_memory.hpp>
#include <boost/interprocess/mapped_region.hpp>
#include <cstddef>

namespace wb {

// The cache line of the architecture compiled for, where a compile-time value is needed: 128 bytes
// on POWER (POWER7 to POWER10) and on s390x 256, 64 on x86-64 and on the arm64 cores wakebench
// targets (Neoverse, Ampere). Some cores differ from their architecture's usual size (Apple's and
// A64FX's arm64 cores have 128 and 256-byte lines), so what depends on the line size of the CPU it
// runs on (the work_lines knob) reads it at run time: cache_line_size() in common/measure/knobs.h.
// (std::hardware_destructive_interference_size is not used: GCC warns that it may change between
// compiler versions, and on arm64 it is 256, not the common 64.)
#if defined(__powerpc64__) || defined(__powerpc__)
inline constexpr size_t kCacheLine = 128;
#elif defined(__s390x__)
inline constexpr size_t kCacheLine = 256;
#else
inline constexpr size_t kCacheLine = 64;
#endif
// Separates hot words on every supported architecture: a whole line on POWER and arm64's 128-byte
// cores, a pair of lines on x86 (whose adjacent-line prefetcher pulls lines in pairs).
inline constexpr size_t kHotAlign = kCacheLine > 128 ? kCacheLine : 128;

class SharedRegion {
 public:
  explicit SharedRegion(size_t bytes)
      : region_(boost::interprocess::anonymous_shared_memory(bytes == 0 ? 1 : bytes)) {}
  void* data() const { return region_.get_address(); }
  size_t size() const { return region_.get_size(); }
  template <typename T>
  T* at(size_t offset) const {
    return reinterpret_cast<T*>(static_cast<char*>(data()) + offset);
  }

 private:
  boost::interprocess::mapped_region region_;
};

// Bump allocator over a region's offsets, every block aligned to kHotAlign.
class Layout {
 public:
  size_t add(size_t bytes) {
    size_t off = size_;
    size_ = (size_ + bytes + kHotAlign - 1) / kHotAlign * kHotAlign;
    return off;
  }
  size_t size() const { return size_; }

 private:
  size_t size_ = 0;
};

}  // namespace wb
