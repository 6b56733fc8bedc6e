/*
 * The C trainer-across-the-mesh scenarios 30–32 (../../../shared/SCENARIOS.md), against generated/c/uform.h and
 * libuform: this binary re-spawns itself as the peers (`peer ROLE DIRECTORY RANK WORLD REFERENCE OUT STEPS`), each one a
 * rank on one mesh at 127.0.0.1 with one thread. `cargo xtask test c` flattens each rank's view of the torch DDP
 * fixtures (tests/fixtures/train/ddp2.json, ddp4.json) into UFORM_TEST_TRAIN_DDP/ddpW-rankR.txt. A `fixture` peer
 * trains STEPS steps (two ranks all 20, four ranks the first 4: the core's own suite runs all 20 of both) and checks
 * each step's loss (1e-4 relative), learning rate and gradient norm against its rank's view and the held-out
 * embeddings after all 20 (cosine >= 0.9999), and writes the held-out embeddings to OUT; a `faults` peer runs scenarios
 * 31–32 (rank 1 dies by SIGKILL after a step). Under valgrind (UFORM_TEST_NO_PROCESSES) only the one-process mesh
 * scenario runs. Prints one line per test and closes with "N passed, N failed".
 */
#define _POSIX_C_SOURCE 200809L
#include "suite.h"
#include "train_reference.h"

#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;
static char self_path[4096];
static const char *model_dir = NULL;

static uform_executor_t *one_thread(void) {
    uform_executor_for_ram_config_t config = UFORM_EXECUTOR_FOR_RAM_CONFIG_INIT;
    config.threads = 1;
    uform_executor_t *executor = NULL;
    return uform_executor_for_ram(&config, &executor) == UFORM_STATUS_OK ? executor : NULL;
}

/* Whether `status` is `expected` and the message holds `needle`; says what it got when not. */
static int failed_as(uform_status_t status, uform_status_t expected, const char *needle) {
    if (status == expected && says(needle)) return 1;
    fprintf(stderr, "    expected status %d naming \"%s\", got %d: %s\n", (int)expected, needle, (int)status,
            uform_last_error_message());
    return 0;
}

/* One rank. Returns its exit status: 0 when every check held. */
static int peer(const char *role, const char *dir, unsigned rank, unsigned world, const char *reference,
                const char *out, size_t steps) {
    if (!read_reference(reference) || steps > ref_steps) return 20;
    uform_executor_t *executor = one_thread();
    uform_mesh_options_t options = UFORM_MESH_OPTIONS_INIT;
    options.host_domain_index = rank;
    options.host_domain_count = world;
    options.directory = dir;
    options.job = "train";
    options.timeout_seconds = 30;
    uform_mesh_t *mesh = NULL;
    uform_model_t *model = NULL;
    if (!executor || uform_mesh_bootstrap(executor, &options, &mesh) != UFORM_STATUS_OK ||
        load_ram(model_dir, executor, &model) != UFORM_STATUS_OK) {
        fprintf(stderr, "rank %u: %s\n", rank, uform_last_error_message());
        return 21;
    }
    uform_trainer_contrastive_config_t config = ref_config;
    config.mesh = mesh;
    uform_trainer_t *trainer = NULL;
    if (uform_trainer_contrastive(model, &config, &trainer) != UFORM_STATUS_OK) {
        fprintf(stderr, "rank %u: %s\n", rank, uform_last_error_message());
        return 22;
    }
    int bad = 0;
    const char **anchors = calloc(ref_pairs, sizeof *anchors), **positives = calloc(ref_pairs, sizeof *positives);
    uform_train_step_t s;
    if (strcmp(role, "fixture") == 0) {
        for (size_t k = 0; k < steps; k++) {
            size_t n = batch(k, anchors, positives);
            memset(&s, 0, sizeof s);
            if (uform_trainer_step(trainer, anchors, n, positives, n, &s) != UFORM_STATUS_OK) {
                fprintf(stderr, "rank %u, step %zu: %s\n", rank, k + 1, uform_last_error_message());
                bad++;
                break;
            }
            if (!(fabs(s.loss - ref_loss[k]) <= 1e-4 * fabs(ref_loss[k]) &&
                  fabs(s.learning_rate - ref_lr[k]) <= 1e-9 * fabs(ref_lr[k]) &&
                  fabs(s.gradient_norm - ref_grad_norm[k]) <= 1e-3 * ref_grad_norm[k])) {
                fprintf(stderr, "rank %u, step %zu: loss %.9g (torch DDP %.9g), lr %.12g (%.12g), norm %.7g (%.7g)\n",
                        rank, k + 1, s.loss, ref_loss[k], s.learning_rate, ref_lr[k], s.gradient_norm,
                        ref_grad_norm[k]);
                bad++;
            }
        }
        uform_f32_matrix_t m;
        memset(&m, 0, sizeof m);
        if (uform_model_encode_text(model, (const char *const *)ref_held_texts, ref_held, NULL, &m) != UFORM_STATUS_OK ||
            m.rows != ref_held || m.columns != ref_dims) {
            bad++;
        } else {
            for (size_t r = 0; r < ref_held; r++) {
                double c = cosine(m.data + r * ref_dims, ref_after + r * ref_dims, ref_dims);
                if (steps == ref_steps && c < 0.9999) fprintf(stderr, "rank %u, held-out %zu: cosine %.6f to torch DDP's\n", rank, r, c), bad++;
            }
            write_bytes(out, m.data, (size_t)m.rows * m.columns * sizeof(float));
        }
        uform_f32_matrix_free(&m);
    } else {
        size_t n = batch(0, anchors, positives);
        size_t mine = rank == 1 ? n - 1 : n;
        bad += !failed_as(uform_trainer_step(trainer, anchors, mine, positives, mine, &s),
                          UFORM_STATUS_INVALID_ARGUMENT, rank == 0 ? "rank 1 has 7 pairs" : "rank 0 has 8 pairs");
        /* Rank 1 passes one positive too few, which core refuses: every rank refuses the step. */
        uform_status_t refused = uform_trainer_step(trainer, anchors, n, positives, rank == 1 ? n - 1 : n, &s);
        bad += !failed_as(refused, UFORM_STATUS_INVALID_ARGUMENT, rank == 0 ? "refused by rank 1" : "positives");
        bad += !failed_as(uform_mesh_free(mesh), UFORM_STATUS_IN_USE, "trainer");
        if (uform_trainer_step(trainer, anchors, n, positives, n, &s) != UFORM_STATUS_OK) bad++;
        if (rank == 1) raise(SIGKILL);
        struct timespec t0, t1;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        uform_status_t lost = uform_trainer_step(trainer, anchors, n, positives, n, &s);
        clock_gettime(CLOCK_MONOTONIC, &t1);
        if (!(lost == UFORM_STATUS_CONFLICT || lost == UFORM_STATUS_TIMEOUT) || !says("rank 1 of the mesh is gone")) {
            fprintf(stderr, "    a lost peer gave %d: %s\n", (int)lost, uform_last_error_message());
            bad++;
        }
        if ((double)(t1.tv_sec - t0.tv_sec) > 35.0) bad++;
        uform_f32_matrix_t m;
        memset(&m, 0, sizeof m);
        if (uform_model_encode_text(model, anchors, n, NULL, &m) != UFORM_STATUS_OK || m.rows != n) bad++;
        uform_f32_matrix_free(&m);
    }
    free(anchors);
    free(positives);
    if (uform_trainer_free(trainer) != UFORM_STATUS_OK || uform_model_free(model) != UFORM_STATUS_OK ||
        uform_mesh_free(mesh) != UFORM_STATUS_OK || uform_executor_free(executor) != UFORM_STATUS_OK)
        bad++;
    free_reference();
    return bad == 0 ? 0 : 1;
}

