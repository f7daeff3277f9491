# uprobe.cmake — the helpers of fault.uprobe (uprobe.sh):
#   up_race   runs a program and writes to files (tracefs enable files) at
#             set moments of its life (see its banner)
#   up_prog   dp_prog (defer.cmake) linked with linker-scripts/enormous.ld:
#             its text windows are congruent with their file offsets, so
#             ENORMOUSTEXT_BACKEND=file can map them huge from the file
#             (zero-copy) once `enormoustext prime` has put them in the
#             page cache as huge folios
add_executable(fault_up_race ${CMAKE_CURRENT_SOURCE_DIR}/up_race.c)
set_target_properties(fault_up_race PROPERTIES OUTPUT_NAME up_race RUNTIME_OUTPUT_DIRECTORY ${fault_bin})
target_compile_options(fault_up_race PRIVATE ${fault_warn})

add_executable(fault_up_prog ${CMAKE_CURRENT_SOURCE_DIR}/dp_prog.c $<TARGET_OBJECTS:et_it_bt_exe_funcs>)
set_target_properties(fault_up_prog PROPERTIES OUTPUT_NAME up_prog
  RUNTIME_OUTPUT_DIRECTORY ${fault_bin} SKIP_BUILD_RPATH TRUE)
target_include_directories(fault_up_prog PRIVATE ${PROJECT_SOURCE_DIR}/tests/integration)
target_compile_options(fault_up_prog PRIVATE ${fault_warn})
target_link_options(fault_up_prog PRIVATE -Wl,--fatal-warnings
  -Wl,-T,${PROJECT_SOURCE_DIR}/linker-scripts/enormous.ld)
set_property(TARGET fault_up_prog APPEND PROPERTY LINK_DEPENDS ${PROJECT_SOURCE_DIR}/linker-scripts/enormous.ld)
add_dependencies(fault_up_prog et_it_sources)
target_link_libraries(fault_up_prog PRIVATE ${CMAKE_DL_LIBS})
# uprobe.sh enables probes within a 2 ms window of another process's life
# and changes tracefs: alone, with room for a slow machine
list(APPEND fault_timeouts uprobe=180)
list(APPEND fault_serial uprobe)
