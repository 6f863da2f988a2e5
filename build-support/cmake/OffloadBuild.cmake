# OffloadBuild.cmake: build GPU device code into fat binaries and host objects with the
# `offload-build` helper (parallel per-architecture compiles, cache, packing, embedding).
#
# Use it after install:     find_package(OffloadBuild 0.1 CONFIG REQUIRED)
# or from a checkout:       find_package(OffloadBuild 0.1 CONFIG REQUIRED
#                             PATHS <checkout>/build-support/cmake)
# or:                       include(<checkout>/build-support/cmake/OffloadBuild.cmake)
#
# The helper: OFFLOAD_BUILD_EXECUTABLE (cache variable) when set; else `offload-build` found
# next to an installed package or on PATH; else, from a checkout, built once per build
# directory at configure time with `cargo build --release -p offload-cli --bin offload-build
# --bin offload-bundler --target-dir <build>/offload-build-cargo` (the checkout itself is not
# written) and its path cached.
#
# offload_add_fatbin(<target> [LANGUAGE HIP|CUDA] SOURCES <src>...
#                    [ARCHITECTURES <arch>...] [INCLUDE_DIRECTORIES <dir>...]
#                    [COMPILE_DEFINITIONS <def>...] [COMPILE_OPTIONS <opt>...]
#                    [COMPRESS] [CONTAINER BUNDLE|OFFLOAD_BINARY|CUDA_FATBIN] [EMBED OBJECT|FATBIN]
#                    [COMPILER <clang|nvcc>] [CUDA_COMPILER nvcc|clang]
#                    [JOB_POOL <pool>] [JOBS <n>] [TIMEOUT <seconds>] [PTXAS <ptxas>]
#                    [NO_WARNINGS] [WARNINGS_INTO_ERRORS] [QUIET] [USES_TERMINAL] [NO_PCH])
#   Creates the INTERFACE library <target> to link: it links lib<target>.a, written by one
#   custom command (Ninja and Makefiles; a depfile names every header, so a header edit
#   recompiles only the sources that include it, for each architecture), and puts on the
#   include path <target>_kernels.h, which declares each kernel's host handle for
#   hipLaunchKernel: `&<target>::SAXPY` (C++) or `&<target>_SAXPY` (C) for a kernel
#   `saxpy`, with or without extern "C"; overloads and names alike after upper-casing are
#   declared by symbol (`<target>::_Z5SAXPYIFPKFPF`), each with its signature beside it.
#   With EMBED FATBIN the container file <target>.hipfb (or .offloadbin) is written instead
#   and nothing is linked; its path is the target's OFFLOAD_OUTPUT property.
#   Architectures, first that is set: ARCHITECTURES; the target's HIP_ARCHITECTURES (CUDA:
#   CUDA_ARCHITECTURES) property (set it after the call to override); CMAKE_HIP_ARCHITECTURES
#   (CMAKE_CUDA_ARCHITECTURES); else offload-build's own resolution at configure time
#   (OFFLOAD_ARCH, AMDGPU_TARGETS, GPU_TARGETS, ... in the environment, then this machine's
#   GPUs, then the default set with a warning: never an error on a machine without a GPU).
#   A list may be given unquoted (gfx90a gfx1100), quoted ("gfx90a:xnack+;gfx1100"), from a
#   variable ("${GPU_TARGETS}") or mixed. An item may be a generator expression
#   ($<$<CONFIG:Debug>:gfx1100>): such a list is resolved when the command runs, not at
#   configure time (only the compiler is checked then).
#   A source's OFFLOAD_ARCHITECTURES property replaces the list for that source.
#   The list is resolved and checked against the compiler at configure time: an unknown
#   architecture or a missing compiler is a CMake error naming the cause.
#   Compiler: COMPILER, else OFFLOAD_HIP_COMPILER / OFFLOAD_CUDA_COMPILER, else
#   CMAKE_HIP_COMPILER when the HIP language is enabled (and it is clang), else
#   CMAKE_CUDA_COMPILER when it is set (nvcc or clang), else offload-build's discovery
#   (HIPCXX, HIP_CLANG_PATH, ROCM_PATH, CLANG, clang-NN, ...; for CUDA: CUDACXX, CUDA_PATH,
#   nvcc on PATH, /usr/local/cuda, NVIDIA's wheels in VIRTUAL_ENV or python3's
#   site-packages, then clang).
#   CUDA_COMPILER (LANGUAGE CUDA): nvcc or clang, passed as `--cuda-compiler`; by default
#   nvcc when one is found, as in CMake. With CUDA_COMPILER, a CMAKE_CUDA_COMPILER (or
#   OFFLOAD_CUDA_COMPILER) of the other kind is not used: discovery finds one of this kind.
#   JOB_POOL: the Ninja job pool of the command (define it in the JOB_POOLS global property);
#   JOBS: at most this many compiles at once inside the command (default: the CPUs, or
#   make's jobserver under Makefiles).
#   TIMEOUT: kill a device compile that runs longer than this many seconds (with its
#   children) and fail, naming the source and architecture (default: the
#   OFFLOAD_BUILD_COMPILE_TIMEOUT environment variable when the command runs, else none).
#   PTXAS: NVIDIA's ptxas for CUDA cubins (default: the PTXAS environment variable, the CUDA
#   install's, PATH, NVIDIA's nvidia-cuda-nvcc-cu12 wheel in VIRTUAL_ENV or python3's
#   site-packages; without one, sm_NN archs are packed as PTX only, with one warning).
#   The command prints the compiler's warnings once per distinct warning, with the
#   architectures that printed it ("[gfx90a, gfx1100] k.hip:3:5: warning: ..."), and one
#   progress line per finished device compile ("[3/14] gfx90a k.hip 2.1 s"). NO_WARNINGS
#   compiles with -w; WARNINGS_INTO_ERRORS with -Werror; QUIET drops the progress lines.
#   Compiler launcher: CMAKE_HIP_COMPILER_LAUNCHER (CUDA: CMAKE_CUDA_COMPILER_LAUNCHER), else
#   CMAKE_CXX_COMPILER_LAUNCHER (ccache, sccache), put in front of every device compile
#   (OFFLOAD_BUILD_LAUNCHER); see "Compiler caches" in docs/caches-and-build-farms.md for what
#   each tool caches.
#   Ninja shows a command's output when it ends; USES_TERMINAL runs it in Ninja's console
#   pool so the progress lines appear as they come (not with JOB_POOL).
#   NO_PCH compiles without precompiled preambles (--no-pch; OFFLOAD_BUILD_PCH=0 in the
#   command's environment does the same).
#
# offload_add_library(<target> [STATIC|OBJECT] [RDC] SOURCES <src>... [the options of
#                     offload_add_fatbin but COMPRESS, CONTAINER and EMBED])
#   HIP or CUDA sources with their host code, as `hipcc -c` and `nvcc -c` compile them
#   (`compile --host-code`): each source's device code for every architecture (compiled per
#   architecture in parallel, cached; nvcc: one nvcc per source) embedded in the object of its
#   host code (launch wrappers, host stubs, the registration constructor). Creates the
#   INTERFACE library <target> that links lib<target>.a and the GPU runtime: HIP's libamdhip64
#   (found with find_library), or the CUDA toolkit's static cudart with dl, rt and pthread
#   (from the toolkit the build compiles with: a CUDA install or NVIDIA's wheels). Link it
#   with target_link_libraries like any library and call the sources' host functions. RDC:
#   relocatable device code (`hipcc -fgpu-rdc`, `nvcc -rdc=true` and `-dlink`; `compile
#   --rdc`): the sources may call each other's __device__ functions. OBJECT: <target> gives
#   the sources' objects themselves to what links it (as CMake's OBJECT libraries do), so each
#   is linked, used or not (a source of kernels alone registers them); they are taken out of
#   lib<target>.a with CMAKE_AR. Not with RDC.
#
# offload_detect_architectures(<var> [LANGUAGE HIP|CUDA] [FALLBACK <arch>...])
#   Sets <var> to this machine's GPU architectures; with none, to FALLBACK (or the helper's
#   default set) with a warning.
#
# OffloadBuild::bundler: imported executable target for `offload-bundler`, the drop-in
# clang-offload-bundler (also in OFFLOAD_BUNDLER_EXECUTABLE).

