# SPDX-License-Identifier: GPL-2.0-only
# Finds the ns-3 wheel's CMake package (NS3_WHEEL_DIR = site-packages/ns3) and repairs its imported
# targets. Shared by the scenario build (../CMakeLists.txt) and the 5G-LENA build
# (../third_party/nr/CMakeLists.txt).
#
# The wheel's exported targets name build-machine paths (/usr/include/glib-2.0, /usr/lib64/libgsl.so,
# ...) that do not exist here. Point every imported target at the wheel's headers and drop those
# libraries: the bundled copies resolve through the ns-3 libraries' own $ORIGIN rpath.
set(NS3_WHEEL_DIR "" CACHE PATH "site-packages/ns3 directory of the ns3 wheel")
if(NOT NS3_WHEEL_DIR)
  message(FATAL_ERROR "Set NS3_WHEEL_DIR to the ns3 wheel's directory (site-packages/ns3)")
endif()
set(NS3_INCLUDE_DIR "${NS3_WHEEL_DIR}/include")
set(NS3_LIB_DIR "${NS3_WHEEL_DIR}/lib64")

find_package(ns3 ${NS3_PINNED_VERSION} EXACT CONFIG REQUIRED PATHS "${NS3_LIB_DIR}/cmake/ns3" NO_DEFAULT_PATH)

get_directory_property(_cellgym_imported IMPORTED_TARGETS)
foreach(_tgt IN LISTS _cellgym_imported)
  if(_tgt MATCHES "^ns3::")
    set_target_properties(${_tgt} PROPERTIES INTERFACE_INCLUDE_DIRECTORIES "${NS3_INCLUDE_DIR}")
    get_target_property(_libs ${_tgt} INTERFACE_LINK_LIBRARIES)
    if(_libs)
      list(FILTER _libs EXCLUDE REGEX "^(/usr)?/lib64/")
      set_target_properties(${_tgt} PROPERTIES INTERFACE_LINK_LIBRARIES "${_libs}")
    endif()
  endif()
endforeach()
