# Cross build for aarch64 with Debian's cross compiler (g++-aarch64-linux-gnu) and the arm64 -dev
# packages installed through dpkg multiarch (libraries in /usr/lib/aarch64-linux-gnu, headers in
# /usr/include). runners/cross-build.sh installs both and uses this file; tests run under qemu-user.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)
# Multiarch: find_library / find_package look in /usr/lib/aarch64-linux-gnu (and its cmake/ and
# pkgconfig/), never in the host's /usr/lib/x86_64-linux-gnu.
set(CMAKE_LIBRARY_ARCHITECTURE aarch64-linux-gnu)
set(ENV{PKG_CONFIG_LIBDIR} "/usr/lib/aarch64-linux-gnu/pkgconfig:/usr/share/pkgconfig")
# gtest_discover_tests and ctest run the target's binaries through this (libc6:arm64 puts the
# dynamic loader at /lib/ld-linux-aarch64.so.1, so qemu needs no -L).
set(CMAKE_CROSSCOMPILING_EMULATOR /usr/bin/qemu-aarch64-static)
