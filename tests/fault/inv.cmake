# inv.cmake — the program of the fault.inv-* tests (inv-*.sh): what a
# program may assume of its own process (it ends with its last thread,
# SIGTERM ends it, open gives the lowest free number, the descriptors it
# did not open are nobody's), with 8 MiB of text of its own (the
# integration tests' generated functions, as dp_prog in defer.cmake).
find_package(Threads REQUIRED)
add_executable(et_fault_iv_prog iv_prog.c $<TARGET_OBJECTS:et_it_bt_exe_funcs>)
set_target_properties(et_fault_iv_prog PROPERTIES OUTPUT_NAME iv_prog
  RUNTIME_OUTPUT_DIRECTORY ${fault_bin} SKIP_BUILD_RPATH TRUE)
target_include_directories(et_fault_iv_prog PRIVATE ${PROJECT_SOURCE_DIR}/tests/integration)
target_compile_options(et_fault_iv_prog PRIVATE ${fault_warn})
add_dependencies(et_fault_iv_prog et_it_sources)
target_link_libraries(et_fault_iv_prog PRIVATE ${CMAKE_DL_LIBS} Threads::Threads)
