/*
 * A C caller of c2prover's native API, built against the committed header
 * with -std=c11 -Wall -Wextra -Werror and run under AddressSanitizer,
 * UndefinedBehaviorSanitizer and valgrind by tests/c_program.rs.
 *
 * Usage: prove FIXTURE_DIR
 * The directory holds (written by the Rust test):
 *   fixture.params   parameters
 *   fixture.wit      witnesses (c2prover witness file format)
 *   rs.bin           n r values then n s values, 32 bytes each, Montgomery
 *   expected.bin     the Rust API's compressed proofs for those r and s
 *   truncated.params the parameters file cut short
 *
 * Exits 0 when every check holds; prints the failed check otherwise.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "c2prover.h"

static int failures = 0;

#define CHECK(cond)                                                        \
    do {                                                                   \
        if (!(cond)) {                                                     \
            char msg_[512];                                                \
            c2p_last_error(msg_, sizeof msg_);                             \
            fprintf(stderr, "%s:%d: check failed: %s (last error: %s)\n",  \
                    __FILE__, __LINE__, #cond, msg_);                      \
            failures++;                                                    \
        }                                                                  \
    } while (0)

/* Reads a whole file; NULL when it cannot. */
static unsigned char *read_file(const char *dir, const char *name, size_t *len) {
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *buf = malloc(size > 0 ? (size_t)size : 1);
    if (buf && size > 0 && fread(buf, 1, (size_t)size, f) != (size_t)size) {
        free(buf);
        buf = NULL;
    }
    fclose(f);
    *len = (size_t)size;
    return buf;
}

/* A cursor over the witness file. */
typedef struct {
    const unsigned char *p;
    size_t left;
} cursor;

static const unsigned char *take(cursor *c, size_t n) {
    if (n > c->left) return NULL;
    const unsigned char *out = c->p;
    c->p += n;
    c->left -= n;
    return out;
}

static uint64_t take_u64(cursor *c) {
    const unsigned char *b = take(c, 8);
    uint64_t v = 0;
    for (int i = 7; b && i >= 0; i--) v = (v << 8) | b[i];
    return v;
}

/* Copies n elements of `size` bytes into fresh heap memory (the caller
 * frees it), so each vector is its own buffer as in a real caller. */
static void *take_copy(cursor *c, size_t n, size_t size) {
    const unsigned char *src = take(c, n * size);
    void *dst = malloc(n * size > 0 ? n * size : 1);
    if (src && dst) memcpy(dst, src, n * size);
    return dst;
}

static size_t popcount(const uint64_t *words, size_t bits) {
    size_t n = 0;
    for (size_t i = 0; i < bits; i++) n += (words[i / 64] >> (i % 64)) & 1;
    return n;
}

/* Parses the witness file into freshly allocated assignments. */
static struct c2p_assignment *read_witnesses(const unsigned char *file, size_t len, size_t *n_out) {
    cursor c = {file, len};
    const unsigned char *magic = take(&c, 8);
    if (!magic || memcmp(magic, "C2PWIT01", 8) != 0) return NULL;
    size_t n = (size_t)take_u64(&c);
    struct c2p_assignment *out = calloc(n, sizeof *out);
    for (size_t i = 0; out && i < n; i++) {
        struct c2p_assignment *a = &out[i];
        size_t n_in = (size_t)take_u64(&c), n_aux = (size_t)take_u64(&c), abc = (size_t)take_u64(&c);
        a->a_aux_density = take_copy(&c, (n_aux + 63) / 64, 8);
        a->b_inp_density = take_copy(&c, (n_in + 63) / 64, 8);
        a->b_aux_density = take_copy(&c, (n_aux + 63) / 64, 8);
        a->a = take_copy(&c, abc, 32);
        a->b = take_copy(&c, abc, 32);
        a->c = take_copy(&c, abc, 32);
        a->inp_assignment_data = take_copy(&c, n_in, 32);
        a->aux_assignment_data = take_copy(&c, n_aux, 32);
        a->a_aux_bit_len = a->b_aux_bit_len = a->aux_assignment_size = n_aux;
        a->b_inp_bit_len = a->inp_assignment_size = n_in;
        a->abc_size = abc;
        a->a_aux_popcount = popcount(a->a_aux_density, n_aux);
        a->b_inp_popcount = popcount(a->b_inp_density, n_in);
        a->b_aux_popcount = popcount(a->b_aux_density, n_aux);
    }
    *n_out = n;
    return out;
}

