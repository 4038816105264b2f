// A C++ caller that dlopen()s libc2prover.so and proves through the
// supraseal-compatible symbols, declaring them itself as a supraseal user
// does, then compares the 384-byte raw proofs with the native API's result
// for the same r and s (the compressed proofs in expected.bin, and the raw
// ones in expected_raw.bin written by the Rust test).
//
// Usage: supraseal_dlopen LIBRARY FIXTURE_DIR
#include <dlfcn.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace {

// supraseal's types, declared here as its users do.
struct RustError {
    int code;
    char* message;
};
struct SRS {
    void* ptr;
};
struct Assignment {
    const uint64_t* a_aux_density;
    size_t a_aux_bit_len, a_aux_popcount;
    const uint64_t* b_inp_density;
    size_t b_inp_bit_len, b_inp_popcount;
    const uint64_t* b_aux_density;
    size_t b_aux_bit_len, b_aux_popcount;
    const void *a, *b, *c;
    size_t abc_size;
    const void* inp_assignment_data;
    size_t inp_assignment_size;
    const void* aux_assignment_data;
    size_t aux_assignment_size;
};
static_assert(sizeof(Assignment) == 17 * sizeof(void*), "supraseal's Assignment is 17 words");

using create_srs_fn = RustError (*)(SRS*, const char*, bool);
using drop_srs_fn = void (*)(SRS*);
using prove_fn = RustError (*)(const Assignment*, size_t, const void*, const void*, void*, SRS*);
using start_fn = RustError (*)(const Assignment*, size_t, const void*, const void*, SRS*, void*, int, void**);
using finalize_fn = RustError (*)(void*, void*);
using destroy_fn = void (*)(void*);
using native_prove_fn = int32_t (*)(const void*, const Assignment*, size_t, const uint8_t*, const uint8_t*,
                                    const void*, uint8_t*, size_t);
using native_load_fn = int32_t (*)(const char*, const void*, void**);
using native_free_fn = void (*)(void*);

