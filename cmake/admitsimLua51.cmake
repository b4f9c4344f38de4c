# admitsim::lua51: the Lua 5.1 interpreter with lua-cjson and lua-bitop, as the
# script engine (gate/redis/lua_engine.cpp, docs/lua-engine.md) links them:
# Debian's liblua5.1 (the C build, whose errors are longjmps), found with
# pkg-config, and the static archives where the packages ship them (the
# interpreter then inlined into the calls of lua_engine.cpp, no PLT; pkg-config's
# -l flags would pick the shared objects), else the shared libraries.
#
# One file for both sides: the source tree includes it from
# gate/redis/CMakeLists.txt, and the installed package config
# (cmake/admitsimConfig.cmake.in) includes its installed copy, so that a
# find_package(admitsim) user links the same libraries as the build did.
#
# In: ADMITSIM_LUA51_GLOBAL (true in the source tree: the imported targets are
# seen from every directory). Out: the target admitsim::lua51 and
# admitsim_lua51_FOUND / admitsim_lua51_MESSAGE (what is missing); the caller
# decides whether a miss is fatal. Safe to include again: a scope that already
# sees admitsim::lua51 keeps it.
set(admitsim_lua51_FOUND FALSE)
set(admitsim_lua51_MESSAGE "")
if(TARGET admitsim::lua51)
  set(admitsim_lua51_FOUND TRUE)
  return()
endif()

set(_admitsim_lua51_scope "")
if(ADMITSIM_LUA51_GLOBAL)
  set(_admitsim_lua51_scope GLOBAL)
endif()

find_package(PkgConfig QUIET)
if(NOT PKG_CONFIG_FOUND)
  set(admitsim_lua51_MESSAGE "pkg-config was not found (it finds lua5.1, lua5.1-cjson and lua5.1-bitop)")
  return()
endif()
pkg_check_modules(LUA51 QUIET IMPORTED_TARGET ${_admitsim_lua51_scope} lua5.1)
pkg_check_modules(LUA51_CJSON QUIET IMPORTED_TARGET ${_admitsim_lua51_scope} lua5.1-cjson)
pkg_check_modules(LUA51_BITOP QUIET IMPORTED_TARGET ${_admitsim_lua51_scope} lua5.1-bitop)
set(_admitsim_lua51_missing "")
foreach(_m LUA51 LUA51_CJSON LUA51_BITOP)
  if(NOT ${_m}_FOUND)
    list(APPEND _admitsim_lua51_missing ${_m})
  endif()
endforeach()
if(_admitsim_lua51_missing)
  list(TRANSFORM _admitsim_lua51_missing REPLACE "^LUA51_CJSON$" "lua5.1-cjson (Debian: lua-cjson-dev)")
  list(TRANSFORM _admitsim_lua51_missing REPLACE "^LUA51_BITOP$" "lua5.1-bitop (Debian: lua-bitop-dev)")
  list(TRANSFORM _admitsim_lua51_missing REPLACE "^LUA51$" "lua5.1 (Debian: liblua5.1-0-dev)")
  list(JOIN _admitsim_lua51_missing ", " _admitsim_lua51_missing)
  set(admitsim_lua51_MESSAGE "pkg-config found no ${_admitsim_lua51_missing}")
  return()
endif()

find_library(ADMITSIM_LUA51_A NAMES liblua5.1.a HINTS ${LUA51_LIBRARY_DIRS})
find_library(ADMITSIM_LUA51_CJSON_A NAMES liblua5.1-cjson.a HINTS ${LUA51_CJSON_LIBRARY_DIRS})
find_library(ADMITSIM_LUA51_BITOP_A NAMES liblua5.1-bitop.a HINTS ${LUA51_BITOP_LIBRARY_DIRS})
add_library(admitsim::lua51 INTERFACE IMPORTED ${_admitsim_lua51_scope})
if(ADMITSIM_LUA51_A AND ADMITSIM_LUA51_CJSON_A AND ADMITSIM_LUA51_BITOP_A)
  set_target_properties(admitsim::lua51 PROPERTIES
    INTERFACE_INCLUDE_DIRECTORIES "${LUA51_INCLUDE_DIRS};${LUA51_CJSON_INCLUDE_DIRS}"
    INTERFACE_LINK_LIBRARIES "${ADMITSIM_LUA51_CJSON_A};${ADMITSIM_LUA51_BITOP_A};${ADMITSIM_LUA51_A};m;dl")
else()
  set_target_properties(admitsim::lua51 PROPERTIES
    INTERFACE_LINK_LIBRARIES "PkgConfig::LUA51_CJSON;PkgConfig::LUA51_BITOP;PkgConfig::LUA51")
endif()
set(admitsim_lua51_FOUND TRUE)
unset(_admitsim_lua51_scope)
unset(_admitsim_lua51_missing)
