# registry/registry.json (the policies and mechanisms, registry/README.md) compiled into the C++ as
# a string that common/schema/registry.cpp parses. The Python tools read the file itself. Editing
# the file re-runs the configure step, which regenerates the source.
#   wb_registry_source(VAR): sets VAR to the generated source to add to a target.
function(wb_registry_source out_var)
  set(json ${CMAKE_CURRENT_FUNCTION_LIST_DIR}/../registry/registry.json)
  set(out ${CMAKE_CURRENT_BINARY_DIR}/generated/registry_json.cpp)
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${json})
  file(READ ${json} WB_REGISTRY_JSON)
  configure_file(${CMAKE_CURRENT_FUNCTION_LIST_DIR}/registry_json.cpp.in ${out} @ONLY)
  set(${out_var} ${out} PARENT_SCOPE)
endfunction()
