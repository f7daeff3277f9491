# profile.cmake — the profile tests' helper (profile_scale.sh), built into
# ${fault_bin}:
#   profile_gen   writes a large ENORMOUSTEXT_PROFILE file: hundreds of
#                 thousands of made-up objects around the real ones a test
#                 names (see profile_gen.c)

add_executable(et_fault_profile_gen profile_gen.c)
set_target_properties(et_fault_profile_gen PROPERTIES OUTPUT_NAME profile_gen RUNTIME_OUTPUT_DIRECTORY ${fault_bin})
target_compile_options(et_fault_profile_gen PRIVATE ${fault_warn})
