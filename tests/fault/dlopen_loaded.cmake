# dlopen_loaded.sh: a dlopen of a library that is already loaded runs no pass.
add_executable(dl_reopen dl_reopen.c)
target_compile_options(dl_reopen PRIVATE ${fault_warn})
target_link_libraries(dl_reopen PRIVATE ${CMAKE_DL_LIBS})
set_target_properties(dl_reopen PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${fault_bin})
