# SPDX-License-Identifier: GPL-2.0-only
# Records which sources a build of ns3-scenarios/ was made from, after every build (cmake -P):
#   cmake -DREPO=<repository root> -DOUT=<file> -P SourceDigest.cmake
# The digest is the SHA-256 of the lines "<sha256 of the file>  <path from the repository root>",
# one per file in path order, over ns3-scenarios/ (third_party/ left out: 5G-LENA is built and
# keyed apart, scripts/build-nr.sh) and the wire schema cellgym/proto/ns3opengym.proto.
# cellgym.paths.ns3_program computes the same digest and refuses a program built from other
# sources than the checkout's.
if(NOT REPO OR NOT OUT)
  message(FATAL_ERROR "SourceDigest.cmake: pass -DREPO=<repository root> -DOUT=<file>")
endif()
file(GLOB_RECURSE _files LIST_DIRECTORIES false RELATIVE "${REPO}" "${REPO}/ns3-scenarios/*")
list(FILTER _files EXCLUDE REGEX "^ns3-scenarios/third_party/")
list(APPEND _files "cellgym/proto/ns3opengym.proto")
list(SORT _files)
set(_lines "")
foreach(_rel IN LISTS _files)
  file(SHA256 "${REPO}/${_rel}" _sum)
  string(APPEND _lines "${_sum}  ${_rel}\n")
endforeach()
string(SHA256 _digest "${_lines}")
file(WRITE "${OUT}.tmp" "${_digest}\n")
file(RENAME "${OUT}.tmp" "${OUT}")
