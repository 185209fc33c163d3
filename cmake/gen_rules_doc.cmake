# Writes docs/rules.md: the hand-written docs/rules-intro.md followed by the rule table as the
# binary prints it (`gpu-preflight rules --format markdown`). Run by the `docs` target:
#   cmake -DBINARY=<gpu-preflight> -DINTRO=<rules-intro.md> -DOUT=<rules.md> -P gen_rules_doc.cmake
execute_process(COMMAND "${BINARY}" rules --format markdown
                OUTPUT_VARIABLE table
                RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${BINARY} rules --format markdown failed (${rc})")
endif()
file(READ "${INTRO}" intro)
file(WRITE "${OUT}" "${intro}${table}")
message(STATUS "Wrote ${OUT}")
