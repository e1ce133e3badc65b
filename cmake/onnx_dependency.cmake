# The ONNX C++ library: the release pinned in pyproject.toml (one pin for the C++ library and
# the Python package), built from its source distribution by scripts/build_onnx.sh into a
# cache outside the checkout. Debian's libonnx-dev (1.12, opsets up to 17) is not used.
# GRAPHSUB_ONNX_PREFIX names an install of that release to use instead.
file(STRINGS ${CMAKE_SOURCE_DIR}/pyproject.toml onnx_pin REGEX "\"onnx==[0-9.]+\"")
string(REGEX MATCH "[0-9]+\\.[0-9]+\\.[0-9]+" GRAPHSUB_ONNX_VERSION "${onnx_pin}")
if(NOT GRAPHSUB_ONNX_VERSION)
  message(FATAL_ERROR "pyproject.toml pins no onnx==VERSION")
endif()
if(NOT GRAPHSUB_ONNX_PREFIX)
  # The build script prints the prefix, building there first when it is not complete.
  find_program(GRAPHSUB_PIP_PYTHON NAMES python3 PATHS ${CMAKE_SOURCE_DIR}/.venv/bin NO_DEFAULT_PATH)
  if(NOT GRAPHSUB_PIP_PYTHON)
    set(GRAPHSUB_PIP_PYTHON ${Python_EXECUTABLE})
  endif()
  if(NOT GRAPHSUB_PIP_PYTHON)
    find_package(Python REQUIRED COMPONENTS Interpreter)
    set(GRAPHSUB_PIP_PYTHON ${Python_EXECUTABLE})
  endif()
  execute_process(COMMAND ${CMAKE_SOURCE_DIR}/scripts/build_onnx.sh ${GRAPHSUB_PIP_PYTHON}
                  OUTPUT_VARIABLE prefix OUTPUT_STRIP_TRAILING_WHITESPACE RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "scripts/build_onnx.sh could not build ONNX ${GRAPHSUB_ONNX_VERSION}")
  endif()
  set(GRAPHSUB_ONNX_PREFIX ${prefix} CACHE PATH "Install prefix of the pinned ONNX C++ library")
endif()
find_package(Protobuf REQUIRED)
find_package(ONNX ${GRAPHSUB_ONNX_VERSION} EXACT CONFIG REQUIRED PATHS ${GRAPHSUB_ONNX_PREFIX}
             NO_DEFAULT_PATH)
message(STATUS "ONNX ${ONNX_VERSION} from ${GRAPHSUB_ONNX_PREFIX}")
