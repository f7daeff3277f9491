# cmake/uninstall.cmake — the `uninstall` target (top-level CMakeLists.txt):
# removes exactly the files that the last `cmake --install` (or `make
# install`) of this build tree wrote, as its install_manifest.txt lists
# them, and says each one it removed.
#
#   cmake --build build --target uninstall
#   DESTDIR=/tmp/stage cmake --build build --target uninstall   # after a DESTDIR install
#
# The manifest names each file as installed under the prefix, without
# DESTDIR: DESTDIR from the environment is put in front of each, as the
# install did.  Directories are left (an empty one may have been there
# before: /usr/local/share/man/man3).  No manifest is an error, and so is a
# file that is there and cannot be removed; a listed file that is already
# gone is said, not an error.
#
# Run as: cmake -DET_MANIFEST=<build>/install_manifest.txt -P uninstall.cmake

if(NOT ET_MANIFEST)
  message(FATAL_ERROR "uninstall: ET_MANIFEST is not set (the uninstall target sets it)")
endif()
if(NOT EXISTS "${ET_MANIFEST}")
  message(FATAL_ERROR "uninstall: no ${ET_MANIFEST}: nothing was installed from this build tree "
    "(cmake --install writes that list of the files it installs), so there is nothing to remove; "
    "an installation made from another build tree is removed by that tree's uninstall target")
endif()

set(et_destdir "$ENV{DESTDIR}")
set(et_destdir_note "")
if(et_destdir)
  set(et_destdir_note " (under DESTDIR=${et_destdir})")
endif()
file(STRINGS "${ET_MANIFEST}" et_files)
set(et_removed 0)
set(et_gone 0)
set(et_failed "")
foreach(f IN LISTS et_files)
  if(f STREQUAL "")
    continue()
  endif()
  set(p "${et_destdir}${f}")
  if(IS_SYMLINK "${p}" OR EXISTS "${p}")
    if(IS_DIRECTORY "${p}" AND NOT IS_SYMLINK "${p}")
      message(STATUS "Not removed (a directory): ${p}")
      list(APPEND et_failed "${p}")
      continue()
    endif()
    file(REMOVE "${p}")
    if(IS_SYMLINK "${p}" OR EXISTS "${p}")
      list(APPEND et_failed "${p}")
      message(STATUS "Could not remove: ${p}")
    else()
      message(STATUS "Removed: ${p}")
      math(EXPR et_removed "${et_removed} + 1")
    endif()
  else()
    message(STATUS "Already gone: ${p}")
    math(EXPR et_gone "${et_gone} + 1")
  endif()
endforeach()

list(LENGTH et_failed et_nfailed)
if(et_nfailed GREATER 0)
  list(JOIN et_failed ", " et_failed_text)
  message(FATAL_ERROR "uninstall: ${et_nfailed} file(s) of ${ET_MANIFEST} could not be removed "
    "(${et_failed_text}): run it as the user who installed them (root for /usr/local)")
endif()
message(STATUS "uninstall: removed ${et_removed} file(s) listed in ${ET_MANIFEST}"
  "${et_destdir_note}; ${et_gone} were already gone; directories are left")
