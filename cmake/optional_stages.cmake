# Later pipeline stages. Each stage lives in its own folder under src/ and is added here.
find_package(dnnl CONFIG REQUIRED)
graphsub_stage(graphsub_onednn DIRS exec_onednn DEPS graphsub_ref DNNL::dnnl)

graphsub_stage(graphsub_models DIRS models DEPS graphsub_ir)

set(GRAPHSUB_CLI_LIBS graphsub_ir graphsub_ref graphsub_onednn graphsub_models)