include_guard(GLOBAL)

if(CMAKE_VERSION VERSION_LESS 3.20)
  message(FATAL_ERROR "OffloadBuild needs CMake 3.20 or newer (DEPFILE with Makefiles), "
    "this is ${CMAKE_VERSION}")
endif()
# Functions keep the policies in effect where they are defined: paths in the depfile are
# relative to the build directory of the command, or absolute (CMP0116 NEW).
cmake_policy(PUSH)
if(POLICY CMP0116)
  cmake_policy(SET CMP0116 NEW)
endif()

set(_OFFLOAD_BUILD_DIR "${CMAKE_CURRENT_LIST_DIR}")

set(OFFLOAD_BUILD_EXECUTABLE "" CACHE FILEPATH "The offload-build helper binary")
set(OFFLOAD_HIP_COMPILER "" CACHE FILEPATH "clang for HIP device code (empty: discovery)")
set(OFFLOAD_CUDA_COMPILER "" CACHE FILEPATH
  "nvcc or clang for CUDA device code (empty: CMAKE_CUDA_COMPILER, else discovery)")

function(_offload_build_locate)
  if(OFFLOAD_BUILD_EXECUTABLE)
    if(NOT EXISTS "${OFFLOAD_BUILD_EXECUTABLE}")
      message(FATAL_ERROR
        "OFFLOAD_BUILD_EXECUTABLE is ${OFFLOAD_BUILD_EXECUTABLE}, which does not exist")
    endif()
    return()
  endif()
  # An install: <prefix>/lib/cmake/OffloadBuild/ next to <prefix>/bin.
  find_program(_offload_build_found offload-build
    HINTS "${_OFFLOAD_BUILD_DIR}/../../../bin" NO_CACHE)
  if(_offload_build_found)
    set(OFFLOAD_BUILD_EXECUTABLE "${_offload_build_found}" CACHE FILEPATH
      "The offload-build helper binary" FORCE)
    return()
  endif()
  # A checkout: build the helper with cargo.
  get_filename_component(_root "${_OFFLOAD_BUILD_DIR}/../.." ABSOLUTE)
  if(NOT EXISTS "${_root}/Cargo.toml")
    message(FATAL_ERROR "offload-build not found: set OFFLOAD_BUILD_EXECUTABLE, put "
      "offload-build on PATH, or use OffloadBuild.cmake from a checkout with cargo installed")
  endif()
  find_program(_cargo cargo HINTS "$ENV{CARGO_HOME}/bin" "$ENV{HOME}/.cargo/bin" NO_CACHE)
  if(NOT _cargo)
    message(FATAL_ERROR "offload-build not found and cargo not found to build it: set "
      "OFFLOAD_BUILD_EXECUTABLE or install Rust (https://rustup.rs)")
  endif()
  # Into this build directory, not the checkout's target/ (nor CARGO_TARGET_DIR): the checkout
  # may be read-only, shared by several build directories, or a submodule of the project.
  set(_target_dir "${CMAKE_BINARY_DIR}/offload-build-cargo")
  message(STATUS "Building offload-build from ${_root} with cargo into ${_target_dir} "
    "(once per build directory; -DOFFLOAD_BUILD_EXECUTABLE=<path> or an offload-build on "
    "PATH skips this)")
  execute_process(
    COMMAND "${_cargo}" build --release --manifest-path "${_root}/Cargo.toml"
      --target-dir "${_target_dir}" -p offload-cli --bin offload-build --bin offload-bundler
    WORKING_DIRECTORY "${_root}"
    RESULT_VARIABLE _rc ERROR_VARIABLE _err OUTPUT_VARIABLE _out)
  set(_exe "${_target_dir}/release/offload-build${CMAKE_EXECUTABLE_SUFFIX}")
  if(NOT _rc EQUAL 0 OR NOT EXISTS "${_exe}")
    message(FATAL_ERROR "cargo build of offload-build failed (${_rc}):\n${_err}")
  endif()
  set(OFFLOAD_BUILD_EXECUTABLE "${_exe}" CACHE FILEPATH "The offload-build helper binary" FORCE)
