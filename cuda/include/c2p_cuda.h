// The CUDA backend's C interface: every entry point, structure and enum that
// Rust calls (src/gpu/cuda/sys.rs mirrors this file; tests/cuda_header.rs checks
// that the two name the same functions). Each .cu file under api/ includes it,
// so a definition that drifts from its declaration does not compile.
//
// Every function returns a cudaError_t as int (0 = success); the message of a
// failure is c2p_cuda_last_error()'s, per host thread. Device memory handed out
// (c2p_cuda_upload, h_device) is freed with c2p_cuda_free; a carried MSM sum
// with c2p_cuda_msm_sum_free.
#pragma once

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

// ---- Enumerations (int on both sides) ----

// The group of a point vector or an MSM.
enum c2p_curve { C2P_CURVE_G1 = 1, C2P_CURVE_G2 = 2 };

// Where an MSM's scalars are: host memory; device memory the MSM may
// overwrite (the H step's h); device memory shared with other MSMs (the
// witness).
enum c2p_scalars_at { C2P_SCALARS_ON_HOST = 0, C2P_SCALARS_ON_DEVICE_CONSUMED = 1, C2P_SCALARS_ON_DEVICE_SHARED = 2 };

// Test-only element-wise operations.
enum c2p_field { C2P_FIELD_FR = 0, C2P_FIELD_FP = 1 };
enum c2p_field_op {
    C2P_FIELD_MUL = 0,
    C2P_FIELD_ADD = 1,
    C2P_FIELD_SUB = 2,
    C2P_FIELD_SQR = 3,
    C2P_FIELD_TO_MONT = 4,
    C2P_FIELD_FROM_MONT = 5,
    C2P_FIELD_NEG = 6,
    C2P_FIELD_INV = 7,
};
enum c2p_curve_op { C2P_CURVE_DBL = 0, C2P_CURVE_ADD = 1, C2P_CURVE_ADD_AFFINE = 2, C2P_CURVE_NEG = 3 };

// ---- Structures ----

// A field element of Fr, Montgomery form (blst_fr's four 64-bit limbs).
typedef struct c2p_fr {
    uint64_t l[4];
} c2p_fr;

// The H step's per-domain constants, computed on the host (Montgomery form).
typedef struct c2p_h_consts {
    c2p_fr omega;        // primitive m-th root of unity
    c2p_fr m_inv;        // 1/m
    c2p_fr g, g_2_14;    // coset generator 7 and 7^(2^14)
    c2p_fr g_inv, g_inv_2_14;
    c2p_fr m_inv_z_inv;  // 1/(m·(g^m − 1)): both scalings of the way back
} c2p_h_consts;

// One H step's times (CUDA events, ms): the upload of a, b, c; the compute
// after the last upload; the download of h; upload plus compute.
typedef struct c2p_h_timing {
    float upload_ms, compute_ms, download_ms, total_ms;
} c2p_h_timing;

// One MSM's times (CUDA events, ms): scalar upload; the 0/1 split; digits
// and sort; bucket sums; bucket reduction and window combination.
typedef struct c2p_msm_timing {
    float upload_ms, split_ms, sort_ms, buckets_ms, reduce_ms;
} c2p_msm_timing;

// A circuit of a common part and `units` units of one shape
// (src/groth16/constraints.rs): its sizes. `inputs` counts the whole
// circuit's (common_inputs + units · unit_inputs).
typedef struct c2p_unit_shape {
    uint64_t common_aux, common_inputs, common_constraints;
    uint64_t unit_aux, unit_inputs, unit_constraints;
    uint64_t units, inputs;
} c2p_unit_shape;

// One term of a row: a variable of the one-unit circuit (an input when bit
// 31 is set, else aux) and its coefficient's index (0: 1, 1: −1).
typedef struct c2p_term {
    uint32_t variable, coefficient;
} c2p_term;

// The rows of A, B and C (index 0, 1, 2) of the one-unit circuit on a
// device: row starts (u32, one more than rows), terms (c2p_term) and the
// coefficients (Fr, Montgomery form).
typedef struct c2p_unit_rows {
    const void* starts[3];
    const void* terms[3];
    const void* coefficients;
    c2p_unit_shape shape;
} c2p_unit_rows;

// Tuning from the library's configuration (src/config.rs validates it);
// 0 in a field means the built-in choice.
typedef struct c2p_tuning {
    uint32_t pool_keep_mib;      // device memory the pool keeps after frees
    uint32_t stage_threads;      // host threads per staging copy
    uint32_t msm_group_mib;      // one MSM window group's sort buffers
    uint32_t msm_g1_max_window;  // the widest G1 window, bits
    uint32_t msm_min_chunk;      // the shortest bucket-sum chunk, points
    uint32_t ntt_tile_log;       // log2 of the NTT's shared-memory tile
} c2p_tuning;

// ---- Configuration, errors, devices ----

// Sets the tuning (copied); call before any other entry point. Later calls
// replace it for work that starts after them.
int c2p_cuda_configure(const c2p_tuning* tuning);
const char* c2p_cuda_last_error(void);
int c2p_cuda_device_count(int* count);
// free_bytes: the driver's free memory and the pool's idle memory (what an
// allocation can get, budget aside).
int c2p_cuda_device_info(int device, char* name, size_t name_len, size_t* free_bytes, size_t* total_bytes,
                         int* major, int* minor);

// ---- The device budget (every device allocation is charged to it) ----