std::vector<unsigned char> slurp(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return std::vector<unsigned char>(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

struct Reader {
    const std::vector<unsigned char>& bytes;
    size_t pos = 0;
    uint64_t u64() {
        uint64_t v = 0;
        for (int i = 7; i >= 0; i--) v = (v << 8) | bytes.at(pos + i);
        pos += 8;
        return v;
    }
    const void* take(size_t n) {
        const void* p = bytes.data() + pos;
        pos += n;
        if (pos > bytes.size()) throw std::out_of_range("witness file");
        return p;
    }
};

size_t popcount(const uint64_t* words, size_t bits) {
    size_t n = 0;
    for (size_t i = 0; i < bits; i++) n += (words[i / 64] >> (i % 64)) & 1;
    return n;
}

int failures = 0;
void check(bool ok, const char* what) {
    if (!ok) {
        std::fprintf(stderr, "check failed: %s\n", what);
        failures++;
    }
}

template <typename F>
F symbol(void* lib, const char* name) {
    void* p = dlsym(lib, name);
    if (!p) {
        std::fprintf(stderr, "missing symbol %s\n", name);
        std::exit(1);
    }
    return reinterpret_cast<F>(p);
}

}  // namespace

int main(int argc, char** argv) {
    if (argc != 3) {
        std::fprintf(stderr, "usage: %s LIBRARY FIXTURE_DIR\n", argv[0]);
        return 2;
    }
    void* lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        std::fprintf(stderr, "dlopen: %s\n", dlerror());
        return 1;
    }
    std::string dir = argv[2];
    auto create_srs = symbol<create_srs_fn>(lib, "create_SRS");
    auto drop_srs = symbol<drop_srs_fn>(lib, "drop_SRS");
    auto prove = symbol<prove_fn>(lib, "generate_groth16_proofs_c");
    auto start = symbol<start_fn>(lib, "generate_groth16_proofs_start_c");
    auto finalize = symbol<finalize_fn>(lib, "finalize_groth16_proof_c");
    auto destroy = symbol<destroy_fn>(lib, "destroy_pending_proof");
    auto native_load = symbol<native_load_fn>(lib, "c2p_params_load");
    auto native_prove = symbol<native_prove_fn>(lib, "c2p_prove");
    auto native_free = symbol<native_free_fn>(lib, "c2p_params_free");

    auto wit = slurp(dir + "/fixture.wit");
    auto rs = slurp(dir + "/rs.bin");
    auto expected = slurp(dir + "/expected.bin");
    auto expected_raw = slurp(dir + "/expected_raw.bin");
    Reader rd{wit};
    check(std::memcmp(rd.take(8), "C2PWIT01", 8) == 0, "witness magic");
    size_t n = rd.u64();
    std::vector<Assignment> provers(n);
    for (auto& a : provers) {
        size_t n_in = rd.u64(), n_aux = rd.u64(), abc = rd.u64();
        a.a_aux_density = static_cast<const uint64_t*>(rd.take((n_aux + 63) / 64 * 8));
        a.b_inp_density = static_cast<const uint64_t*>(rd.take((n_in + 63) / 64 * 8));
        a.b_aux_density = static_cast<const uint64_t*>(rd.take((n_aux + 63) / 64 * 8));
        a.a = rd.take(abc * 32);
        a.b = rd.take(abc * 32);
        a.c = rd.take(abc * 32);
        a.inp_assignment_data = rd.take(n_in * 32);
        a.aux_assignment_data = rd.take(n_aux * 32);
        a.a_aux_bit_len = a.b_aux_bit_len = a.aux_assignment_size = n_aux;
        a.b_inp_bit_len = a.inp_assignment_size = n_in;
        a.abc_size = abc;
        a.a_aux_popcount = popcount(a.a_aux_density, n_aux);
        a.b_inp_popcount = popcount(a.b_inp_density, n_in);
        a.b_aux_popcount = popcount(a.b_aux_density, n_aux);
    }
    check(rs.size() == n * 64 && expected_raw.size() == n * 384, "fixture sizes");
    const unsigned char* r = rs.data();
    const unsigned char* s = rs.data() + n * 32;

    SRS srs{nullptr};
    std::string params = dir + "/fixture.params";
    RustError err = create_srs(&srs, params.c_str(), true);
    check(err.code == 0 && srs.ptr != nullptr, "create_SRS");

    std::vector<unsigned char> raw(n * 384);
    err = prove(provers.data(), n, r, s, raw.data(), &srs);
    check(err.code == 0, "generate_groth16_proofs_c");
    check(raw == expected_raw, "supraseal raw proofs equal the native API's");

    void* pending = nullptr;
    err = start(provers.data(), n, r, s, &srs, nullptr, -1, &pending);
    check(err.code == 0 && pending != nullptr, "generate_groth16_proofs_start_c");
    std::vector<unsigned char> raw2(n * 384);
    err = finalize(pending, raw2.data());
    check(err.code == 0 && raw2 == raw, "finalize_groth16_proof_c");
    err = finalize(pending, raw2.data());
    check(err.code != 0 && err.message != nullptr, "finalize twice is an error with a message");
    std::free(err.message);
    destroy(nullptr);

    // Native API through the same library, same r and s: compressed bytes.
    void* native = nullptr;
    check(native_load(params.c_str(), nullptr, &native) == 0, "c2p_params_load");
    std::vector<uint8_t> compressed(n * 192);
    check(native_prove(native, provers.data(), n, r, s, nullptr, compressed.data(), compressed.size()) == 0,
          "c2p_prove");
    check(std::vector<unsigned char>(compressed.begin(), compressed.end()) == expected,
          "native compressed proofs equal the Rust API's");
    native_free(native);

    // A mismatched popcount is an error, not an abort.
    provers[0].b_aux_popcount += 1;
    err = prove(provers.data(), n, r, s, raw.data(), &srs);
    check(err.code != 0 && err.message && std::strstr(err.message, "popcount"), "size mismatch reported");
    std::free(err.message);

    drop_srs(&srs);
    dlclose(lib);
    if (failures) return 1;
    std::printf("supraseal symbols via dlopen: all checks passed\n");
    return 0;
}