endfunction()

_offload_build_locate()

get_filename_component(_offload_bin_dir "${OFFLOAD_BUILD_EXECUTABLE}" DIRECTORY)
set(OFFLOAD_BUNDLER_EXECUTABLE "${_offload_bin_dir}/offload-bundler${CMAKE_EXECUTABLE_SUFFIX}")
if(EXISTS "${OFFLOAD_BUNDLER_EXECUTABLE}" AND NOT TARGET OffloadBuild::bundler)
  add_executable(OffloadBuild::bundler IMPORTED GLOBAL)
  set_target_properties(OffloadBuild::bundler PROPERTIES
    IMPORTED_LOCATION "${OFFLOAD_BUNDLER_EXECUTABLE}")
endif()
if(NOT TARGET OffloadBuild::offload-build)
  add_executable(OffloadBuild::offload-build IMPORTED GLOBAL)
  set_target_properties(OffloadBuild::offload-build PROPERTIES
    IMPORTED_LOCATION "${OFFLOAD_BUILD_EXECUTABLE}")
endif()

# Sets <out> to the arguments of `offload-build compile --resolve` for <language>, the
# architectures <archs> (a list; none: offload-build's resolution), <compiler> and
# <cuda_kind> (each may be empty).
function(_offload_resolve_args out language archs compiler cuda_kind)
  set(_args compile --resolve --language "${language}")
  if(archs)
    string(REPLACE ";" "," _list "${archs}")
    list(APPEND _args --archs "${_list}")
  endif()
  if(compiler)
    list(APPEND _args --compiler "${compiler}")
  endif()
  if(cuda_kind)
    list(APPEND _args --cuda-compiler "${cuda_kind}")
  endif()
  set(${out} "${_args}" PARENT_SCOPE)
endfunction()

# Runs `offload-build compile --resolve`; sets <out_archs> and <out_compiler> in the caller.
# Errors are fatal and name the cause; warnings (fallbacks) become CMake warnings.
# <origin> and <compiler_origin> name where the list and the compiler came from, for errors.
function(_offload_resolve out_archs out_compiler context language archs compiler origin
    compiler_origin cuda_kind)
  string(TOUPPER "${language}" language_uc)
  _offload_resolve_args(_args "${language}" "${archs}" "${compiler}" "${cuda_kind}")
  execute_process(COMMAND "${OFFLOAD_BUILD_EXECUTABLE}" ${_args}
    RESULT_VARIABLE _rc OUTPUT_VARIABLE _out ERROR_VARIABLE _err)
  string(STRIP "${_err}" _err)
  if(NOT _rc EQUAL 0)
    string(REPLACE "offload-build: error: " "" _err "${_err}")
    string(REPLACE "(from --archs)" "(from ${origin})" _err "${_err}")
    string(REPLACE "(set with --compiler)" "(set with ${compiler_origin})" _err "${_err}")
    message(FATAL_ERROR "${context}: ${_err}")
  endif()
  if(_err)
    string(REPLACE "offload-build: warning: " "" _err "${_err}")
    string(REPLACE "set <CRATE>_OFFLOAD_ARCH or OFFLOAD_ARCH"
      "set CMAKE_${language_uc}_ARCHITECTURES, ARCHITECTURES or OFFLOAD_ARCH" _err "${_err}")
    message(WARNING "${context}: ${_err}")
  endif()
  string(REGEX MATCH "archs=([^\n]*)" _m "${_out}")
  set(_a "${CMAKE_MATCH_1}")
  string(REGEX MATCH "compiler=([^\n]*)" _m "${_out}")
  set(${out_archs} "${_a}" PARENT_SCOPE)
  set(${out_compiler} "${CMAKE_MATCH_1}" PARENT_SCOPE)
endfunction()

