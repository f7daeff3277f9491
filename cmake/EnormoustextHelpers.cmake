# EnormoustextHelpers.cmake — enormoustext_huge_text(): lay out a target's
# text for huge pages at link time and link libenormoustext.
#
#   find_package(enormoustext REQUIRED)
#   add_executable(app main.c)
#   enormoustext_huge_text(app)                # the script + -lenormoustext
#   enormoustext_huge_text(plugin NO_LINK)     # a shared library: layout only
#   enormoustext_huge_text(app LINKER gold)    # say which linker, when CMake
#                                              # cannot see it in the flags
#
# With GNU ld (bfd) and lld: -T enormous.ld alone (it aligns, pads and
# makes the text congruent by itself).  gold and mold cannot take the
# script: there, the flags alone (-z max-page-size=0x200000, plus
# -z separate-code for mold), and the library pads the text's last window
# at run time.  The linker is found from -fuse-ld= in the
# target's LINK_OPTIONS and CMAKE_<LANG>_FLAGS / CMAKE_EXE_LINKER_FLAGS /
# CMAKE_SHARED_LINKER_FLAGS, else it is the compiler's default (bfd on
# Debian).
#
# ENORMOUSTEXT_LINKER_SCRIPT must name enormous.ld (the package config and
# the project's own CMakeLists set it).

function(enormoustext_huge_text target)
  cmake_parse_arguments(PARSE_ARGV 1 ET "NO_LINK" "LINKER" "")
  if(NOT TARGET ${target})
    message(FATAL_ERROR "enormoustext_huge_text: '${target}' is not a target")
  endif()
  if(NOT ENORMOUSTEXT_LINKER_SCRIPT OR NOT EXISTS "${ENORMOUSTEXT_LINKER_SCRIPT}")
    message(FATAL_ERROR "enormoustext_huge_text: ENORMOUSTEXT_LINKER_SCRIPT "
                        "('${ENORMOUSTEXT_LINKER_SCRIPT}') does not name enormous.ld")
  endif()
  set(linker "${ET_LINKER}")
  if(NOT linker)
    get_target_property(opts ${target} LINK_OPTIONS)
    set(all "${opts} ${CMAKE_C_FLAGS} ${CMAKE_CXX_FLAGS} ${CMAKE_EXE_LINKER_FLAGS} ${CMAKE_SHARED_LINKER_FLAGS}")
    if(all MATCHES "-fuse-ld=([a-z.]+)")
      set(linker "${CMAKE_MATCH_1}")
    else()
      set(linker bfd)
    endif()
  endif()
  if(linker STREQUAL "gold")
    target_link_options(${target} PRIVATE "LINKER:-z,max-page-size=0x200000")
  elseif(linker STREQUAL "mold")
    target_link_options(${target} PRIVATE "LINKER:-z,max-page-size=0x200000" "LINKER:-z,separate-code")
  elseif(linker STREQUAL "bfd" OR linker STREQUAL "lld" OR linker STREQUAL "ld")
    target_link_options(${target} PRIVATE "LINKER:-T,${ENORMOUSTEXT_LINKER_SCRIPT}")
    set_property(TARGET ${target} APPEND PROPERTY LINK_DEPENDS "${ENORMOUSTEXT_LINKER_SCRIPT}")
  else()
    message(FATAL_ERROR "enormoustext_huge_text: linker '${linker}' is not bfd, lld, gold or mold")
  endif()
  if(NOT ET_NO_LINK)
    if(TARGET enormoustext::enormoustext)
      set(lib enormoustext::enormoustext)
    else()
      set(lib enormoustext)     # inside the libenormoustext project itself
    endif()
    # Nothing calls the library: keep it linked so that its constructor runs.
    target_link_libraries(${target} PRIVATE "-Wl,--no-as-needed" ${lib} "-Wl,--as-needed")
  endif()
endfunction()
