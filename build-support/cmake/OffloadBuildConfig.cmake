# find_package(OffloadBuild CONFIG): installed as <prefix>/lib/cmake/OffloadBuild/ with
# offload-build and offload-bundler in <prefix>/bin. See OffloadBuild.cmake for the functions.
include("${CMAKE_CURRENT_LIST_DIR}/OffloadBuild.cmake")
set(OffloadBuild_FOUND TRUE)