function(offload_detect_architectures var)
  cmake_parse_arguments(PARSE_ARGV 1 arg "" "LANGUAGE;COMPILER" "FALLBACK")
  if(NOT arg_LANGUAGE)
    set(arg_LANGUAGE HIP)
  endif()
  string(TOLOWER "${arg_LANGUAGE}" _lang)
  set(_compiler "${arg_COMPILER}")
  if(NOT _compiler)
    set(_compiler "${OFFLOAD_${arg_LANGUAGE}_COMPILER}")
  endif()
  set(_args compile --resolve --language "${_lang}" --archs native)
  if(_compiler)
    list(APPEND _args --compiler "${_compiler}")
  endif()
  execute_process(COMMAND "${OFFLOAD_BUILD_EXECUTABLE}" ${_args}
    RESULT_VARIABLE _rc OUTPUT_VARIABLE _out ERROR_VARIABLE _err)
  string(REGEX MATCH "archs=([^\n]*)" _m "${_out}")
  set(_archs "${CMAKE_MATCH_1}")
  if(_rc EQUAL 0 AND NOT _err MATCHES "found no GPU")
    set(${var} "${_archs}" PARENT_SCOPE)
    return()
  endif()
  if(arg_FALLBACK)
    set(_archs "${arg_FALLBACK}")
  elseif(NOT _rc EQUAL 0)
    string(STRIP "${_err}" _err)
    message(FATAL_ERROR "offload_detect_architectures: ${_err}")
  endif()
  message(WARNING "offload_detect_architectures: no GPU found on this machine; using ${_archs}")
  set(${var} "${_archs}" PARENT_SCOPE)
endfunction()

# Sets <out> to the items of the remaining arguments, each a list (cmake_parse_arguments with
# PARSE_ARGV keeps a quoted "a;b" as one element with an escaped `;`): one flat list. An item
# holding a generator expression stays one item, its `;` written $<SEMICOLON>, so that a
# quoted "$<$<CONFIG:Debug>:gfx1100;gfx942>" is not cut inside the expression.
function(_offload_flatten out)
  set(_flat "")
  foreach(_item IN LISTS ARGN)
    if(_item MATCHES [[\$<]])
      string(REPLACE ";" "$<SEMICOLON>" _item "${_item}")
      list(APPEND _flat "${_item}")
    else()
      list(APPEND _flat ${_item})
    endif()
  endforeach()
  set(${out} "${_flat}" PARENT_SCOPE)
endfunction()

