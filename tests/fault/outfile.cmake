# Helper programs of the tests of where the library and the command write
# (tests/fault/outpaths-*.sh, record-fork.sh): see each source's banner.
foreach(p outpaths_hold outpaths_reader)
  add_executable(fault_${p} ${CMAKE_CURRENT_SOURCE_DIR}/${p}.c)
  set_target_properties(fault_${p} PROPERTIES OUTPUT_NAME ${p} RUNTIME_OUTPUT_DIRECTORY ${fault_bin})
  target_compile_options(fault_${p} PRIVATE ${fault_warn})
endforeach()
add_executable(fault_record_fork ${CMAKE_CURRENT_SOURCE_DIR}/record_fork.c)
set_target_properties(fault_record_fork PROPERTIES OUTPUT_NAME record_fork RUNTIME_OUTPUT_DIRECTORY ${fault_bin})
target_compile_options(fault_record_fork PRIVATE ${fault_warn})
find_package(Threads REQUIRED)
target_link_libraries(fault_record_fork PRIVATE Threads::Threads)
