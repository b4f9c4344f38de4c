# What `cmake --install` puts in place, the CMake package it exports and the
# Debian package `cpack -G DEB` builds (docs/install.md). Included from the top
# CMakeLists.txt once every library target exists.
#
#   bin/admitsim                          the CLI
#   include/admitsim/{gate,sim,reports}/  the headers, at their source-tree paths
#   lib/libadmitsim_*.a                   the static libraries
#   lib/cmake/admitsim/                   admitsimConfig.cmake, its version file,
#                                         the targets (namespace admitsim::) and
#                                         admitsimLua51.cmake
#   share/admitsim/                       the data the CLI reads at run time: the
#                                         scenarios and, at their source-tree
#                                         paths, the lease protocols and Lua files
#                                         the scenarios name by relative path,
#                                         and the Python adapter of process gates
include(CMakePackageConfigHelpers)

set(ADMITSIM_INSTALL_INCLUDEDIR ${CMAKE_INSTALL_INCLUDEDIR}/admitsim)
set(ADMITSIM_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/admitsim)
set(ADMITSIM_INSTALL_DATADIR ${CMAKE_INSTALL_DATADIR}/admitsim)

# --- the two umbrella targets -------------------------------------------------
# admitsim::gate: the code a service ships, no simulator in it: the FIFO gate
# core, the Asio adapters (headers), the lease client, gate/redis (the replica,
# the scripts, the protocols) and the Lua engine.
add_library(admitsim_gate INTERFACE)
target_link_libraries(admitsim_gate INTERFACE admitsim_gate_fifo admitsim_gate_lease admitsim_gate_asio admitsim_gate_redis
                      admitsim_lua_engine)
add_library(admitsim::gate ALIAS admitsim_gate)
# admitsim::sim: the simulator on top: kernel, checks (headers), scenario
# loader, worlds, reports and explore.
add_library(admitsim_sim INTERFACE)
target_link_libraries(admitsim_sim INTERFACE admitsim_gate admitsim_kernel admitsim_codec admitsim_scenario admitsim_process admitsim_world
                      admitsim_reports admitsim_explore)
add_library(admitsim::sim ALIAS admitsim_sim)

# Every target the two reach, exported as admitsim::<name>; the tree keeps its
# admitsim_<name> names.
set(admitsim_exported_names common asio gate_fifo gate_redis gate_lease lua_engine gate_asio gate
    kernel codec scenario process world reports explore sim)
set(admitsim_exported_targets "")
foreach(name IN LISTS admitsim_exported_names)
  if(NOT TARGET admitsim_${name})
    message(FATAL_ERROR "cmake/admitsimInstall.cmake exports admitsim_${name}, which the tree does not define")
  endif()
  set_target_properties(admitsim_${name} PROPERTIES EXPORT_NAME ${name})
  list(APPEND admitsim_exported_targets admitsim_${name})
endforeach()

