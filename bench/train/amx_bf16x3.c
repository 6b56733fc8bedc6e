// A probe for the trainer's speed target (issue "A trainer that borrows the mesh", `ddp_ratio` >= 1.3): how fast, and
// how exact, one thread computes C = A·B (M×K times K×N, fp32 in and out) on Intel AMX with bf16 tiles, against the
// fp32 FMA peak (`target/release/train --peak`, UFORM_BENCH_THREADS=1) and torch's fp32 `mm` in the same run
// (bench/train/amx_peers.sh runs all three).
//
// - bf16x3: each fp32 value split into a bf16 `hi` and a bf16 `lo` (the rounded remainder), and
//   C = Ahi·Bhi + Alo·Bhi + Ahi·Blo, accumulated in fp32 by the tiles (the Alo·Blo term, about 2^-16 of a product,
//   is dropped). bf16x1 is Ahi·Bhi alone.
// - Error: the largest |C - C_fp64| / Σ|a·b| over a sample of rows, for bf16x3, bf16x1 and fp32 accumulation.
// - The kernel: A and B packed into 1 KB tiles (16 rows × 32 bf16; B in AMX's pair layout), C in blocks of 2×2 tiles
//   (32 × 32), per k-chunk of 32: 12 tile products for 8 + 2 tile loads. Not tuned further; packing is scalar and
//   timed apart from the product.
//
// It needs a CPU with AMX-BF16 (Sapphire Rapids or later) and Linux >= 5.16 (the process asks for the tile state with
// arch_prctl). Build and run:
//   gcc -O2 -march=sapphirerapids bench/train/amx_bf16x3.c -o target/amx_bf16x3 -lm && target/amx_bf16x3 4096 384 1536
#include <immintrin.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define ARCH_REQ_XCOMP_PERM 0x1023
#define XFEATURE_XTILEDATA 18

typedef struct {
    uint8_t palette;
    uint8_t start_row;
    uint8_t reserved[14];
    uint16_t colsb[16];
    uint8_t rows[16];
} __attribute__((packed)) tilecfg;

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

static uint16_t bf16_rne(float f) {
    uint32_t u;
    memcpy(&u, &f, 4);
    u += 0x7fff + ((u >> 16) & 1);
    return u >> 16;
}
static float from_bf16(uint16_t h) {
    uint32_t u = (uint32_t)h << 16;
    float f;
    memcpy(&f, &u, 4);
    return f;
}

// A (M×K row-major) → hi, lo bf16 row-major. B (K×N row-major) → VNNI: [K/2][N][2].
static void split(const float *x, size_t n, uint16_t *hi, uint16_t *lo) {
    for (size_t i = 0; i < n; i++) {
        hi[i] = bf16_rne(x[i]);
        lo[i] = bf16_rne(x[i] - from_bf16(hi[i]));
    }
}
static void vnni(const uint16_t *b, int K, int N, uint16_t *out) {
    for (int k = 0; k < K; k += 2)
        for (int j = 0; j < N; j++) {
            out[((size_t)(k / 2) * N + j) * 2] = b[(size_t)k * N + j];
            out[((size_t)(k / 2) * N + j) * 2 + 1] = b[(size_t)(k + 1) * N + j];
        }
}

