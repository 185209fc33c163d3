# Runs the matrix generator (tools/matrix_gen.cpp) on a copy of data/ in which one row of
# driver_branches.json has an end of life that is no month, and asserts that it fails and that its
# message names the file and the field. Run as a script:
#   cmake -DGEN=<matrix_gen> -DDATA_DIR=<data> -DWORK=<dir> -DFILES="a.json;b.json" -P bad_row.cmake
file(REMOVE_RECURSE "${WORK}")
file(MAKE_DIRECTORY "${WORK}")
foreach(name IN LISTS FILES)
  file(COPY "${DATA_DIR}/${name}" DESTINATION "${WORK}")
endforeach()
file(READ "${WORK}/driver_branches.json" text)
string(REPLACE "\"end_of_life\": \"2026-06\"" "\"end_of_life\": \"2026-13\"" bad "${text}")
if(bad STREQUAL text)
  message(FATAL_ERROR "the test's bad row no longer applies: no \"end_of_life\": \"2026-06\" in driver_branches.json")
endif()
file(WRITE "${WORK}/driver_branches.json" "${bad}")
execute_process(COMMAND "${GEN}" "${WORK}/out.cpp" "${WORK}" ${FILES}
                RESULT_VARIABLE rc ERROR_VARIABLE err OUTPUT_VARIABLE out)
message(STATUS "matrix_gen exited ${rc}: ${err}")
if(rc EQUAL 0)
  message(FATAL_ERROR "matrix_gen accepted a bad row")
endif()
if(NOT err MATCHES "driver_branches\\.json: rows\\[[0-9]+\\]\\.end_of_life: must be YYYY-MM")
  message(FATAL_ERROR "matrix_gen's message does not name the file and the field: ${err}")
endif()
if(EXISTS "${WORK}/out.cpp")
  message(FATAL_ERROR "matrix_gen wrote tables from bad data")
endif()
