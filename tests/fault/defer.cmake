# defer.cmake — the program of the ENORMOUSTEXT_DEFER tests (defer-*.sh),
# with 8 MiB of text of its own, and the launcher that runs a program under
# a seccomp filter forbidding new threads.
add_executable(et_fault_dp_prog dp_prog.c $<TARGET_OBJECTS:et_it_bt_exe_funcs>)
set_target_properties(et_fault_dp_prog PROPERTIES OUTPUT_NAME dp_prog
  RUNTIME_OUTPUT_DIRECTORY ${fault_bin} SKIP_BUILD_RPATH TRUE)
target_include_directories(et_fault_dp_prog PRIVATE ${PROJECT_SOURCE_DIR}/tests/integration)
target_compile_options(et_fault_dp_prog PRIVATE ${fault_warn})
add_dependencies(et_fault_dp_prog et_it_sources)
target_link_libraries(et_fault_dp_prog PRIVATE ${CMAKE_DL_LIBS})
add_executable(et_fault_dp_noclone dp_noclone.c)
set_target_properties(et_fault_dp_noclone PROPERTIES OUTPUT_NAME dp_noclone
  RUNTIME_OUTPUT_DIRECTORY ${fault_bin})
target_compile_options(et_fault_dp_noclone PRIVATE ${fault_warn})
# fault.defer-tick's program: 6 MiB of `ret`s, single-threaded unless asked
add_executable(et_fault_dt_prog dt_prog.c)
set_target_properties(et_fault_dt_prog PROPERTIES OUTPUT_NAME dt_prog
  RUNTIME_OUTPUT_DIRECTORY ${fault_bin} SKIP_BUILD_RPATH TRUE)
target_compile_options(et_fault_dt_prog PRIVATE ${fault_warn})
