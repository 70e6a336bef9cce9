# The BPF decision recorder (common/system/decision_recorder.h): its object is compiled with clang
# for the BPF target and turned into a libbpf skeleton by bpftool, which wb_common includes. Optional:
# without clang, bpftool or libbpf the recorder is left out, and the one line `run
# --trace-decisions` gives on a stock kernel names what was missing (WB_BPF_MISSING).
option(WB_BPF "Build the BPF decision recorder (clang, bpftool, libbpf-dev)" ON)

function(wb_bpf_recorder target)
  set(missing "")
  if(WB_BPF)
    find_program(WB_BPF_CLANG NAMES clang clang-16 clang-14)
    find_program(WB_BPFTOOL bpftool PATHS /usr/sbin /sbin)
    pkg_check_modules(LIBBPF IMPORTED_TARGET libbpf)
    find_path(WB_ASM_TYPES_DIR asm/types.h
              PATHS /usr/include/${CMAKE_LIBRARY_ARCHITECTURE} NO_DEFAULT_PATH)
    foreach(need WB_BPF_CLANG WB_BPFTOOL LIBBPF_FOUND WB_ASM_TYPES_DIR)
      if(NOT ${need})
        list(APPEND missing ${need})
      endif()
    endforeach()
  else()
    set(missing "-DWB_BPF=OFF")
  endif()
  if(missing)
    list(JOIN missing ", " why)
    string(REPLACE "WB_BPF_CLANG" "clang" why "${why}")
    string(REPLACE "WB_BPFTOOL" "bpftool" why "${why}")
    string(REPLACE "LIBBPF_FOUND" "libbpf-dev" why "${why}")
    string(REPLACE "WB_ASM_TYPES_DIR" "asm/types.h" why "${why}")
    message(STATUS "BPF decision recorder: left out (missing: ${why})")
    target_compile_definitions(${target} PRIVATE "WB_BPF_MISSING=\"built without ${why}\"")
    return()
  endif()
  set(src ${CMAKE_SOURCE_DIR}/common/system)
  set(out ${CMAKE_BINARY_DIR}/bpf)
  add_custom_command(
    OUTPUT ${out}/wake_decision.skel.h
    COMMAND ${CMAKE_COMMAND} -E make_directory ${out}
    COMMAND ${WB_BPF_CLANG} -g -O2 -target bpf -Wall -I${src} -I${WB_ASM_TYPES_DIR}
            -c ${src}/wake_decision.bpf.c -o ${out}/wake_decision.bpf.o
    COMMAND ${WB_BPFTOOL} gen skeleton ${out}/wake_decision.bpf.o name wake_decision
            > ${out}/wake_decision.skel.h
    DEPENDS ${src}/wake_decision.bpf.c ${src}/wake_decision_record.h
    COMMENT "BPF decision recorder: wake_decision.bpf.o and its skeleton")
  add_custom_target(wb_bpf_skeleton DEPENDS ${out}/wake_decision.skel.h)
  add_dependencies(${target} wb_bpf_skeleton)
  target_include_directories(${target} PRIVATE ${out})
  target_compile_definitions(${target} PRIVATE WB_HAVE_BPF=1)
  target_link_libraries(${target} PUBLIC PkgConfig::LIBBPF)
  message(STATUS "BPF decision recorder: built (${WB_BPF_CLANG}, ${WB_BPFTOOL})")
endfunction()
