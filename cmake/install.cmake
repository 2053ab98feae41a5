# install.cmake — what `make install` puts on a machine, and how: brisk as libraries other programs embed.
#
# Installed (PREFIX default /usr/local; DESTDIR honoured; README "Installing and embedding"):
#   include/brisk/   the public headers, by library:
#                      libbrisk          brisk.h (stack, settings, sockets, counters), netdev.h (driver API)
#                      libbrisk_sim      sim.h (the deterministic simulator)
#                      libbrisk_drivers  loop.h (the real-time event loop), tap.h (the TAP driver)
#   lib/             (GNUInstallDirs' libdir: lib/<multiarch> under /usr) each library shared (libbrisk.so ->
#                    libbrisk.so.0 -> libbrisk.so.0.1.0, SONAME libbrisk.so.0) and static (libbrisk.a)
#   lib/pkgconfig/   brisk.pc, brisk-sim.pc, brisk-drivers.pc: `pkg-config --libs brisk-sim` puts the libraries
#                    in the order the linker needs (-lbrisk_sim -lbrisk), --static adds -lm
#   bin/             brisk-lab, brisk-perf, brisk-bench, brisk-ss, brisk-nstat; share/man/man1/ their pages,
#                    made from their --help
#   share/brisk/scenarios/  brisk-lab's scenario files (the seed scenarios among them: docs/lab.md)
#
# The installed libraries are compiled once more, apart from the in-tree static libraries the tools and tests
# link (those stay as they are: non-PIC, LTO bytecode only, so the tools' figures do not move):
#   - position-independent, with -fno-semantic-interposition so that calls inside a library stay direct and
#     inlinable as in the static build (nothing outside may interpose on them: the version script hides all but
#     the API anyway);
#   - under BRISK_LTO with gcc, with -ffat-lto-objects: every archive member carries machine code beside the
#     LTO bytecode, so the archives link with any compiler (a clang user's link otherwise fails with "plugin
#     needed to handle lto object"), and gcc -flto users still get the cross-file inlining. A compiler that
#     cannot emit fat objects (clang before 17) builds the installed libraries without LTO instead.
#
# Exported symbols: each shared library exports exactly the functions its headers declare, listed one per line
# in tests/install/<lib>.symbols; the linker version script (node BRISK_0, `local: *` for everything else) is
# written from that list at configure time. tests/install/test_install.sh checks both directions in make test:
# the .so's dynamic symbols equal the list, and the list equals the functions the headers declare (gcc
# -aux-info), so an accidental export, a removed function or a declared-but-hidden one fails.
#
# libbrisk_sim and libbrisk_drivers use a few of libbrisk's internal helpers (the PRNG, the checksum and wire
# parsers, software GSO): pure functions without state, which libbrisk does not export. Each of the two shared
# libraries carries its own hidden copy of them (brisk_helpers_pic below) rather than libbrisk exporting
# internals; the static archives need no copies (libbrisk.a has them, and static linking sees every symbol).
# Should they come to use another internal function, their link fails naming it (-z defs): add its file to
# BRISK_HELPER_SRC.
include(GNUInstallDirs)
include(CheckCCompilerFlag)

set(BRISK_SOVERSION 0)

