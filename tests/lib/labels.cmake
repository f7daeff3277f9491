# tests/lib/labels.cmake — labels per feature, so that the tests of one
# feature run together wherever their folder:
#   ctest --test-dir BUILD -L defer         (ctest --print-labels lists them)
#
# Included at the end of each test folder's CMakeLists.txt: every test
# defined in that folder so far gets the label of each feature whose name
# pattern matches the test's name, or whose text pattern matches its own
# script (tests/FOLDER/NAME.sh for FOLDER.NAME or tool_NAME; the C source
# for unit_NAME).  A test keeps the labels its folder gave it (fault,
# integration, tool, ...).  A new feature: one line below, and a paragraph
# in tests/README.md.
#
# Also the label `slow`: the tests that took 5 s or more each on the
# project's 2-core machine in any of the full runs with ctest -j2 measured
# so far (NAME=SECONDS below, the longest of them, or the latest where a
# test was made shorter; tests/README.md says how to measure again); the seconds are also the test's COST.  tools/run-tests --quick runs everything else
# (ctest -LE slow).
#
# (layout.command is defined from tools/CMakeLists.txt, by
# tests/layout/CMakeLists.txt's et_layout_command_test, which labels it.)
#
# (CMake regular expressions: no \b, no non-greedy; ';' cannot appear.)

# Each line: LABEL@NAME-PATTERN@TEXT-PATTERN (the text pattern may be empty).
set(et_features
  "defer@defer|defaults@ENORMOUSTEXT_DEFER"
  "prime@prime@ENORMOUSTEXT_PRIME|cachestat"
  "hostwide@enable|hostwide|setup_|systemd|install@ld\\.so\\.preload|enable --all|/etc/enormoustext"
  "jit@jit|java@--jit|anon:jit"
  "record@record@ENORMOUSTEXT_RECORD|\" record "
  "hot@hot@ENORMOUSTEXT_HOT"
  "memcg@memcg|cgroup@memory\\.max|cgroup\\.procs"
  "fork@fork@fork_test|fk_prog"
  "seccomp@seccomp|secure@sk_prog|SECCOMP_MODE_FILTER|ENORMOUSTEXT_SECCOMP"
  "dlopen@dlopen|dlclose|dlmopen|loader@dlopen_test|dr_probe"
  "uprobe@uprobe@uprobe_events"
  "profile@profile@ENORMOUSTEXT_PROFILE"
  "perfmap@perfmap@ENORMOUSTEXT_PERFMAP"
  "report@report|outpaths@ENORMOUSTEXT_REPORT"
  "backend@backend|hugetlb|collapse|thp@ENORMOUSTEXT_BACKEND"
  "wx@wx|mdwe|execmem@PR_SET_MDWE"
  "signal@signal|sigreset@"
  "compare@compare|itlb@--counters"
  "docs@^docs\\.|docs_|help@"
  "pkg@package|install@"
  "fleet@^deploy\\.@"
  "daemon@daemon|oci_hook@\" daemon ")

set(et_slow_tests
  deploy.ansible=225 fault.syscalls=132 deploy.debs=71 itlb_model_validation=67
  integration.jit.java=56 integration.record.timer=52 tool_compare_verdict=50
  fault.seccomp-kill=47 fault.badvalues=38 tool_profile_import=37 fault.swaps=37
  integration.musl=28 tool_compare=27 tool_help=26 integration.stress=25
  fault.memcg-growth=25 fault.memcg-cgroup2=60 integration.defaults.short=24 tool_enable=23
  fault.fork_dlopen_api=22 tool_enable_all=21 fault.fork-pass=21
  integration.defaults.prime.overlay=21 fault.inv-fds=21 fault.defer-tasks=21
  fuzz.perfdata=20 fault.uprobe=19 fault.dlclose_race=18 fuzz.profile=18
  fault.defer-rate=17 integration.defaults.shared=17
  integration.defaults.prime.replaced=16 integration.defaults.prime.dirty=16
  fault.rlimits=15 fault.sigreset=14 fault.defer-unshare=14 docs.outputs=14
  tool_record=13 integration.defaults.prime.others=13 fault.dlopen_resolve=13
  tool_daemon_storm=32 tool_daemon_faults=17 tool_daemon_fs=12 tool_prime=12 tool_daemon=14 integration.defaults.copies=12 fault.defer-long=12
  integration.jit.thp=12 fault.defer-tick=11 linker.runtime.bfd=11 tool_status_edges=11
  integration.loader.failing=10 tool_progress=10 fault.thp_matrix=10
  linker.runtime.lld=10 integration.jit=10 fault.dlopen_pass=10 tool_status_explain=9
  fault.defer-thp-off=9 tool_hostwide_startup=9 fault.wx=8 tool_package=8
  tool_enable_binary=8 integration.defaults.prime.nocachestat=8
  integration.record.env=7 tool_setup_json=7 fault.prime-mapped-elsewhere=7
  fault.inv-wx-toggle=7 tool_profile_order=7 tool_install=6 fault.defer-hot-auto=6
  tool_systemd_example=6 tool_collapse_java=6 fault.inv-closefrom=6
  linker.alone.aarch64_16k=6 fault.defer-dlopen=6 fault.signal_swap=6
  tool_check_script=5 integration.defaults.prime.robind=5 linker.alone.bfd=5
  linker.alone.lld=5 fault.btrfs-identity=5 fault.defer-exit=5 tool_check_bad_input=5
  tool_profile=5 deploy.kubernetes=5)

get_property(et_label_tests DIRECTORY PROPERTY TESTS)
foreach(et_t IN LISTS et_label_tests)
  # the test's own source, where its name says which it is
  string(REGEX REPLACE "^(fault|integration|linker|docs|layout|fuzz|example|deploy)\\.|^(tool|unit)_" "" et_rest "${et_t}")
  set(et_text "")
  foreach(et_f "${CMAKE_CURRENT_SOURCE_DIR}/${et_rest}.sh" "${CMAKE_CURRENT_SOURCE_DIR}/test_${et_rest}.c"
               "${CMAKE_CURRENT_SOURCE_DIR}/${et_rest}.c")
    if(EXISTS "${et_f}")
      file(READ "${et_f}" et_text)
      set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${et_f}")
      break()
    endif()
  endforeach()
  set(et_labels "")
  foreach(et_rule IN LISTS et_features)
    string(REGEX MATCH "^([^@]+)@([^@]+)@(.*)$" et_m "${et_rule}")
    set(et_label "${CMAKE_MATCH_1}")
    set(et_name_re "${CMAKE_MATCH_2}")
    set(et_text_re "${CMAKE_MATCH_3}")
    if(et_t MATCHES "${et_name_re}" OR (NOT et_text_re STREQUAL "" AND et_text MATCHES "${et_text_re}"))
      list(APPEND et_labels ${et_label})
    endif()
  endforeach()
  # slow, and its seconds as its COST: without a history (a fresh build
  # directory has no Testing/Temporary/CTestCostData.txt) ctest -j starts
  # the longest first, so that fault.syscalls (3 minutes) does not begin
  # last and run alone at the end.
  foreach(et_s IN LISTS et_slow_tests)
    if(et_s MATCHES "^(.*)=([0-9]+)$" AND CMAKE_MATCH_1 STREQUAL et_t)
      list(APPEND et_labels slow)
      set_tests_properties(${et_t} PROPERTIES COST ${CMAKE_MATCH_2})
      break()
    endif()
  endforeach()
  if(et_labels)
    set_property(TEST ${et_t} APPEND PROPERTY LABELS ${et_labels})
  endif()
endforeach()
