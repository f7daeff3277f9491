# concurrency.cmake — the programs of the concurrency tests
# (fork_dlopen_api.sh, swaps.sh, dlclose_race.sh, signal_swap.sh), built
# into ${fault_bin}.  They reuse the generated big-text functions of the
# integration tests (tests/integration/gen: 8 MiB of text an object) and
# find the library's API at run time, so that each runs with and without
# the library.

find_package(Threads REQUIRED)
set(cc_inc ${PROJECT_SOURCE_DIR}/tests/integration ${PROJECT_SOURCE_DIR}/libenormoustext/include
    ${CMAKE_CURRENT_SOURCE_DIR})
# The generated functions: tests/integration's objects (et_it_bt_lib_obj,
# et_it_bt_exe_funcs), written by its generator (et_it_sources).

# A big library (8 MiB of text) with a constructor.
add_library(et_fault_cc_ctor SHARED cc_ctor_lib.c $<TARGET_OBJECTS:et_it_bt_lib_obj>)
set_target_properties(et_fault_cc_ctor PROPERTIES OUTPUT_NAME cc_ctor
  LIBRARY_OUTPUT_DIRECTORY ${fault_bin} SKIP_BUILD_RPATH TRUE)
target_include_directories(et_fault_cc_ctor PRIVATE ${cc_inc})
target_compile_options(et_fault_cc_ctor PRIVATE ${fault_warn})
target_link_libraries(et_fault_cc_ctor PRIVATE ${CMAKE_DL_LIBS})
add_dependencies(et_fault_cc_ctor et_it_sources)

# cc_swaps carries 8 MiB of text of its own (the executable's windows).
foreach(p fork_dlopen_api swaps dlclose_race signal_swap)
  set(srcs cc_${p}.c)
  if(p STREQUAL "swaps")
    list(APPEND srcs $<TARGET_OBJECTS:et_it_bt_exe_funcs>)
  endif()
  add_executable(et_fault_cc_${p} ${srcs})
  set_target_properties(et_fault_cc_${p} PROPERTIES OUTPUT_NAME cc_${p}
    RUNTIME_OUTPUT_DIRECTORY ${fault_bin} SKIP_BUILD_RPATH TRUE)
  target_include_directories(et_fault_cc_${p} PRIVATE ${cc_inc})
  target_compile_options(et_fault_cc_${p} PRIVATE ${fault_warn})
  target_link_libraries(et_fault_cc_${p} PRIVATE Threads::Threads ${CMAKE_DL_LIBS})
  add_dependencies(et_fault_cc_${p} et_it_sources)
endforeach()
# cc_publish_table is looked up by the library's constructor (dlsym).
set_target_properties(et_fault_cc_signal_swap PROPERTIES ENABLE_EXPORTS ON)

# Each runs its program plainly and preloaded; 10,000 swaps take a minute
# on a quiet machine with 2 cores, several on a loaded one.
list(APPEND fault_timeouts fork_dlopen_api=120 swaps=600 dlclose_race=180 signal_swap=240)
list(APPEND fault_serial fork_dlopen_api swaps dlclose_race signal_swap)