// Packed: A as [M/16][K/32] tiles of 16 rows × 32 bf16 (1 KB each, contiguous); B as [N/16][K/32] tiles of
// 16 pair-rows × 16 columns × 2 (1 KB each). C blocked 2×2 tiles (32 rows × 32 columns): per k-chunk of 32,
// bf16x3 = Ahi·Bhi + Alo·Bhi + Ahi·Blo: 12 tdp for 8 + 2 loads.
static void packa(const uint16_t *a, int M, int K, uint16_t *out) {
    for (int i = 0; i < M; i += 16)
        for (int k = 0; k < K; k += 32)
            for (int r = 0; r < 16; r++)
                memcpy(out + (((size_t)(i / 16) * (K / 32) + k / 32) * 16 + r) * 32, a + (size_t)(i + r) * K + k, 64);
}
static void packb(const uint16_t *v, int K, int N, uint16_t *out) { // v: VNNI [K/2][N][2]
    for (int j = 0; j < N; j += 16)
        for (int k = 0; k < K; k += 32)
            for (int r = 0; r < 16; r++)
                memcpy(out + (((size_t)(j / 16) * (K / 32) + k / 32) * 16 + r) * 32, v + ((size_t)(k / 2 + r) * N + j) * 2, 64);
}
static void amxp(int M, int N, int K, const uint16_t *ahi, const uint16_t *alo, const uint16_t *bhi,
                 const uint16_t *blo, float *c, int passes) {
    int kc = K / 32;
    for (int j = 0; j < N; j += 32)
        for (int i = 0; i < M; i += 32) {
            _tile_zero(0); _tile_zero(1); _tile_zero(2); _tile_zero(3);
            const uint16_t *a0h = ahi + (size_t)(i / 16) * kc * 512, *a1h = a0h + (size_t)kc * 512;
            const uint16_t *a0l = alo + (size_t)(i / 16) * kc * 512, *a1l = a0l + (size_t)kc * 512;
            const uint16_t *b0h = bhi + (size_t)(j / 16) * kc * 512, *b1h = b0h + (size_t)kc * 512;
            const uint16_t *b0l = blo + (size_t)(j / 16) * kc * 512, *b1l = b0l + (size_t)kc * 512;
            for (int k = 0; k < kc; k++) {
                size_t o = (size_t)k * 512;
                _tile_loadd(4, a0h + o, 64); _tile_loadd(5, a1h + o, 64);
                _tile_loadd(6, b0h + o, 64); _tile_loadd(7, b1h + o, 64);
                _tile_dpbf16ps(0, 4, 6); _tile_dpbf16ps(1, 4, 7); _tile_dpbf16ps(2, 5, 6); _tile_dpbf16ps(3, 5, 7);
                if (passes == 3) {
                    _tile_loadd(4, a0l + o, 64); _tile_loadd(5, a1l + o, 64);
                    _tile_dpbf16ps(0, 4, 6); _tile_dpbf16ps(1, 4, 7); _tile_dpbf16ps(2, 5, 6); _tile_dpbf16ps(3, 5, 7);
                    _tile_loadd(4, a0h + o, 64); _tile_loadd(5, a1h + o, 64);
                    _tile_loadd(6, b0l + o, 64); _tile_loadd(7, b1l + o, 64);
                    _tile_dpbf16ps(0, 4, 6); _tile_dpbf16ps(1, 4, 7); _tile_dpbf16ps(2, 5, 6); _tile_dpbf16ps(3, 5, 7);
                }
            }
            _tile_stored(0, c + (size_t)i * N + j, N * 4);
            _tile_stored(1, c + (size_t)i * N + j + 16, N * 4);
            _tile_stored(2, c + (size_t)(i + 16) * N + j, N * 4);
            _tile_stored(3, c + (size_t)(i + 16) * N + j + 16, N * 4);
        }
}

// fp32 with fp32 accumulation, one 16-column vector per output: for fp32's rounding only (it is not a fast kernel,
// and its time is not reported).
static void fp32(int M, int N, int K, const float *a, const float *b, float *c) {
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j += 16) {
            __m512 acc = _mm512_setzero_ps();
            for (int k = 0; k < K; k++)
                acc = _mm512_fmadd_ps(_mm512_set1_ps(a[(size_t)i * K + k]), _mm512_loadu_ps(b + (size_t)k * N + j), acc);
            _mm512_storeu_ps(c + (size_t)i * N + j, acc);
        }
}

static double frand(void) { return (double)rand() / RAND_MAX * 2.0 - 1.0; }

