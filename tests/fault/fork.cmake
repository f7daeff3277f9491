# fork.cmake — the programs of fault.fork-pass and fault.inv-wx-toggle,
# into ${fault_bin}:
#   fk_prog          forks from several threads while passes run (the
#                    start-up pass of a deferred worker, the passes after
#                    its own dlopens) and counts the children stuck in their
#                    first dlopen; 8 MiB of text of its own (the integration
#                    tests' generated functions)
#   libfk_child.so   the small library those children dlopen (fk_prog.c
#                    built with FK_CHILD_LIB: one function)
#   wx_toggle        a JIT's W^X page toggling (RW -> RX -> RW, page by page
#                    and whole 2 MiB windows) that prints how many mappings
#                    it leaves
add_executable(et_fault_fk_prog fk_prog.c $<TARGET_OBJECTS:et_it_bt_exe_funcs>)
set_target_properties(et_fault_fk_prog PROPERTIES OUTPUT_NAME fk_prog
  RUNTIME_OUTPUT_DIRECTORY ${fault_bin} SKIP_BUILD_RPATH TRUE)
target_include_directories(et_fault_fk_prog PRIVATE ${PROJECT_SOURCE_DIR}/tests/integration)
target_compile_options(et_fault_fk_prog PRIVATE ${fault_warn})
add_dependencies(et_fault_fk_prog et_it_sources)
find_package(Threads REQUIRED)
target_link_libraries(et_fault_fk_prog PRIVATE Threads::Threads ${CMAKE_DL_LIBS})

add_library(et_fault_fk_child SHARED fk_prog.c)
set_target_properties(et_fault_fk_child PROPERTIES OUTPUT_NAME fk_child
  LIBRARY_OUTPUT_DIRECTORY ${fault_bin} SKIP_BUILD_RPATH TRUE)
target_compile_definitions(et_fault_fk_child PRIVATE FK_CHILD_LIB)
target_compile_options(et_fault_fk_child PRIVATE ${fault_warn})

add_executable(et_fault_wx_toggle wx_toggle.c)
set_target_properties(et_fault_wx_toggle PROPERTIES OUTPUT_NAME wx_toggle
  RUNTIME_OUTPUT_DIRECTORY ${fault_bin})
target_compile_options(et_fault_wx_toggle PRIVATE ${fault_warn})

# fork-pass runs a few dozen short programs, each forking hundreds of
# times, plainly and preloaded; it forks fast enough to matter only alone.
list(APPEND fault_timeouts fork-pass=240 inv-wx-toggle=180)
list(APPEND fault_serial fork-pass)
