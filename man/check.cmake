# Checks a man page with groff, every warning on (-ww) and taken as an
# error, and compresses it: cmake -DGROFF=... -DPAGE=... -DOUT=... -P
execute_process(COMMAND ${GROFF} -man -Tutf8 -ww -z ${PAGE}
  RESULT_VARIABLE status ERROR_VARIABLE warnings)
if(NOT status EQUAL 0 OR NOT warnings STREQUAL "")
  message(FATAL_ERROR "${PAGE}: groff says:\n${warnings}")
endif()
execute_process(COMMAND gzip -9nc ${PAGE} OUTPUT_FILE ${OUT}
  RESULT_VARIABLE status)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "${PAGE}: gzip failed")
endif()
