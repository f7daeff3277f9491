# inv-mdwe.cmake — mdwe_run, the launcher of fault.inv-mdwe: a command
# under memory-deny-write-execute (prctl PR_SET_MDWE).
add_executable(fault_mdwe_run ${CMAKE_CURRENT_SOURCE_DIR}/mdwe_run.c)
set_target_properties(fault_mdwe_run PROPERTIES OUTPUT_NAME mdwe_run RUNTIME_OUTPUT_DIRECTORY ${fault_bin})
target_compile_options(fault_mdwe_run PRIVATE ${fault_warn})
