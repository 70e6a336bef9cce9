# Cross build for ppc64le with Debian's cross compiler (g++-powerpc64le-linux-gnu). The ppc64el
# -dev packages cannot be installed through multiarch on this mirror (see runners/cross-build.sh):
# runners/cross-build.sh extracts them into a sysroot and passes it as WB_CROSS_SYSROOT; libc and
# libstdc++ come from the cross compiler's own /usr/powerpc64le-linux-gnu. Tests run under
# qemu-user.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR ppc64le)
set(CMAKE_CXX_COMPILER powerpc64le-linux-gnu-g++)
set(CMAKE_LIBRARY_ARCHITECTURE powerpc64le-linux-gnu)
set(WB_CROSS_SYSROOT "" CACHE PATH "extracted ppc64el -dev packages (runners/cross-build.sh)")
if(NOT WB_CROSS_SYSROOT)
  # try_compile re-reads this file without the cache: the variable comes through the environment.
  set(WB_CROSS_SYSROOT "$ENV{WB_CROSS_SYSROOT}")
endif()
if(NOT WB_CROSS_SYSROOT)
  message(FATAL_ERROR "set WB_CROSS_SYSROOT (runners/cross-build.sh ppc64le does)")
endif()
set(ENV{WB_CROSS_SYSROOT} "${WB_CROSS_SYSROOT}")
# The sysroot first, then the host's arch-independent headers (Boost, nlohmann-json, CLI11).
set(CMAKE_FIND_ROOT_PATH "${WB_CROSS_SYSROOT}" /)
set(ENV{PKG_CONFIG_LIBDIR} "${WB_CROSS_SYSROOT}/usr/lib/powerpc64le-linux-gnu/pkgconfig")
set(ENV{PKG_CONFIG_SYSROOT_DIR} "${WB_CROSS_SYSROOT}")
# Multiarch headers (hwloc/autogen/config.h) that the compiler looks for in the host's
# /usr/include/powerpc64le-linux-gnu.
set(CMAKE_CXX_STANDARD_INCLUDE_DIRECTORIES "${WB_CROSS_SYSROOT}/usr/include/powerpc64le-linux-gnu")
# The sysroot's libraries' own dependencies at link time, and at run time under qemu: an absolute
# DT_RPATH (not RUNPATH, which would not apply to libhwloc's own libudev) that qemu resolves on the
# host when its -L prefix lacks the path.
set(_wb_libdir "${WB_CROSS_SYSROOT}/usr/lib/powerpc64le-linux-gnu")
set(CMAKE_EXE_LINKER_FLAGS_INIT
    "-Wl,--disable-new-dtags -Wl,-rpath-link,${_wb_libdir} -Wl,-rpath,${_wb_libdir}")
# The dynamic loader, libc and libstdc++ of the cross toolchain.
set(CMAKE_CROSSCOMPILING_EMULATOR /usr/bin/qemu-ppc64le-static -L /usr/powerpc64le-linux-gnu)
