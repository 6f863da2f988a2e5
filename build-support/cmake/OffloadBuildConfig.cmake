# find_package(OffloadBuild CONFIG): installed as <prefix>/lib/cmake/OffloadBuild/ with
# offload-build and offload-bundler in <prefix>/bin, or in a checkout's build-support/cmake/
# (found with PATHS or OffloadBuild_DIR; the helper is then built with cargo into the build
# directory). See OffloadBuild.cmake for the functions.
include("${CMAKE_CURRENT_LIST_DIR}/OffloadBuild.cmake")
set(OffloadBuild_FOUND TRUE)
