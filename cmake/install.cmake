# What `cmake --install BUILD --prefix P` puts in P (docs/cpp-api.md, "Installing and
# linking"): bin/ytape, bin/ytape-onnx (its import and export) and its MPI module
# lib/ytape/libytape_mpi.so; the static libraries in lib/; their headers in include/ytape/,
# laid out as in the tree, so that `#include "tape/builder.h"` works with
# -I P/include/ytape; a CMake package whose target ytape::ytape links every library and
# what they need (lib/cmake/ytape/); and lib/pkgconfig/ytape.pc. tests/install/check.sh
# uses both.
include(CMakePackageConfigHelpers)

# The layers, highest first (docs/architecture.md): the order in which a linker needs
# static libraries (ytape.pc).
set(YTAPE_LIBRARIES tracer check grad onnx opt train runtime inspect io tape)

# ytape::ytape, the one target to link (in the tree too); each library is ytape::<dir>.
add_library(ytape_all INTERFACE)
add_library(ytape::ytape ALIAS ytape_all)
set_target_properties(ytape_all PROPERTIES EXPORT_NAME ytape)
set(header_patterns "")
foreach(lib ${YTAPE_LIBRARIES})
  target_link_libraries(ytape_all INTERFACE ytape_${lib})
  set_target_properties(ytape_${lib} PROPERTIES EXPORT_NAME ${lib})
  list(APPEND header_patterns ${lib}/*.h ${lib}/*.def)  # headers include the .def tables
endforeach()
# Every library links ytape_tape, which passes on what users need: C++20 for the headers
# and, in a sanitizer build, the sanitizers' runtimes.
target_compile_features(ytape_tape INTERFACE cxx_std_20)
if(YTAPE_SANITIZE)
  set(YTAPE_SANITIZER_LINK_FLAGS -fsanitize=address,undefined)
  target_link_options(ytape_tape INTERFACE $<INSTALL_INTERFACE:${YTAPE_SANITIZER_LINK_FLAGS}>)
endif()

install(TARGETS ytape ytape-onnx)
install(TARGETS ytape_mpi LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}/ytape)
list(TRANSFORM YTAPE_LIBRARIES PREPEND ytape_ OUTPUT_VARIABLE targets)
install(TARGETS ytape_all ${targets} EXPORT ytapeTargets)
file(GLOB_RECURSE headers CONFIGURE_DEPENDS RELATIVE ${PROJECT_SOURCE_DIR} ${header_patterns})
foreach(header ${headers})
  get_filename_component(dir ${header} DIRECTORY)
  install(FILES ${header} DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/ytape/${dir})
endforeach()

set(cmake_dir ${CMAKE_INSTALL_LIBDIR}/cmake/ytape)
install(EXPORT ytapeTargets NAMESPACE ytape:: DESTINATION ${cmake_dir})
configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/ytapeConfig.cmake.in ytapeConfig.cmake
                              INSTALL_DESTINATION ${cmake_dir})
write_basic_package_version_file(ytapeConfigVersion.cmake COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/ytapeConfig.cmake ${PROJECT_BINARY_DIR}/ytapeConfigVersion.cmake
        DESTINATION ${cmake_dir})

# ytape.pc finds the prefix from its own place, as the CMake package does, so that the
# prefix given at install time holds. `pkg-config --libs` (without --static) gives only
# Libs, and the libraries are static: what they link goes there, or in Requires when it
# has a .pc file of its own.
file(RELATIVE_PATH YTAPE_PC_PREFIX /p/${CMAKE_INSTALL_LIBDIR}/pkgconfig /p)
string(REGEX REPLACE "/$" "" YTAPE_PC_PREFIX ${YTAPE_PC_PREFIX})
list(TRANSFORM YTAPE_LIBRARIES PREPEND -lytape_ OUTPUT_VARIABLE libs)
list(APPEND libs -ldnnl -lonnx -lonnx_proto ${OpenMP_CXX_FLAGS} -pthread ${YTAPE_SANITIZER_LINK_FLAGS})
list(JOIN libs " " YTAPE_PC_LIBS)
configure_file(${CMAKE_CURRENT_LIST_DIR}/ytape.pc.in ytape.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/ytape.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