static void free_witnesses(struct c2p_assignment *w, size_t n) {
    for (size_t i = 0; i < n; i++) {
        free((void *)w[i].a_aux_density);
        free((void *)w[i].b_inp_density);
        free((void *)w[i].b_aux_density);
        free((void *)w[i].a);
        free((void *)w[i].b);
        free((void *)w[i].c);
        free((void *)w[i].inp_assignment_data);
        free((void *)w[i].aux_assignment_data);
    }
    free(w);
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: %s FIXTURE_DIR\n", argv[0]);
        return 2;
    }
    const char *dir = argv[1];
    char path[4096];

    CHECK(strlen(c2p_version()) > 0);
    CHECK(strcmp(c2p_status_name(C2P_OK), "C2P_OK") == 0);
    CHECK(strcmp(c2p_status_name(C2P_ERR_PARAMS_FORMAT), "C2P_ERR_PARAMS_FORMAT") == 0);
    CHECK(strcmp(c2p_status_name(1234), "C2P_UNKNOWN_STATUS") == 0);

    /* Loading: good, truncated, missing, NULL. */
    struct c2p_params *params = NULL;
    snprintf(path, sizeof path, "%s/fixture.params", dir);
    CHECK(c2p_params_load(path, NULL, &params) == C2P_OK);
    if (!params) return 1;
    struct c2p_params_info info;
    CHECK(c2p_params_info(params, &info) == C2P_OK);
    CHECK(info.domain_size >= 2 && info.num_inputs >= 1);

    struct c2p_params *bad = NULL;
    snprintf(path, sizeof path, "%s/truncated.params", dir);
    CHECK(c2p_params_load(path, NULL, &bad) == C2P_ERR_PARAMS_FORMAT);
    char msg[256];
    size_t full = c2p_last_error(msg, sizeof msg);
    CHECK(full > 0 && strstr(msg, "truncated") != NULL);
    char tiny[4];
    CHECK(c2p_last_error(tiny, sizeof tiny) == full && tiny[3] == '\0');
    snprintf(path, sizeof path, "%s/does-not-exist.params", dir);
    CHECK(c2p_params_load(path, NULL, &bad) == C2P_ERR_IO);
    CHECK(c2p_params_load(NULL, NULL, &bad) == C2P_ERR_NULL_POINTER);
    CHECK(bad == NULL);

    /* The fixture's witnesses, r and s, and the expected proofs. */
    size_t wit_len = 0, rs_len = 0, exp_len = 0, n = 0;
    unsigned char *wit = read_file(dir, "fixture.wit", &wit_len);
    unsigned char *rs = read_file(dir, "rs.bin", &rs_len);
    unsigned char *expected = read_file(dir, "expected.bin", &exp_len);
    CHECK(wit && rs && expected);
    if (!wit || !rs || !expected) return 1;
    struct c2p_assignment *circuits = read_witnesses(wit, wit_len, &n);
    free(wit);
    CHECK(circuits != NULL && n > 0 && rs_len == n * 64 && exp_len == n * C2P_PROOF_BYTES);
    if (!circuits) return 1;

    /* Split API: start, free every input buffer, finish. */
    struct c2p_job *job = NULL;
    CHECK(c2p_prove_start(params, circuits, n, rs, rs + n * 32, NULL, &job) == C2P_OK);
    /* A second job, abandoned at once: cancelled, nothing leaks. */
    struct c2p_job *abandoned = NULL;
    CHECK(c2p_prove_start(params, circuits, n, NULL, NULL, NULL, &abandoned) == C2P_OK);
    c2p_job_free(abandoned);
    unsigned char *r_copy = malloc(n * 32);
    memcpy(r_copy, rs, n * 32);
    memset(rs, 0xAB, rs_len);
    free(rs);
    /* Keep the public inputs of circuit 0 for verification, then free all. */
    size_t n_pub = circuits[0].inp_assignment_size - 1;
    unsigned char *pub = malloc(n_pub * 32 + 1);
    memcpy(pub, (const unsigned char *)circuits[0].inp_assignment_data + 32, n_pub * 32);
    struct c2p_assignment first = circuits[0];
    free_witnesses(circuits, n);
    unsigned char *proofs = malloc(n * C2P_PROOF_BYTES);
    CHECK(c2p_prove_finish(job, proofs, n * C2P_PROOF_BYTES) == C2P_OK);
    CHECK(memcmp(proofs, expected, n * C2P_PROOF_BYTES) == 0);
    /* The job is consumed: a second finish is reported, not a crash. */
    CHECK(c2p_prove_finish(job, proofs, n * C2P_PROOF_BYTES) == C2P_ERR_BAD_STATE);
    c2p_job_free(job);

    bool valid = false;
    CHECK(c2p_verify(params, pub, n_pub, proofs, &valid) == C2P_OK && valid);
    pub[0] ^= 1;
    valid = true;
    int32_t st = c2p_verify(params, pub, n_pub, proofs, &valid);
    CHECK((st == C2P_OK && !valid) || st == C2P_ERR_INVALID_ARGUMENT);
    CHECK(c2p_verify(params, pub, n_pub, NULL, &valid) == C2P_ERR_NULL_POINTER);
    CHECK(c2p_verify(params, pub, n_pub - 1, proofs, &valid) == C2P_ERR_SIZE_MISMATCH);

    /* Error paths of proving. (The witness buffers are freed: these calls
     * must fail on the checks that come before reading them.) */
    (void)first;
    CHECK(c2p_prove_start(params, NULL, 1, NULL, NULL, NULL, &job) == C2P_ERR_NULL_POINTER);
    struct c2p_assignment empty;
    memset(&empty, 0, sizeof empty);
    CHECK(c2p_prove_start(params, &empty, 0, NULL, NULL, NULL, &job) == C2P_ERR_INVALID_ARGUMENT);
    CHECK(c2p_prove_start(params, &empty, 1, r_copy, NULL, NULL, &job) == C2P_ERR_INVALID_ARGUMENT);
    CHECK(c2p_prove_start(params, &empty, 1, NULL, NULL, NULL, &job) == C2P_ERR_SIZE_MISMATCH);
    CHECK(c2p_prove(params, &empty, 1, NULL, NULL, NULL, proofs, 5) == C2P_ERR_SIZE_MISMATCH);

    free(r_copy);
    free(pub);
    free(proofs);
    free(expected);
    c2p_params_free(params);
    CHECK(c2p_params_info(params, &info) == C2P_ERR_BAD_STATE);
    c2p_params_free(NULL);
    c2p_job_free(NULL);

    if (failures) {
        fprintf(stderr, "%d check(s) failed\n", failures);
        return 1;
    }
    printf("c api: all checks passed\n");
    return 0;
}
