# Later pipeline stages. Each stage lives in its own folder under src/ and is added here.
find_package(dnnl CONFIG REQUIRED)
graphsub_stage(graphsub_onednn DIRS exec_onednn DEPS graphsub_ref DNNL::dnnl)
# The fast executor sets oneDNN's OpenMP thread count per executor (OnednnOptions::threads).
find_package(OpenMP REQUIRED)
target_link_libraries(graphsub_onednn PRIVATE OpenMP::OpenMP_CXX)

# The one equivalence check of two graphs on random inputs (either executor).
graphsub_stage(graphsub_check DIRS check DEPS graphsub_onednn)

graphsub_stage(graphsub_models DIRS models DEPS graphsub_ir)

set(GRAPHSUB_CLI_LIBS graphsub_core graphsub_ops graphsub_ir graphsub_ref graphsub_onednn graphsub_check graphsub_models)


# ONNX import/export (the only stage that talks to protobuf).
include(cmake/onnx_dependency.cmake)
graphsub_stage(graphsub_onnx DIRS onnx DEPS graphsub_ref graphsub_onednn ONNX::onnx ONNX::onnx_proto)
list(APPEND GRAPHSUB_CLI_LIBS graphsub_onnx)

# The rule language: terms, axioms, rules, instantiation as IR, bounded numeric checking.
graphsub_stage(graphsub_rules DIRS rules DEPS graphsub_ref)
list(APPEND GRAPHSUB_CLI_LIBS graphsub_rules)

# The verifier: proves rules from the axioms with Z3 (the only stage that talks to Z3).
pkg_check_modules(Z3 REQUIRED IMPORTED_TARGET z3)
graphsub_stage(graphsub_verify DIRS verify DEPS graphsub_rules PkgConfig::Z3)
list(APPEND GRAPHSUB_CLI_LIBS graphsub_verify)

# The substitution generator: enumerates graphs, fingerprints them, proves candidates.
graphsub_stage(graphsub_gen DIRS gen DEPS graphsub_rules graphsub_verify)
list(APPEND GRAPHSUB_CLI_LIBS graphsub_gen)

# Generation on the ranks of an MPI job (Debian's Open MPI): the generator's Cluster over MPI
# when the build finds it; without it a run started by an MPI launcher is refused, by name.
set(MPI_CXX_SKIP_MPICXX ON)  # the C API only, not the deprecated C++ bindings
find_package(MPI COMPONENTS CXX)
if(MPI_CXX_FOUND)
  graphsub_stage(graphsub_dist DIRS dist DEPS graphsub_gen MPI::MPI_CXX)
  target_compile_definitions(graphsub_dist PRIVATE GRAPHSUB_HAVE_MPI=1)
else()
  graphsub_stage(graphsub_dist DIRS dist DEPS graphsub_gen)
endif()
list(APPEND GRAPHSUB_CLI_LIBS graphsub_dist)

# The optimizer: rule matching and rewriting, weight pre-computation, cost models, search.
graphsub_stage(graphsub_opt DIRS opt DEPS graphsub_rules graphsub_check)
list(APPEND GRAPHSUB_CLI_LIBS graphsub_opt)

# JSON (the optimizer's cost caches, ONNX Runtime's worker protocol, the driver's reports):
# header-only.
find_package(nlohmann_json 3 REQUIRED)
target_link_libraries(graphsub_opt PRIVATE nlohmann_json::nlohmann_json)

# ONNX Runtime as a cost target: a Node.js worker (tools/ort_worker.js) driven over a pipe,
# a cost model that prices operator configurations in it, and the end-to-end latency guard.
graphsub_stage(graphsub_ort DIRS ort DEPS graphsub_opt graphsub_onnx nlohmann_json::nlohmann_json)
list(APPEND GRAPHSUB_CLI_LIBS graphsub_ort)

# The jobs the command line and the Python module share: option structs and their
# validation, the ONNX pipeline (import, optimize, check, export) and the report.
graphsub_stage(graphsub_driver DIRS driver
               DEPS graphsub_opt graphsub_onnx graphsub_ort graphsub_models graphsub_gen graphsub_dist graphsub_verify
                    nlohmann_json::nlohmann_json ${CMAKE_DL_LIBS})
list(APPEND GRAPHSUB_CLI_LIBS graphsub_driver)