/* Spawns `world` peers in `role` over `dir`; fills their wait statuses. */
static void spawn_peers(const char *role, const char *dir, unsigned world, unsigned steps, int *statuses) {
    const char *ddp = getenv("UFORM_TEST_TRAIN_DDP");
    pid_t pids[8];
    for (unsigned r = 0; r < world; r++) {
        char rank[16], count[16], reference[4096], out[4096], step_count[16];
        snprintf(step_count, sizeof step_count, "%u", steps);
        snprintf(rank, sizeof rank, "%u", r);
        snprintf(count, sizeof count, "%u", world);
        snprintf(reference, sizeof reference, "%s/ddp%u-rank%u.txt", ddp, world == 4 ? 4u : 2u, r);
        snprintf(out, sizeof out, "%s/held-out-%u.bin", dir, r);
        char *argv[] = {self_path, "peer", (char *)role, (char *)dir, rank, count, reference, out, step_count, NULL};
        CHECK(posix_spawn(&pids[r], self_path, NULL, NULL, argv, environ) == 0);
    }
    for (unsigned r = 0; r < world; r++) waitpid(pids[r], &statuses[r], 0);
}

static long file_bytes(const char *path, char **bytes) {
    FILE *f = fopen(path, "rb");
    if (!f) return -1;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    *bytes = malloc((size_t)n + 1);
    if (fread(*bytes, 1, (size_t)n, f) != (size_t)n) n = -1;
    fclose(f);
    return n;
}

/* 30. `world` processes reproduce torch DDP on `world` ranks, and all end with the same weights. */
static void reproduces(unsigned world, unsigned steps) {
    char dir[1024], mesh_dir[1100];
    scratch(dir, sizeof dir, world == 4 ? "ddp4" : "ddp2");
    snprintf(mesh_dir, sizeof mesh_dir, "%s/mesh", dir);
    mkdir(mesh_dir, 0700);
    int statuses[8];
    spawn_peers("fixture", mesh_dir, world, steps, statuses);
    for (unsigned r = 0; r < world; r++) CHECK(WIFEXITED(statuses[r]) && WEXITSTATUS(statuses[r]) == 0);
    char *first = NULL;
    char path[1200];
    snprintf(path, sizeof path, "%s/held-out-0.bin", mesh_dir);
    long n = file_bytes(path, &first);
    CHECK(n > 0);
    for (unsigned r = 0; r < world; r++) {
        char *other = NULL;
        snprintf(path, sizeof path, "%s/held-out-%u.bin", mesh_dir, r);
        CHECK(file_bytes(path, &other) == n && n > 0 && memcmp(first, other, (size_t)n) == 0);
        free(other);
        remove(path);
    }
    free(first);
    CHECK(directory_entries(mesh_dir) == 0); /* the job directory and the collective's store are gone */
    rmdir(mesh_dir);
    rmdir(dir);
}

