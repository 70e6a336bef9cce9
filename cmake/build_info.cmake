# Writes the build's identity (cmake/build_info.cpp.in) into OUT, at every build, from the sources'
# git HEAD at that moment: a sha taken at configure time goes stale at the next commit, and a
# result set would then name a commit its binary was not built from. configure_file() leaves OUT
# untouched when its text is the same, so an unchanged HEAD recompiles nothing.
# cmake -DSRC=<source dir> -DOUT=<file> -DPROJECT_VERSION=... -DCOMPILER="<id> <version>" -P this
execute_process(COMMAND git rev-parse --short=12 HEAD WORKING_DIRECTORY ${SRC}
                OUTPUT_VARIABLE WB_GIT_SHA OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
if(NOT WB_GIT_SHA)
  set(WB_GIT_SHA "unknown")
endif()
configure_file(${SRC}/cmake/build_info.cpp.in ${OUT} @ONLY)
