// Shared memory for one case: an anonymous MAP_SHARED mapping from Boost.Interprocess. It is
// inherited by forked tasks and has no name, so nothing can outlive the case in /dev/shm, even when
// wakebench itself is killed.
#pragma once

#include <boost/interprocess/anonymous_shared_memory.hpp>
#include <boost/interprocess/mapped_region.hpp>
#include <cstddef>

namespace wb {

inline constexpr size_t kCacheLine = 64;  // also right for arm64; POWER's 128 is covered by
                                          // aligning hot words to kHotAlign below
inline constexpr size_t kHotAlign = 128;  // separates hot words on every supported architecture

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