static void test_30_two_processes_reproduce_torch_ddp(void) { reproduces(2, 20); }

static void test_30_four_processes_reproduce_torch_ddp(void) { reproduces(4, 4); }

/* 31–32. A mismatched batch and a refused one fail on every rank, naming it; the mesh is in use under its
 * trainer; a peer killed after a step makes rank 0's next step fail naming rank 1, the model still embeds. */
static void test_31_32_faults(void) {
    char dir[1024];
    scratch(dir, sizeof dir, "faults");
    int statuses[2];
    spawn_peers("faults", dir, 2, 0, statuses);
    CHECK(WIFEXITED(statuses[0]) && WEXITSTATUS(statuses[0]) == 0);
    CHECK(WIFSIGNALED(statuses[1]) && WTERMSIG(statuses[1]) == SIGKILL);
    CHECK(directory_entries(dir) == 0); /* the survivor removed the job directory: rank 1's process is gone */
    rmdir(dir);
}

/* 32. A trainer on a mesh of one process trains alone (natively: one step) and borrows the mesh: freeing it is in
 * use until the trainer is freed. */
static void test_32_mesh_of_one_is_borrowed(void) {
    uform_executor_t *executor = ram_executor();
    uform_mesh_t *mesh = NULL;
    CHECK_STATUS(uform_mesh_bootstrap(executor, NULL, &mesh), UFORM_STATUS_OK);
    uform_model_t *model = NULL;
    CHECK_STATUS(load_ram(model_dir, executor, &model), UFORM_STATUS_OK);
    uform_trainer_contrastive_config_t config = ref_config;
    config.mesh = mesh;
    uform_trainer_t *trainer = NULL;
    CHECK_STATUS(uform_trainer_contrastive(model, &config, &trainer), UFORM_STATUS_OK);
    CHECK_STATUS(uform_mesh_free(mesh), UFORM_STATUS_IN_USE);
    CHECK(says("trainer"));
    if (!getenv("UFORM_TEST_NO_PROCESSES")) { /* under valgrind test_train.c's step covers the same path */
        const char *anchors[2] = {ref_anchors[0], ref_anchors[1]};
        const char *positives[2] = {ref_positives[0], ref_positives[1]};
        uform_train_step_t s;
        memset(&s, 0, sizeof s);
        CHECK_STATUS(uform_trainer_step(trainer, anchors, 2, positives, 2, &s), UFORM_STATUS_OK);
        CHECK(s.step == 1 && isfinite(s.loss));
    }
    CHECK_STATUS(uform_trainer_free(trainer), UFORM_STATUS_OK);
    CHECK_STATUS(uform_mesh_free(mesh), UFORM_STATUS_OK);
    CHECK_STATUS(uform_model_free(model), UFORM_STATUS_OK);
    CHECK_STATUS(uform_executor_free(executor), UFORM_STATUS_OK);
}

int main(int argc, char **argv) {
    model_dir = getenv("UFORM_TEST_MODEL_DIR");
    if (argc == 9 && strcmp(argv[1], "peer") == 0)
        return peer(argv[2], argv[3], (unsigned)atoi(argv[4]), (unsigned)atoi(argv[5]), argv[6], argv[7],
                    (size_t)atoi(argv[8]));
    snprintf(self_path, sizeof self_path, "%s", argv[0]);
    scratch_root = getenv("UFORM_TEST_DIR") ? getenv("UFORM_TEST_DIR") : "/tmp";
    int skip_processes = getenv("UFORM_TEST_NO_PROCESSES") != NULL; /* under valgrind: peers run natively */
    char reference[4096];
    snprintf(reference, sizeof reference, "%s/ddp2-rank0.txt", getenv("UFORM_TEST_TRAIN_DDP") ? getenv("UFORM_TEST_TRAIN_DDP") : ".");
    int have_fixture = model_dir != NULL && read_reference(reference) && ref_pairs >= 2;
    if (!have_fixture) {
        printf("FAIL: UFORM_TEST_MODEL_DIR and UFORM_TEST_TRAIN_DDP are not set or unreadable; run the suite through "
               "`cargo xtask test c`\n");
        return 1;
    }
    struct test tests[] = {
        {"test_30_two_processes_reproduce_torch_ddp", test_30_two_processes_reproduce_torch_ddp, 1},
        {"test_30_four_processes_reproduce_torch_ddp", test_30_four_processes_reproduce_torch_ddp, 1},
        {"test_31_32_faults", test_31_32_faults, 1},
        {"test_32_mesh_of_one_is_borrowed", test_32_mesh_of_one_is_borrowed, 0},
    };
    int status = run_tests(tests, sizeof tests / sizeof tests[0], !skip_processes, NULL);
    free_reference();
    return status;
}
