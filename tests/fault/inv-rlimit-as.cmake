# inv-rlimit-as.cmake — as_prog, the program of fault.inv-rlimit-as: it
# lowers its own RLIMIT_AS after start and maps what fits (see its banner),
# with dp_prog's 8 MiB of generated text so that a deferred worker starts.
add_executable(fault_as_prog ${CMAKE_CURRENT_SOURCE_DIR}/as_prog.c $<TARGET_OBJECTS:et_it_bt_exe_funcs>)
set_target_properties(fault_as_prog PROPERTIES OUTPUT_NAME as_prog
  RUNTIME_OUTPUT_DIRECTORY ${fault_bin} SKIP_BUILD_RPATH TRUE)
target_include_directories(fault_as_prog PRIVATE ${PROJECT_SOURCE_DIR}/tests/integration)
target_compile_options(fault_as_prog PRIVATE ${fault_warn})
add_dependencies(fault_as_prog et_it_sources)
