# harness.cmake — the fault-injection harness's helper programs (see
# faultrun.c, faultprog.c, fr_wxprog.c), into ${fault_bin}:
#   faultrun    runs a command with libenormoustext's own system calls failing
#               (seccomp user notification) or under a W+X-killing filter
#   faultprog   the program those tests run preloaded: 8 MiB of text (the
#               integration tests' generated functions), dlopen, a thread,
#               fork, exit; prints only what it computed
#   fr_wxprog   asks for writable+executable memory (the W+X filter must kill it)
#   libenormoustext-frshim.so   a deliberately broken stand-in for the
#               library (fr_shim.c): the tests' self-checks preload it to
#               show that each test fails when the rule is broken
# The tests share fr_common.bash (not *.sh: every *.sh here is a test).
# Tests: syscalls.sh wx.sh rlimits.sh thp_matrix.sh badvalues.sh.

find_package(Threads REQUIRED)

add_executable(et_fault_faultrun faultrun.c faultrun_cfi.c)
set_target_properties(et_fault_faultrun PROPERTIES OUTPUT_NAME faultrun RUNTIME_OUTPUT_DIRECTORY ${fault_bin})
target_compile_options(et_fault_faultrun PRIVATE ${fault_warn})

add_executable(et_fault_wxprog fr_wxprog.c)
set_target_properties(et_fault_wxprog PROPERTIES OUTPUT_NAME fr_wxprog RUNTIME_OUTPUT_DIRECTORY ${fault_bin})
target_compile_options(et_fault_wxprog PRIVATE ${fault_warn})

add_library(et_fault_shim SHARED fr_shim.c)
set_target_properties(et_fault_shim PROPERTIES OUTPUT_NAME enormoustext-frshim
  LIBRARY_OUTPUT_DIRECTORY ${fault_bin} SKIP_BUILD_RPATH TRUE)
target_compile_options(et_fault_shim PRIVATE ${fault_warn})

# The generated functions come from tests/integration, compiled once
# (et_it_bt_exe_funcs, et_it_bt_lib_obj: objects linked here).
add_executable(et_fault_faultprog faultprog.c $<TARGET_OBJECTS:et_it_bt_exe_funcs>)
set_target_properties(et_fault_faultprog PROPERTIES OUTPUT_NAME faultprog RUNTIME_OUTPUT_DIRECTORY ${fault_bin})
target_include_directories(et_fault_faultprog PRIVATE ${PROJECT_SOURCE_DIR}/tests/integration)
add_dependencies(et_fault_faultprog et_it_sources)
target_compile_options(et_fault_faultprog PRIVATE ${fault_warn})
target_link_libraries(et_fault_faultprog PRIVATE Threads::Threads ${CMAKE_DL_LIBS})

# The syscall matrix runs a few hundred programs; the THP matrix changes
# system settings.
list(APPEND fault_timeouts syscalls=600 wx=180 rlimits=300 thp_matrix=300 badvalues=600)
list(APPEND fault_serial thp_matrix)
