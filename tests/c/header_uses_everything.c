/* Compiled (not linked) as strict C99 and C++17 against generated/c/uform.h: every declaration is used once. */
#include <uform.h>

static uform_status_t use_everything(void) {
    uform_executor_for_ram_config_t ram;
    uform_executor_on_pool_config_t pool;
    uform_executor_for_vram_config_t vram;
    uform_mesh_options_t options;
    uform_mesh_description_t description;
    const uform_gpu_device_t *devices = NULL;
    size_t devices_count = 0;
    uform_executor_t *executor = NULL;
    uform_mesh_t *mesh = NULL;
    uint32_t domains[1] = {0};
    uintptr_t streams[1] = {0};
    bool found = false;
    uform_status_t status = UFORM_STATUS_OK;
    const char *text = uform_capabilities_compiled();
    text = uform_capabilities_available();
    text = uform_gpu_class_name(0);
    text = uform_last_error_message();
    text = uform_status_name(UFORM_STATUS_INVALID_ARGUMENT);
    (void)text;

    ram.memory_domains = domains;
    ram.memory_domains_count = 1;
    ram.cpu_class = NULL;
    ram.threads = 0;
    ram.deferred_limit = 0;
    pool.memory_domains = NULL;
    pool.memory_domains_count = 0;
    pool.cpu_class = NULL;
    pool.deferred_limit = 0;
    vram.devices = domains;
    vram.devices_count = 1;
    vram.gpu_class = "nvidia-hopper";
    vram.memory_domains = NULL;
    vram.memory_domains_count = 0;
    vram.cpu_class = NULL;
    vram.streams = streams;
    vram.streams_count = 1;
    vram.scratch_limit = 0;
    vram.deferred_limit = 0;
    options.host_domain_index = 0;
    options.host_domain_count = 1;
    options.gpus_per_multimem_domain = 0;
    options.directory = NULL;
    options.job = NULL;
    options.timeout_seconds = 0;

    status = uform_gpu_devices(&devices, &devices_count);
    if (devices_count > 0 && devices[0].vendor == UFORM_GPU_VENDOR_NVIDIA && devices[0].gpu_class >= 0) {
        text = devices[0].name;
        (void)devices[0].vendor_ordinal;
        (void)devices[0].compute_units;
        (void)devices[0].memory_bytes;
    }
    status = uform_executor_for_vram(&vram, &executor);
    status = uform_executor_on_pool((uintptr_t)0x1000, &pool, &executor);
    status = uform_executor_for_ram(&ram, &executor);
    status = uform_executor_drain(executor, UFORM_MOOD_PARKED);
    status = uform_executor_drain(executor, UFORM_MOOD_SPINNING);
    status = uform_mesh_options_from_environment(&options, &found);
    status = uform_mesh_bootstrap(executor, &options, &mesh);
    status = uform_mesh_describe(mesh, &description);
    if (description.multimem_tier == UFORM_MULTIMEM_TIER_SWITCH_REDUCED ||
        description.multimem_tier == UFORM_MULTIMEM_TIER_PEER_READ) {
        (void)description.host_domain_index;
        (void)description.host_domain_count;
        (void)description.gpus;
        (void)description.gpus_count;
        (void)description.gpus_per_multimem_domain;
        (void)description.multimem_domain_count;
    }
    status = uform_mesh_free(mesh);

    uform_model_load_ram_config_t load;
    uform_model_t *model = NULL;
    uform_trainer_contrastive_config_t train;
    uform_trainer_t *trainer = NULL;
    uform_train_step_t step;
    const char *anchors[1] = {"an anchor"};
    const char *positives[1] = {"a positive"};
    load.struct_size = sizeof load;
    load.executor = executor;
    load.memory_domains = NULL;
    load.memory_domains_count = 0;
    load.revision = NULL;
    train.struct_size = sizeof train;
    train.learning_rate = 1e-4;
    train.weight_decay = 0.01;
    train.warmup_steps = 2;
    train.total_steps = 20;
    train.max_grad_norm = 1.0;
    train.scale = 20.0;
    train.max_tokens = 128;
    train.dropout = -0.0;
    train.seed = 12345;
    status = uform_model_load_ram("model", &load, &model);
    status = uform_trainer_contrastive(model, &train, &trainer);
    status = uform_trainer_step(trainer, anchors, 1, positives, 1, &step);
    if (step.step > 0 && step.loss + step.learning_rate + step.gradient_norm + step.seconds > 0.0) {
        status = uform_trainer_save(trainer, "trained");
    }
    status = uform_trainer_free(trainer);

    static const uint8_t png[8] = {0x89, 'P', 'N', 'G', 0x0d, 0x0a, 0x1a, 0x0a};
    uform_bytes_t image;
    uform_encode_image_options_t image_options;
    uform_f32_matrix_t embeddings;
    image.data = png;
    image.len = sizeof png;
    image_options.struct_size = sizeof image_options;
    image_options.normalize = true;
    embeddings.data = NULL;
    embeddings.rows = 0;
    embeddings.columns = 0;
    status = uform_model_encode_image(model, &image, 1, &image_options, &embeddings);
    if (status == UFORM_STATUS_OK && embeddings.rows * embeddings.columns > 0 && embeddings.data[0] > 0.0f) {
        uform_f32_matrix_free(&embeddings);
    }
    status = uform_model_free(model);
    status = uform_executor_free(executor);
    if (status == UFORM_STATUS_UNSUPPORTED || status == UFORM_STATUS_UNAVAILABLE || status == UFORM_STATUS_TIMEOUT ||
        status == UFORM_STATUS_IN_USE || status == UFORM_STATUS_CONFLICT || status == UFORM_STATUS_OUT_OF_MEMORY ||
        status == UFORM_STATUS_IO || status == UFORM_STATUS_DEVICE || status == UFORM_STATUS_FREED_HANDLE ||
        status == UFORM_STATUS_INTERNAL || status == UFORM_GPU_VENDOR_UNKNOWN + UFORM_GPU_VENDOR_AMD + UFORM_GPU_VENDOR_APPLE) {
        return status;
    }
    return UFORM_STATUS_OK;
}

uform_status_t (*volatile keep_it)(void) = use_everything;