int c2p_cuda_device_memory(int device, size_t* budget, size_t* in_use, size_t* peak);
// 0 restores the default: the device's memory less max(1 GiB, 1/32 of it).
int c2p_cuda_set_device_budget(int device, size_t bytes);
int c2p_cuda_reset_peak(int device);
int c2p_cuda_pool_idle(int device, size_t* idle_bytes);
int c2p_cuda_trim_pool(int device);
// Tests: take `bytes` of device memory until c2p_cuda_release.
int c2p_cuda_reserve(int device, size_t bytes, void** out);
int c2p_cuda_release(int device, void* ptr);
// Tests: `bytes` of device memory outside the pool and budget, taken after
// the pool's idle memory goes back to the driver, each word pattern ^ index
// (free with c2p_cuda_release); and how many words have changed since.
int c2p_cuda_canary(int device, size_t bytes, uint32_t pattern, void** out);
int c2p_cuda_canary_changed(int device, const void* ptr, size_t bytes, uint32_t pattern, unsigned long long* changed);
// Tests: record the library's allocation sites ("file:line", one per line
// into `out`, *needed the bytes with the NUL), and after `skip` allocations
// at one, make the next `count` fail as out of memory (*left: the previous
// arming's failures not yet injected).
int c2p_cuda_record_allocation_sites(int on);
int c2p_cuda_allocation_sites(char* out, size_t len, size_t* needed);
int c2p_cuda_fail_allocation(const char* site, int skip, int count, int* left);

// ---- Memory ----

int c2p_cuda_upload(int device, const void* host, size_t bytes, size_t capacity, size_t* unreduced, void** out);
int c2p_cuda_download(int device, const void* ptr, size_t bytes, void* host);
int c2p_cuda_free(int device, void* ptr);
// Page-locks host memory (the parameters' points while they stream) so that
// uploads from it skip the staging copy; unregistered before it is freed.
int c2p_cuda_host_register(int device, const void* host, size_t bytes);
int c2p_cuda_host_unregister(const void* host);
// The staging copy's check below r, on the host alone (tests without a GPU).
int c2p_cuda_checked_copy(void* dst, const void* src, size_t bytes, size_t* unreduced);

// ---- MSM ----

int c2p_cuda_msm(int device, enum c2p_curve curve, const void* points, size_t offset, const void* scalars,
                 enum c2p_scalars_at scalars_at, const uint64_t* density, size_t n, void* out,
                 c2p_msm_timing* timing);
// Device bytes an MSM of n scalars allocates at most (as if none were 0 or 1).
int c2p_cuda_msm_bytes(int device, enum c2p_curve curve, size_t n, enum c2p_scalars_at scalars_at, int density,
                       size_t* bytes);
// One MSM's sum over chunks of its scalars: buckets kept from chunk to
// chunk and reduced once (msm.cu). A sum is used by one host thread at a
// time (any thread; each call selects its device); after a failed add or
// total it only takes c2p_cuda_msm_sum_free.
typedef struct c2p_msm_sum c2p_msm_sum;
int c2p_cuda_msm_sum_new(int device, enum c2p_curve curve, size_t n, c2p_msm_sum** out);
int c2p_cuda_msm_sum_add(c2p_msm_sum* sum, const void* points, size_t offset, const void* scalars,
                         enum c2p_scalars_at scalars_at, const uint64_t* density, size_t n, c2p_msm_timing* timing);
int c2p_cuda_msm_sum_total(c2p_msm_sum* sum, void* out);
int c2p_cuda_msm_sum_free(c2p_msm_sum* sum);
// Device bytes of a sum for n scalars in all with one chunk of `chunk` going in.
int c2p_cuda_msm_sum_bytes(int device, enum c2p_curve curve, size_t n, size_t chunk, enum c2p_scalars_at scalars_at,
                           int density, size_t* bytes);

// ---- H step and NTT ----

// overlap: 0 uploads a, b, c before the transforms (to time them alone), 1
// overlaps them (three vectors), 2 overlaps them in two vectors (c into a's).
// in_pieces: a, b, c from the host take the staging buffers piece by piece,
// in turn with other uploads (a step beside an MSM over streamed points),
// instead of ahead of them for the whole upload.
int c2p_cuda_quotient(int device, int log_m, const void* a, const void* b, const void* c, size_t abc_size,
                      void* const* abc_device, const c2p_h_consts* consts, int overlap, int in_pieces, void* h_out,
                      void** h_device, size_t* unreduced, c2p_h_timing* timing);
// a, b, c = A·w, B·w, C·w over the rows on the device, from device arrays
// of the inputs and aux values, into three new device arrays of 2^log_m
// elements (zero past the rows) for c2p_cuda_quotient.
int c2p_cuda_unit_products(int device, int log_m, const c2p_unit_rows* rows, const void* inputs, const void* aux,
                           void** abc_out);
// Device bytes an H step allocates: `host_vectors` (0, 2 or 3) vectors for
// a, b, c from the host, the tables (the twiddle table only if not yet made).
int c2p_cuda_h_bytes(int device, int log_m, int host_vectors, size_t* bytes);
int c2p_cuda_ntt(int device, int log_m, const void* omega, const void* m_inv, void* values, void* forward,
                 int iterations, float* median_ms);

// ---- Tests and diagnostics ----

int c2p_cuda_field_op(int device, enum c2p_field field, enum c2p_field_op op, const void* a, const void* b, void* out,
                      size_t n);
int c2p_cuda_curve_op(int device, enum c2p_curve curve, enum c2p_curve_op op, const void* p, const void* q, void* out,
                      size_t n);
int c2p_cuda_microbench(int device, int log_m, float* results);
int c2p_cuda_instruction_rates(int device, float* rates, int count);

#ifdef __cplusplus
}
#endif
