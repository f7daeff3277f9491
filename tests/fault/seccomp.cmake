# seccomp.cmake — the programs of fault.seccomp-kill (seccomp-kill.sh), into
# ${fault_bin}:
#   sk_run    runs a command under a seccomp filter that kills the process on
#             the named system calls, installed before exec (as systemd's
#             SystemCallFilter= does)
#   sk_prog   8 MiB of text of its own (the integration tests' generated
#             functions), called and checked; sandboxes itself with such a
#             filter (first thing in main, or later from another thread with
#             SECCOMP_FILTER_FLAG_TSYNC, or from the main thread with prctl),
#             dlopens a libbigtext.so copy, and can end in SECCOMP_MODE_STRICT
# Both build their filters with sk_filter.h.
add_executable(et_fault_sk_prog sk_prog.c $<TARGET_OBJECTS:et_it_bt_exe_funcs>)
set_target_properties(et_fault_sk_prog PROPERTIES OUTPUT_NAME sk_prog
  RUNTIME_OUTPUT_DIRECTORY ${fault_bin} SKIP_BUILD_RPATH TRUE)
target_include_directories(et_fault_sk_prog PRIVATE ${PROJECT_SOURCE_DIR}/tests/integration)
target_compile_options(et_fault_sk_prog PRIVATE ${fault_warn})
add_dependencies(et_fault_sk_prog et_it_sources)
find_package(Threads REQUIRED)
target_link_libraries(et_fault_sk_prog PRIVATE Threads::Threads ${CMAKE_DL_LIBS})
add_executable(et_fault_sk_run sk_run.c)
set_target_properties(et_fault_sk_run PROPERTIES OUTPUT_NAME sk_run
  RUNTIME_OUTPUT_DIRECTORY ${fault_bin})
target_compile_options(et_fault_sk_run PRIVATE ${fault_warn})
# Some two hundred runs of a program that holds for a few hundred ms.
list(APPEND fault_timeouts seccomp-kill=400)
