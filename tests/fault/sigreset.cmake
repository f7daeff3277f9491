# sigreset.sh: SIGPROF reset through sysv_signal, bsd_signal, sigset.
add_executable(sr_reset sr_reset.c)
target_compile_options(sr_reset PRIVATE ${fault_warn} -Wno-deprecated-declarations)
set_target_properties(sr_reset PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${fault_bin})