int main(int argc, char **argv) {
    int M = argc > 1 ? atoi(argv[1]) : 4096, K = argc > 2 ? atoi(argv[2]) : 384, N = argc > 3 ? atoi(argv[3]) : 1536;
    if (M <= 0 || K <= 0 || N <= 0 || M % 32 || K % 32 || N % 32) {
        fprintf(stderr, "M, K and N must be positive multiples of 32 (the tiles' blocks), got %d %d %d\n", M, K, N);
        return 2;
    }
    if (syscall(SYS_arch_prctl, ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA)) {
        perror("arch_prctl");
        return 1;
    }
    tilecfg cfg = {0};
    cfg.palette = 1;
    for (int t = 0; t < 8; t++) {
        cfg.rows[t] = 16;
        cfg.colsb[t] = 64;
    }
    _tile_loadconfig(&cfg);

    float *a = malloc(sizeof(float) * M * K), *b = malloc(sizeof(float) * K * N);
    float *c3 = malloc(sizeof(float) * M * N), *c1 = malloc(sizeof(float) * M * N), *cf = malloc(sizeof(float) * M * N);
    for (size_t i = 0; i < (size_t)M * K; i++) a[i] = frand();
    for (size_t i = 0; i < (size_t)K * N; i++) b[i] = frand() * 0.05;
    uint16_t *ahi = malloc(2 * M * K), *alo = malloc(2 * M * K), *bh = malloc(2 * K * N), *bl = malloc(2 * K * N);
    uint16_t *bhi = malloc(2 * K * N), *blo = malloc(2 * K * N);
    double t0 = now();
    split(a, (size_t)M * K, ahi, alo);
    split(b, (size_t)K * N, bh, bl);
    vnni(bh, K, N, bhi);
    vnni(bl, K, N, blo);
    uint16_t *pah = malloc(2 * M * K), *pal = malloc(2 * M * K), *pbh = malloc(2 * K * N), *pbl = malloc(2 * K * N);
    packa(ahi, M, K, pah); packa(alo, M, K, pal); packb(bhi, K, N, pbh); packb(blo, K, N, pbl);
    double tsplit = now() - t0;
    double flop = 2.0 * M * N * K;
    double best3 = 1e9, best1 = 1e9;
    for (int r = 0; r < 5; r++) {
        t0 = now();
        amxp(M, N, K, pah, pal, pbh, pbl, c3, 3);
        double t = now() - t0;
        if (t < best3) best3 = t;
        t0 = now();
        amxp(M, N, K, pah, pal, pbh, pbl, c1, 1);
        t = now() - t0;
        if (t < best1) best1 = t;
    }
    // accuracy against fp64, on a sample of rows: error over Σ|a||b| (the scale a dot product's rounding has)
    double e3 = 0, e1 = 0, ef = 0, r3 = 0, rf = 0;
    fp32(M, N, K, a, b, cf);
    for (int i = 0; i < M; i += 97)
        for (int j = 0; j < N; j++) {
            double s = 0, sa = 0;
            for (int k = 0; k < K; k++) {
                s += (double)a[(size_t)i * K + k] * b[(size_t)k * N + j];
                sa += fabs((double)a[(size_t)i * K + k] * b[(size_t)k * N + j]);
            }
            size_t x = (size_t)i * N + j;
            double d3 = fabs(c3[x] - s) / sa, d1 = fabs(c1[x] - s) / sa, df = fabs(cf[x] - s) / sa;
            if (d3 > e3) e3 = d3;
            if (d1 > e1) e1 = d1;
            if (df > ef) ef = df;
            r3 += d3;
            rf += df;
        }
    printf("M=%d K=%d N=%d split+pack (scalar) %.1f ms\n", M, K, N, tsplit * 1e3);
    printf("amx bf16x3: %.1f ms %.1f GFLOP/s (fp32-equivalent)  max err %.2e\n", best3 * 1e3, flop / best3 * 1e-9, e3);
    printf("amx bf16x1: %.1f ms %.1f GFLOP/s                    max err %.2e\n", best1 * 1e3, flop / best1 * 1e-9, e1);
    printf("fp32 accumulation:                             max err %.2e\n", ef);
    printf("mean err ratio bf16x3/fp32 %.2f\n", r3 / rf);
    _tile_release();
    return 0;
}