function(offload_add_fatbin target)
  cmake_parse_arguments(PARSE_ARGV 1 arg
    "COMPRESS;NO_WARNINGS;WARNINGS_INTO_ERRORS;QUIET;USES_TERMINAL;NO_PCH"
    "LANGUAGE;CONTAINER;EMBED;COMPILER;CUDA_COMPILER;JOB_POOL;JOBS;TIMEOUT;PTXAS"
    "SOURCES;ARCHITECTURES;INCLUDE_DIRECTORIES;COMPILE_DEFINITIONS;COMPILE_OPTIONS")
  foreach(_kw SOURCES ARCHITECTURES INCLUDE_DIRECTORIES COMPILE_DEFINITIONS COMPILE_OPTIONS)
    _offload_flatten(arg_${_kw} "${arg_${_kw}}")
  endforeach()
  if(arg_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "offload_add_fatbin(${target}): unknown arguments ${arg_UNPARSED_ARGUMENTS}")
  endif()
  if(NOT arg_SOURCES)
    message(FATAL_ERROR "offload_add_fatbin(${target}): SOURCES is empty")
  endif()
  if(NOT arg_LANGUAGE)
    set(arg_LANGUAGE HIP)
  endif()
  if(NOT arg_LANGUAGE MATCHES "^(HIP|CUDA)$")
    message(FATAL_ERROR "offload_add_fatbin(${target}): LANGUAGE must be HIP or CUDA, not ${arg_LANGUAGE}")
  endif()
  if(arg_CONTAINER AND NOT arg_CONTAINER MATCHES "^(BUNDLE|OFFLOAD_BINARY|CUDA_FATBIN)$")
    message(FATAL_ERROR "offload_add_fatbin(${target}): CONTAINER must be BUNDLE, OFFLOAD_BINARY or CUDA_FATBIN")
  endif()
  if(arg_EMBED AND NOT arg_EMBED MATCHES "^(OBJECT|FATBIN)$")
    message(FATAL_ERROR "offload_add_fatbin(${target}): EMBED must be OBJECT or FATBIN")
  endif()
  if(arg_CUDA_COMPILER)
    string(TOLOWER "${arg_CUDA_COMPILER}" arg_CUDA_COMPILER)
    if(NOT arg_CUDA_COMPILER MATCHES "^(nvcc|clang)$")
      message(FATAL_ERROR "offload_add_fatbin(${target}): CUDA_COMPILER must be nvcc or clang")
    endif()
    if(NOT arg_LANGUAGE STREQUAL "CUDA")
      message(FATAL_ERROR "offload_add_fatbin(${target}): CUDA_COMPILER needs LANGUAGE CUDA")
    endif()
  endif()
  set(_sources "")
  foreach(_s IN LISTS arg_SOURCES)
    get_filename_component(_abs "${_s}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
    list(APPEND _sources "${_abs}")
  endforeach()
  set(_includes "")
  foreach(_d IN LISTS arg_INCLUDE_DIRECTORIES)
    get_filename_component(_abs "${_d}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
    list(APPEND _includes "${_abs}")
  endforeach()

  add_library(${target} INTERFACE)
  set(_prop "${arg_LANGUAGE}_ARCHITECTURES")
  if(arg_ARCHITECTURES)
    set_property(TARGET ${target} PROPERTY ${_prop} "${arg_ARCHITECTURES}")
    set_property(TARGET ${target} PROPERTY OFFLOAD_ARCHITECTURES_ORIGIN "ARCHITECTURES")
  elseif(DEFINED CMAKE_${_prop} AND NOT "${CMAKE_${_prop}}" STREQUAL "")
    set_property(TARGET ${target} PROPERTY ${_prop} "${CMAKE_${_prop}}")
    set_property(TARGET ${target} PROPERTY OFFLOAD_ARCHITECTURES_ORIGIN "CMAKE_${_prop}")
  endif()
  get_target_property(_initial ${target} ${_prop})
  set_property(TARGET ${target} PROPERTY OFFLOAD_INITIAL_ARCHITECTURES "${_initial}")
  set_target_properties(${target} PROPERTIES
    OFFLOAD_LANGUAGE "${arg_LANGUAGE}"
    OFFLOAD_SOURCES "${_sources}"
    OFFLOAD_INCLUDE_DIRECTORIES "${_includes}"
    OFFLOAD_COMPILE_DEFINITIONS "${arg_COMPILE_DEFINITIONS}"
    OFFLOAD_COMPILE_OPTIONS "${arg_COMPILE_OPTIONS}"
    OFFLOAD_COMPRESS "${arg_COMPRESS}"
    OFFLOAD_CONTAINER "${arg_CONTAINER}"
    OFFLOAD_EMBED "${arg_EMBED}"
    OFFLOAD_COMPILER "${arg_COMPILER}"
    OFFLOAD_CUDA_COMPILER "${arg_CUDA_COMPILER}"
    OFFLOAD_JOB_POOL "${arg_JOB_POOL}"
    OFFLOAD_JOBS "${arg_JOBS}"
    OFFLOAD_TIMEOUT "${arg_TIMEOUT}"
    OFFLOAD_PTXAS "${arg_PTXAS}"
    OFFLOAD_NO_WARNINGS "${arg_NO_WARNINGS}"
    OFFLOAD_WARNINGS_INTO_ERRORS "${arg_WARNINGS_INTO_ERRORS}"
    OFFLOAD_QUIET "${arg_QUIET}"
    OFFLOAD_USES_TERMINAL "${arg_USES_TERMINAL}"
    OFFLOAD_NO_PCH "${arg_NO_PCH}")
  if(arg_EMBED STREQUAL "FATBIN")
    if(arg_CONTAINER STREQUAL "CUDA_FATBIN")
      set(_out "${CMAKE_CURRENT_BINARY_DIR}/${target}.fatbin")
    elseif(arg_CONTAINER STREQUAL "OFFLOAD_BINARY" OR (arg_LANGUAGE STREQUAL "CUDA" AND NOT arg_CONTAINER))
      set(_out "${CMAKE_CURRENT_BINARY_DIR}/${target}.offloadbin")
    else()
      set(_out "${CMAKE_CURRENT_BINARY_DIR}/${target}.hipfb")
    endif()
  else()
    set(_out "${CMAKE_CURRENT_BINARY_DIR}/${CMAKE_STATIC_LIBRARY_PREFIX}${target}${CMAKE_STATIC_LIBRARY_SUFFIX}")
    target_link_libraries(${target} INTERFACE "${_out}")
    # <target>_kernels.h, written by the command: the kernels' host handles declared for C
    # and C++ (asm labels name the object's symbols, mangled or not).
    target_include_directories(${target} INTERFACE
      "${CMAKE_CURRENT_BINARY_DIR}/${target}.offload-build")
  endif()
  set_property(TARGET ${target} PROPERTY OFFLOAD_OUTPUT "${_out}")
  add_custom_target(${target}_offload_build DEPENDS "${_out}")
  add_dependencies(${target} ${target}_offload_build)
  # The command is written at the end of the directory, so that properties set after this
  # call (HIP_ARCHITECTURES, a source's OFFLOAD_ARCHITECTURES) are seen.
  cmake_language(EVAL CODE
    "cmake_language(DEFER CALL _offload_add_fatbin_command [==[${target}]==])")
endfunction()

function(offload_add_library target)
  set(_args ${ARGN})
  list(REMOVE_ITEM _args STATIC)
  foreach(_kw RDC OBJECT)
    set(_${_kw} FALSE)
    if(_kw IN_LIST _args)
      list(REMOVE_ITEM _args ${_kw})
      set(_${_kw} TRUE)
    endif()
  endforeach()
  foreach(_kw SHARED COMPRESS CONTAINER EMBED)
    if(_kw IN_LIST _args)
      message(FATAL_ERROR "offload_add_library(${target}): ${_kw} is not supported: the "
        "library is STATIC or OBJECT, each object embedding its own device code")
    endif()
  endforeach()
  if(_OBJECT AND _RDC)
    message(FATAL_ERROR "offload_add_library(${target}): OBJECT with RDC is not supported: "
      "relocatable device code is linked across the sources into the library; use STATIC")
  endif()
  if(_OBJECT AND NOT CMAKE_AR)
    message(FATAL_ERROR "offload_add_library(${target}): OBJECT takes the objects out of "
      "the library with CMAKE_AR, which is not set: enable C or CXX (project(... LANGUAGES "
      "CXX))")
  endif()
  offload_add_fatbin(${target} ${_args})
  if(_OBJECT)
    _offload_objects(${target})
  endif()
  get_target_property(_lang ${target} OFFLOAD_LANGUAGE)
  set_property(TARGET ${target} PROPERTY OFFLOAD_HOST_CODE TRUE)
  set_property(TARGET ${target} PROPERTY OFFLOAD_RDC ${_RDC})
  if(_lang STREQUAL "CUDA")
    _offload_link_cuda_runtime(${target} ${_RDC})
    return()
  endif()
  find_library(OFFLOAD_AMDHIP64_LIBRARY amdhip64
    HINTS "$ENV{ROCM_PATH}/lib" "$ENV{HIP_PATH}/lib" /opt/rocm/lib)
  if(NOT OFFLOAD_AMDHIP64_LIBRARY)
    message(FATAL_ERROR "offload_add_library(${target}): the HIP runtime (libamdhip64) was "
      "not found: install it (Debian: apt-get install libamdhip64-dev; else ROCm) or set "
      "OFFLOAD_AMDHIP64_LIBRARY")
  endif()
  target_link_libraries(${target} INTERFACE "${OFFLOAD_AMDHIP64_LIBRARY}")
endfunction()

# OBJECT: the objects of <target>'s sources, named as the members of lib<target>.a
# (`<stem>.o`; a second source of the same stem `<stem>-2.o`), taken out of it into
# <target>.offload-build/objects/ by the build command, are what <target> gives to the
# targets linking it (INTERFACE_SOURCES), instead of the library.
function(_offload_objects target)
  get_target_property(_sources ${target} OFFLOAD_SOURCES)
  set(_dir "${CMAKE_CURRENT_BINARY_DIR}/${target}.offload-build/objects")
  set(_names "")
  set(_objects "")
  foreach(_s IN LISTS _sources)
    get_filename_component(_stem "${_s}" NAME_WLE)
    set(_name "${_stem}.o")
    set(_n 1)
    while("${_name}" IN_LIST _names)
      math(EXPR _n "${_n} + 1")
      set(_name "${_stem}-${_n}.o")
    endwhile()
    list(APPEND _names "${_name}")
    list(APPEND _objects "${_dir}/${_name}")
  endforeach()
  set_property(TARGET ${target} PROPERTY INTERFACE_LINK_LIBRARIES "")
  set_property(TARGET ${target} PROPERTY OFFLOAD_OBJECTS "${_objects}")
  set_source_files_properties(${_objects} PROPERTIES GENERATED TRUE EXTERNAL_OBJECT TRUE)
  target_sources(${target} INTERFACE ${_objects})
endfunction()

# Links the CUDA runtime the host-code library <target> needs (`compile --resolve
# --host-code`: the toolkit's cudart_static with dl, rt and pthread, and cudadevrt for
# relocatable code), from the toolkit of the compiler the build uses (nvcc's, or the one
# clang compiles against: a CUDA install or NVIDIA's wheels).
function(_offload_link_cuda_runtime target rdc)
  get_target_property(_compiler ${target} OFFLOAD_COMPILER)
  get_target_property(_kind ${target} OFFLOAD_CUDA_COMPILER)
  _offload_pick_compiler(_compiler _origin CUDA "${_compiler}" "${_kind}")
  get_target_property(_archs ${target} CUDA_ARCHITECTURES)
  if(NOT _archs OR _archs MATCHES "-NOTFOUND$" OR _archs MATCHES [[\$<]])
    set(_archs "")
  endif()
  _offload_flatten(_archs "${_archs}")
  _offload_resolve_args(_args cuda "${_archs}" "${_compiler}" "${_kind}")
  list(APPEND _args --host-code)
  if(rdc)
    list(APPEND _args --rdc)
  endif()
  # Fallback warnings are the build command's to give (its own resolve): not repeated here.
  execute_process(COMMAND "${OFFLOAD_BUILD_EXECUTABLE}" ${_args}
    RESULT_VARIABLE _rc OUTPUT_VARIABLE _out ERROR_VARIABLE _err)
  if(NOT _rc EQUAL 0)
    string(STRIP "${_err}" _err)
    string(REPLACE "offload-build: error: " "" _err "${_err}")
    message(FATAL_ERROR "offload_add_library(${target}): ${_err}")
  endif()
  string(REGEX MATCH "link-dir=([^\n]*)" _m "${_out}")
  set(_dir "${CMAKE_MATCH_1}")
  string(REGEX MATCHALL "link-lib=[^\n]*" _libs "${_out}")
  set(_link "")
  foreach(_l IN LISTS _libs)
    string(REPLACE "link-lib=" "" _l "${_l}")
    if(_l MATCHES "^static=(.*)$")
      list(APPEND _link "${_dir}/${CMAKE_STATIC_LIBRARY_PREFIX}${CMAKE_MATCH_1}${CMAKE_STATIC_LIBRARY_SUFFIX}")
    elseif(_l MATCHES "^dylib:\\+verbatim=(.*)$")
      list(APPEND _link "${_dir}/${CMAKE_MATCH_1}")
    else()
      list(APPEND _link "${_l}")
    endif()
  endforeach()
  if(_dir)
    target_link_directories(${target} INTERFACE "${_dir}")
  endif()
  target_link_libraries(${target} INTERFACE ${_link})
endfunction()

# Whether the CUDA compiler <path> is nvcc or clang: from CMAKE_CUDA_COMPILER_ID when
# <path> is CMAKE_CUDA_COMPILER and the language is enabled, else from its file name.
function(_offload_cuda_kind out path)
  if(path STREQUAL "${CMAKE_CUDA_COMPILER}" AND CMAKE_CUDA_COMPILER_ID STREQUAL "NVIDIA")
    set(${out} nvcc PARENT_SCOPE)
  elseif(path STREQUAL "${CMAKE_CUDA_COMPILER}" AND CMAKE_CUDA_COMPILER_ID MATCHES "Clang")
    set(${out} clang PARENT_SCOPE)
  else()
    get_filename_component(_name "${path}" NAME)
    if(_name MATCHES "nvcc")
      set(${out} nvcc PARENT_SCOPE)
    else()
      set(${out} clang PARENT_SCOPE)
    endif()
  endif()
endfunction()

# Sets <out> to the compiler to pass (empty: offload-build's discovery) and <out_origin> to
# where it came from: COMPILER, else OFFLOAD_<LANG>_COMPILER, else CMAKE_HIP_COMPILER when it
# is clang, or CMAKE_CUDA_COMPILER (nvcc or clang). With CUDA_COMPILER (<cuda_kind>), an
# OFFLOAD_CUDA_COMPILER or CMAKE_CUDA_COMPILER of the other kind is passed over; COMPILER
# is the user's own word and always passed (offload-build names a mismatch).
function(_offload_pick_compiler out out_origin language compiler cuda_kind)
  set(_origin "COMPILER")
  set(_candidates "")
  if(NOT compiler)
    list(APPEND _candidates "OFFLOAD_${language}_COMPILER")
    if(language STREQUAL "HIP" AND CMAKE_HIP_COMPILER_ID MATCHES "Clang")
      list(APPEND _candidates CMAKE_HIP_COMPILER)
    elseif(language STREQUAL "CUDA")
      list(APPEND _candidates CMAKE_CUDA_COMPILER)
    endif()
  endif()
  foreach(_var IN LISTS _candidates)
    if(compiler OR NOT ${_var})
      continue()
    endif()
    if(cuda_kind)
      _offload_cuda_kind(_kind "${${_var}}")
      if(NOT _kind STREQUAL cuda_kind)
        continue()
      endif()
    endif()
    set(compiler "${${_var}}")
    set(_origin "${_var}")
  endforeach()
  set(${out} "${compiler}" PARENT_SCOPE)
  set(${out_origin} "${_origin}" PARENT_SCOPE)
endfunction()

function(_offload_add_fatbin_command target)
  foreach(_p LANGUAGE SOURCES INCLUDE_DIRECTORIES COMPILE_DEFINITIONS COMPILE_OPTIONS COMPRESS
      CONTAINER EMBED COMPILER CUDA_COMPILER JOB_POOL JOBS TIMEOUT PTXAS OUTPUT NO_WARNINGS
      WARNINGS_INTO_ERRORS QUIET USES_TERMINAL NO_PCH HOST_CODE RDC OBJECTS)
    get_target_property(_${_p} ${target} OFFLOAD_${_p})
    if(_${_p} MATCHES "-NOTFOUND$")
      set(_${_p} "")
    endif()
  endforeach()
  string(TOLOWER "${_LANGUAGE}" _lang)
  get_target_property(_archs ${target} ${_LANGUAGE}_ARCHITECTURES)
  if(NOT _archs OR _archs MATCHES "-NOTFOUND$")
    set(_archs "")
  endif()
  _offload_flatten(_archs "${_archs}")
  get_target_property(_arch_origin ${target} OFFLOAD_ARCHITECTURES_ORIGIN)
  get_target_property(_initial ${target} OFFLOAD_INITIAL_ARCHITECTURES)
  if(NOT "${_archs}" STREQUAL "${_initial}" OR NOT _arch_origin)
    set(_arch_origin "the ${_LANGUAGE}_ARCHITECTURES property of ${target}")
  endif()
  _offload_pick_compiler(_COMPILER _compiler_origin "${_LANGUAGE}" "${_COMPILER}"
    "${_CUDA_COMPILER}")
  if(_archs MATCHES [[\$<]])
    # Generator expressions are known only at build time: the command resolves the list
    # (errors then come from the build); the compiler is still checked now.
    _offload_resolve(_unused _compiler "offload_add_fatbin(${target})" "${_lang}" "default"
      "${_COMPILER}" "${_arch_origin}" "${_compiler_origin}" "${_CUDA_COMPILER}")
    string(REPLACE ";" "," _arch_list "${_archs}")
    message(STATUS "offload_add_fatbin(${target}): ${_archs} (at build time) with ${_compiler}")
  else()
    _offload_resolve(_archs _compiler "offload_add_fatbin(${target})" "${_lang}" "${_archs}"
      "${_COMPILER}" "${_arch_origin}" "${_compiler_origin}" "${_CUDA_COMPILER}")
    message(STATUS "offload_add_fatbin(${target}): ${_archs} with ${_compiler}")
    string(REPLACE ";" "," _arch_list "${_archs}")
  endif()
  set_property(TARGET ${target} PROPERTY OFFLOAD_RESOLVED_ARCHITECTURES "${_archs}")

  # The `offload-build compile` arguments. To add a builder option: 1) a field and a setter in
  # Build, 2) its decision in the build's Plan (crates/offload-build/src/builder/plan/), 3) the
  # CLI flag and its mapping (`builder` in crates/offload-cli/src/helper/compile.rs), 4) its
  # argument here (and the offload_add_fatbin keyword and target property above).
  set(_args compile --language "${_lang}" --archs "${_arch_list}" --compiler "${_compiler}"
    --name "${target}")
  if(_CUDA_COMPILER)
    list(APPEND _args --cuda-compiler "${_CUDA_COMPILER}")
  endif()
  foreach(_s IN LISTS _SOURCES)
    list(APPEND _args "${_s}")
    get_source_file_property(_sa "${_s}" OFFLOAD_ARCHITECTURES)
    if(_sa AND NOT _sa MATCHES "-NOTFOUND$")
      _offload_resolve(_sa _unused "offload_add_fatbin(${target})" "${_lang}" "${_sa}"
        "${_compiler}" "the OFFLOAD_ARCHITECTURES property of ${_s}" "${_compiler_origin}"
        "${_CUDA_COMPILER}")
      string(REPLACE ";" "," _sa "${_sa}")
      list(APPEND _args "--file-archs=${_s}=${_sa}")
    endif()
  endforeach()
  foreach(_d IN LISTS _INCLUDE_DIRECTORIES)
    list(APPEND _args "-I${_d}")
  endforeach()
  foreach(_d IN LISTS _COMPILE_DEFINITIONS)
    list(APPEND _args "-D${_d}")
  endforeach()
  foreach(_o IN LISTS _COMPILE_OPTIONS)
    list(APPEND _args "--flag=${_o}")
  endforeach()
  if(_COMPRESS)
    list(APPEND _args --compress)
  endif()
  if(_CONTAINER STREQUAL "OFFLOAD_BINARY")
    list(APPEND _args --container offload-binary)
  elseif(_CONTAINER STREQUAL "CUDA_FATBIN")
    list(APPEND _args --container cuda-fatbin)
  elseif(_CONTAINER STREQUAL "BUNDLE")
    list(APPEND _args --container bundle)
  endif()
  if(_EMBED STREQUAL "FATBIN")
    list(APPEND _args --embed fatbin)
  endif()
  if(_HOST_CODE)
    list(APPEND _args --host-code)
  endif()
  if(_RDC)
    list(APPEND _args --rdc)
  endif()
  if(_JOBS)
    list(APPEND _args -j "${_JOBS}")
  endif()
  if(_TIMEOUT)
    list(APPEND _args --timeout "${_TIMEOUT}")
  endif()
  if(_PTXAS)
    list(APPEND _args --ptxas "${_PTXAS}")
  endif()
  if(_NO_WARNINGS)
    list(APPEND _args --no-warnings)
  endif()
  if(_WARNINGS_INTO_ERRORS)
    list(APPEND _args --warnings-into-errors)
  endif()
  if(_NO_PCH)
    list(APPEND _args --no-pch)
  endif()
  if(_QUIET)
    list(APPEND _args --quiet)
  endif()
  set(_depfile "${CMAKE_CURRENT_BINARY_DIR}/${target}.offload-build.d")
  list(APPEND _args -o "${_OUTPUT}" --depfile "${_depfile}"
    --out-dir "${CMAKE_CURRENT_BINARY_DIR}/${target}.offload-build")
  set(_pool "")
  if(_JOB_POOL AND CMAKE_GENERATOR MATCHES "Ninja")
    set(_pool JOB_POOL "${_JOB_POOL}")
  elseif(_USES_TERMINAL)
    set(_pool USES_TERMINAL)
  endif()
  set(_header "")
  if(NOT _EMBED STREQUAL "FATBIN" AND NOT _HOST_CODE)
    set(_header BYPRODUCTS "${CMAKE_CURRENT_BINARY_DIR}/${target}.offload-build/${target}_kernels.h")
  endif()
  # A compiler launcher (ccache, sccache) in front of every device compile: the language's
  # CMAKE_<LANG>_COMPILER_LAUNCHER, else CMAKE_CXX_COMPILER_LAUNCHER, passed to the command
  # as OFFLOAD_BUILD_LAUNCHER (a list: program and arguments, joined by spaces).
  set(_launcher "")
  foreach(_v CMAKE_${_LANGUAGE}_COMPILER_LAUNCHER CMAKE_CXX_COMPILER_LAUNCHER)
    if(NOT _launcher AND ${_v})
      list(JOIN ${_v} " " _launcher)
    endif()
  endforeach()
  set(_run "${OFFLOAD_BUILD_EXECUTABLE}")
  if(_launcher)
    set(_run "${CMAKE_COMMAND}" -E env "OFFLOAD_BUILD_LAUNCHER=${_launcher}"
      "${OFFLOAD_BUILD_EXECUTABLE}")
  endif()
  # OBJECT: the objects taken out of the library, as offload_add_library named them.
  set(_extract "")
  if(_OBJECTS)
    list(GET _OBJECTS 0 _first)
    get_filename_component(_objdir "${_first}" DIRECTORY)
    set(_extract COMMAND "${CMAKE_COMMAND}" -E make_directory "${_objdir}"
      COMMAND "${CMAKE_COMMAND}" -E chdir "${_objdir}" "${CMAKE_AR}" x "${_OUTPUT}")
  endif()
  add_custom_command(
    OUTPUT "${_OUTPUT}" ${_OBJECTS}
    ${_header}
    COMMAND ${_run} ${_args}
    ${_extract}
    DEPENDS ${_SOURCES} "${OFFLOAD_BUILD_EXECUTABLE}"
    DEPFILE "${_depfile}"
    ${_pool}
    # In the top source directory: offload-build takes its working directory as the build's
    # root and spells the sources and include directories under it relative in the device
    # compiles, so another checkout (another directory) compiles the same commands: the same
    # bytes, and hits for a compiler cache (every path argument here is absolute).
    WORKING_DIRECTORY "${CMAKE_SOURCE_DIR}"
    COMMENT "offload-build: ${target} (${_archs})"
    VERBATIM)
endfunction()

cmake_policy(POP)
