# dlresolve.cmake — the objects of the dlopen-resolution tests
# (dlopen_resolve.sh, dlopen_pass.sh), compiled into ${fault_bin}:
#   dr_probe.o   the program (position-independent), linked by the scripts
#                into programs with the RUNPATH/RPATH each case lays out
#   dr_caller.o  a library that calls dlopen (linked into libraries, idem)
#   dr_ctor.o    a library whose constructor calls dlopen
#   dr_ident.o   a library that returns its identity (dr_ident_undef.o: one
#                that refers to a function nothing defines)
# The scripts link everything with `cc` at run time: the directory layouts,
# sonames and paths are the point of each case.  The loader behaviour they
# compare is glibc's (dlmopen, RTLD_DI_LMID, DT_RPATH inheritance).

set(dr_objects)
foreach(dr probe caller ctor ident ident_undef)
  set(dr_def)
  set(dr_src ${CMAKE_CURRENT_SOURCE_DIR}/dr_${dr}.c)
  if(dr STREQUAL "ident_undef")
    set(dr_def -DDR_UNDEF)
    set(dr_src ${CMAKE_CURRENT_SOURCE_DIR}/dr_ident.c)
  endif()
  set(dr_obj ${fault_bin}/dr_${dr}.o)
  # -O2 on purpose: dr_call_dlopen_tail must compile to a tail call.
  add_custom_command(
    OUTPUT ${dr_obj}
    COMMAND ${CMAKE_C_COMPILER} -std=gnu11 -O2 -fPIC ${fault_warn} ${dr_def}
            -I${PROJECT_SOURCE_DIR}/tests/integration -c ${dr_src} -o ${dr_obj}
    DEPENDS ${dr_src} ${PROJECT_SOURCE_DIR}/tests/integration/it_text.h
    COMMENT "Compiling the dlopen-resolution test object dr_${dr}.o"
    VERBATIM)
  list(APPEND dr_objects ${dr_obj})
endforeach()
add_custom_target(et_fault_dr_objects ALL DEPENDS ${dr_objects})
list(APPEND fault_env FAULT_CC=${CMAKE_C_COMPILER})
# Some 60 links at run time: slow on a loaded machine.
list(APPEND fault_timeouts dlopen_resolve=300 dlopen_pass=300)