# The helpers libbrisk_sim and libbrisk_drivers need from libbrisk's sources (see above).
file(GLOB BRISK_HELPER_SRC CONFIGURE_DEPENDS src/wire/*.c)
list(APPEND BRISK_HELPER_SRC ${CMAKE_SOURCE_DIR}/src/core/rand.c ${CMAKE_SOURCE_DIR}/src/net/gso.c)
set(BRISK_CORE_REST_SRC ${BRISK_SRC})
list(REMOVE_ITEM BRISK_CORE_REST_SRC ${BRISK_HELPER_SRC})

set(brisk_install_lto OFF)
if(CMAKE_INTERPROCEDURAL_OPTIMIZATION)
    check_c_compiler_flag(-ffat-lto-objects brisk_fat_lto_ok)
    if(brisk_fat_lto_ok)
        set(brisk_install_lto ON)
    else()
        message(STATUS "brisk: ${CMAKE_C_COMPILER_ID} ${CMAKE_C_COMPILER_VERSION} cannot emit fat LTO objects: "
                       "the installed libraries are built without LTO")
    endif()
endif()

# brisk_pic_objects(NAME SOURCES...): an object library of installed-library code.
function(brisk_pic_objects name)
    add_library(${name} OBJECT ${ARGN})
    set_target_properties(${name} PROPERTIES POSITION_INDEPENDENT_CODE ON
                                             INTERPROCEDURAL_OPTIMIZATION ${brisk_install_lto})
    target_compile_options(${name} PRIVATE -fno-semantic-interposition)
    if(brisk_install_lto)
        target_compile_options(${name} PRIVATE -ffat-lto-objects)
    endif()
endfunction()
brisk_pic_objects(brisk_helpers_pic ${BRISK_HELPER_SRC})
brisk_pic_objects(brisk_core_pic ${BRISK_CORE_REST_SRC})
brisk_pic_objects(brisk_sim_pic ${BRISK_SIM_SRC})
brisk_pic_objects(brisk_drivers_pic ${BRISK_DRIVERS_SRC})

set(BRISK_INSTALL_LIBDIR ${CMAKE_BINARY_DIR}/installed-libs) # apart from the in-tree libbrisk*.a

# brisk_installed_lib(LIB OBJECTS... [LINK libs...]): LIB's shared library (target LIB_shared) and static
# archive (LIB_static), both named libLIB.
function(brisk_installed_lib lib)
    cmake_parse_arguments(A "" "" "OBJECTS;STATIC_OBJECTS;LINK" ${ARGN})
    set(symbols ${CMAKE_SOURCE_DIR}/tests/install/lib${lib}.symbols)
    set(map ${CMAKE_BINARY_DIR}/lib${lib}.map)
    set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${symbols})
    file(STRINGS ${symbols} names REGEX "^[a-z_][a-z0-9_]*$")
    list(JOIN names ";\n        " body)
    file(WRITE ${map}.tmp "/* written by cmake/install.cmake from tests/install/lib${lib}.symbols */\n"
                          "BRISK_0 {\n    global:\n        ${body};\n    local:\n        *;\n};\n")
    configure_file(${map}.tmp ${map} COPYONLY) # rewritten only when it changes: no needless relink

    set(objs)
    foreach(o ${A_OBJECTS})
        list(APPEND objs $<TARGET_OBJECTS:${o}>)
    endforeach()
    add_library(${lib}_shared SHARED ${objs})
    set_target_properties(${lib}_shared PROPERTIES OUTPUT_NAME ${lib} VERSION ${PROJECT_VERSION}
        SOVERSION ${BRISK_SOVERSION} LIBRARY_OUTPUT_DIRECTORY ${BRISK_INSTALL_LIBDIR} LINK_DEPENDS ${map}
        INTERPROCEDURAL_OPTIMIZATION ${brisk_install_lto})
    target_link_options(${lib}_shared PRIVATE -Wl,--version-script=${map})
    if(NOT BRISK_SANITIZE AND NOT BRISK_FUZZ)
        # Every symbol a library needs comes from its own dependencies (the sanitizer runtimes are the
        # executable's business, so not there).
        target_link_options(${lib}_shared PRIVATE -Wl,-z,defs)
    endif()
    target_link_libraries(${lib}_shared PRIVATE ${A_LINK})

    set(sobjs)
    foreach(o ${A_STATIC_OBJECTS})
        list(APPEND sobjs $<TARGET_OBJECTS:${o}>)
    endforeach()
    add_library(${lib}_static STATIC ${sobjs})
    set_target_properties(${lib}_static PROPERTIES OUTPUT_NAME ${lib}
        ARCHIVE_OUTPUT_DIRECTORY ${BRISK_INSTALL_LIBDIR} INTERPROCEDURAL_OPTIMIZATION ${brisk_install_lto})
    install(TARGETS ${lib}_shared ${lib}_static LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
            ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
endfunction()

brisk_installed_lib(brisk OBJECTS brisk_helpers_pic brisk_core_pic
                    STATIC_OBJECTS brisk_helpers_pic brisk_core_pic LINK m)
brisk_installed_lib(brisk_sim OBJECTS brisk_sim_pic brisk_helpers_pic STATIC_OBJECTS brisk_sim_pic
                    LINK brisk_shared m)
brisk_installed_lib(brisk_drivers OBJECTS brisk_drivers_pic brisk_helpers_pic STATIC_OBJECTS brisk_drivers_pic
                    LINK brisk_shared m)

install(FILES include/brisk/brisk.h include/brisk/netdev.h include/brisk/sim.h include/brisk/loop.h
              include/brisk/tap.h DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/brisk)

# pkg-config files. Their prefix is the one the install goes to, known only at install time (`cmake --install
# --prefix P` may differ from the configured CMAKE_INSTALL_PREFIX): configure_file fills in the rest now, an
# install step writes each file with the prefix straight into the destination (the build tree may be another
# user's, or read-only, at install time). A DESTDIR install keeps the real prefix, as a package does; point
# pkg-config into such a tree with PKG_CONFIG_PATH and PKG_CONFIG_SYSROOT_DIR (tests/install/test_install.sh).
set(BRISK_PC_PREFIX "@BRISK_INSTALL_PREFIX@")
foreach(pc brisk brisk-sim brisk-drivers)
    configure_file(cmake/${pc}.pc.in ${CMAKE_BINARY_DIR}/pkgconfig/${pc}.pc.in @ONLY)
    install(CODE "set(BRISK_INSTALL_PREFIX \"\${CMAKE_INSTALL_PREFIX}\")
        set(pc \"\$ENV{DESTDIR}\${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_LIBDIR}/pkgconfig/${pc}.pc\")
        message(STATUS \"Installing: \${pc}\")
        configure_file(\"${CMAKE_BINARY_DIR}/pkgconfig/${pc}.pc.in\" \"\${pc}\" @ONLY)
        list(APPEND CMAKE_INSTALL_MANIFEST_FILES \"\${pc}\")")
endforeach()

install(TARGETS brisk-lab brisk-perf brisk-bench brisk-ss brisk-nstat RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
# The scenario files (the seeds among them: `brisk-lab seeds` runs those) beside the binary's share directory;
# brisk-lab looks there (bin/../share/brisk/scenarios), and in the source tree it was built from.
install(DIRECTORY scenarios/ DESTINATION ${CMAKE_INSTALL_DATADIR}/brisk/scenarios FILES_MATCHING PATTERN "*.yaml")
target_compile_definitions(brisk-lab PRIVATE BRISK_LAB_SOURCE_SCENARIOS="${CMAKE_SOURCE_DIR}/scenarios"
                                             BRISK_LAB_DATA_SCENARIOS="${CMAKE_INSTALL_FULL_DATADIR}/brisk/scenarios")

# Manual pages from each tool's --help (help2man, Debian's help2man: scripts/deps.sh), with the extra sections
# of cmake/man/<tool>.h2m. Without help2man they are not made, and the install test says so and fails.
find_program(HELP2MAN help2man)
if(HELP2MAN)
    set(pages)
    foreach(tool brisk-lab brisk-perf brisk-bench brisk-ss brisk-nstat)
        set(page ${CMAKE_BINARY_DIR}/man/${tool}.1)
        set(inc ${CMAKE_SOURCE_DIR}/cmake/man/${tool}.h2m)
        file(STRINGS ${inc} name LIMIT_COUNT 1 REGEX "^# name: ")
        string(REGEX REPLACE "^# name: " "" name "${name}")
        set(wrap ${CMAKE_BINARY_DIR}/man/wrap/${tool}) # cmake/man/help.sh under the tool's name
        add_custom_command(OUTPUT ${page}
            COMMAND ${CMAKE_COMMAND} -E make_directory ${CMAKE_BINARY_DIR}/man/wrap
            COMMAND ${CMAKE_COMMAND} -E create_symlink ${CMAKE_SOURCE_DIR}/cmake/man/help.sh ${wrap}
            COMMAND ${CMAKE_COMMAND} -E env BRISK_MAN_TOOL=$<TARGET_FILE:${tool}>
                    ${HELP2MAN} --no-info --no-discard-stderr --version-string=${PROJECT_VERSION}
                    --name=${name} --include=${inc} --output=${page} ${wrap}
            DEPENDS ${tool} ${inc} ${CMAKE_SOURCE_DIR}/cmake/man/help.sh VERBATIM)
        list(APPEND pages ${page})
    endforeach()
    add_custom_target(man ALL DEPENDS ${pages})
    install(FILES ${pages} DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
else()
    message(WARNING "brisk: help2man not found (scripts/deps.sh installs it): no manual pages")
endif()

# The install test (tests/install/test_install.sh): installs into a temporary DESTDIR, checks the exported
# symbols, builds examples/ against the installed tree with gcc and clang (shared and static) and runs them.
# The sanitizer build's libraries need the sanitizer runtime in every program: the test skips there.
add_test(NAME install/test_install COMMAND bash ${CMAKE_SOURCE_DIR}/tests/install/test_install.sh
         ${CMAKE_BINARY_DIR} $<BOOL:${BRISK_SANITIZE}>)
set_tests_properties(install/test_install PROPERTIES TIMEOUT 300 SKIP_RETURN_CODE 77 RUN_SERIAL TRUE)