# --- install rules ------------------------------------------------------------
install(TARGETS admitsim RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(TARGETS ${admitsim_exported_targets} EXPORT admitsimTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
# Headers keep their paths under include/admitsim, so `#include
# "gate/fifo/fifo_gate.hpp"` reads the same against the tree and the install.
# The CLI's own headers (sim/cli) and the data beside the sources are left out.
install(DIRECTORY gate sim reports DESTINATION ${ADMITSIM_INSTALL_INCLUDEDIR}
        FILES_MATCHING PATTERN "*.hpp"
        REGEX "/sim/cli$" EXCLUDE
        REGEX "/gate/redis/(lua|protocols)$" EXCLUDE
        REGEX "/reports/examples$" EXCLUDE)
# Run-time data. A scenario names its protocol and Lua files by paths relative
# to itself (../gate/redis/protocols/seed.json, ../../gate/redis/lua/release.lua),
# so share/admitsim mirrors the source tree's layout of these folders and the
# installed scenarios run unchanged from any working directory.
install(DIRECTORY scenarios DESTINATION ${ADMITSIM_INSTALL_DATADIR})
install(DIRECTORY gate/redis/lua gate/redis/protocols DESTINATION ${ADMITSIM_INSTALL_DATADIR}/gate/redis)
# The Python adapter of process gates (docs/process-gate.md), run as
# python3 share/admitsim/gate/process/python/admitsim_fifo.py FILE.py:FACTORY.
install(DIRECTORY gate/process/python DESTINATION ${ADMITSIM_INSTALL_DATADIR}/gate/process
        PATTERN "__pycache__" EXCLUDE)

install(EXPORT admitsimTargets NAMESPACE admitsim:: DESTINATION ${ADMITSIM_INSTALL_CMAKEDIR})
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/admitsimConfig.cmake.in
                              ${PROJECT_BINARY_DIR}/admitsimConfig.cmake
                              INSTALL_DESTINATION ${ADMITSIM_INSTALL_CMAKEDIR}
                              PATH_VARS ADMITSIM_INSTALL_INCLUDEDIR ADMITSIM_INSTALL_DATADIR)
# 0.x: a new minor version may change the interface.
write_basic_package_version_file(${PROJECT_BINARY_DIR}/admitsimConfigVersion.cmake
                                 VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/admitsimConfig.cmake ${PROJECT_BINARY_DIR}/admitsimConfigVersion.cmake
              ${PROJECT_SOURCE_DIR}/cmake/admitsimLua51.cmake
        DESTINATION ${ADMITSIM_INSTALL_CMAKEDIR})

# --- the Debian package (cpack -G DEB) ---------------------------------------
set(ADMITSIM_DEB_MAINTAINER "admitsim developers <admitsim@invalid>" CACHE STRING
    "Maintainer field of the .deb that cpack -G DEB builds")
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME admitsim)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
    "deterministic simulation and test harness for admission-control gates")
set(CPACK_PACKAGE_DESCRIPTION
    "The admitsim CLI (run, replay, explore, sweep, matrix over scenario files) with its scenario catalogue under /usr/share/admitsim, and the CMake package admitsim (find_package(admitsim CONFIG)): admitsim::gate, the FIFO gate and Redis lease gate code, and admitsim::sim, the simulator, as static libraries with their headers.")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)  # admitsim_<version>_<arch>.deb
set(CPACK_DEBIAN_PACKAGE_MAINTAINER "${ADMITSIM_DEB_MAINTAINER}")
set(CPACK_DEBIAN_PACKAGE_SECTION devel)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
# Run time: what the CLI links dynamically, read off the binary by
# dpkg-shlibdeps (libc6, libstdc++6, libgcc-s1). Lua, lua-cjson and lua-bitop
# are linked in when their static archives were found (cmake/admitsimLua51.cmake);
# otherwise the CLI loads their shared libraries and depends on the packages.
find_program(ADMITSIM_DPKG_SHLIBDEPS dpkg-shlibdeps)
set(admitsim_deb_depends "")
if(ADMITSIM_DPKG_SHLIBDEPS)
  set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
else()
  list(APPEND admitsim_deb_depends libc6 libstdc++6 libgcc-s1)
endif()
if(NOT (ADMITSIM_LUA51_A AND ADMITSIM_LUA51_CJSON_A AND ADMITSIM_LUA51_BITOP_A))
  list(APPEND admitsim_deb_depends liblua5.1-0 lua-cjson lua-bitop)
endif()
list(JOIN admitsim_deb_depends ", " CPACK_DEBIAN_PACKAGE_DEPENDS)
# What a find_package(admitsim) user needs besides (admitsimConfig.cmake finds
# them): the headers the targets' interfaces include and the Lua libraries the
# static libraries link.
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS
    "cmake (>= 3.25), pkgconf | pkg-config, libboost1.81-dev | libboost-dev (>= 1.81), nlohmann-json3-dev (>= 3), liblua5.1-0-dev, lua-cjson-dev, lua-bitop-dev")
include(CPack)
