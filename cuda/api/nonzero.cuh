// Field-element vectors that go up packed: of each part of PACK_PART
// elements, the nonzero ones in order and then a bitmap of which elements
// are nonzero (bit i % 64 of word i / 64), unless that is not shorter than
// the part itself, which then goes up as it is. The constraint evaluations
// a, b, c of a PoRep partition are 49 %, 49 % and 80 % zeros (anchors.md),
// so their uploads move about 40 % of their bytes over PCIe, and the host
// writes no more than that into the staging buffers.
//
// The packed part lands at the start of its own place in the destination,
// and unpack_nonzero spreads it out in place: each element moves up (its
// rank among the nonzero ones is at most its index), so a block that
// writes the part's elements from the last group down to the first never
// overwrites what an earlier group still has to read.
#pragma once

#include <stdint.h>

#include "../common.cuh"

namespace c2p {
namespace host {

// Elements per packed part: 2 MiB of field elements, a bitmap word per
// thread of an unpacking block.
constexpr uint32_t PACK_PART = 1u << 16;
constexpr uint32_t PACK_WORDS = PACK_PART / 64;
constexpr uint32_t UNPACK_THREADS = 1024;
static_assert(PACK_WORDS == UNPACK_THREADS, "one bitmap word per unpacking thread");
// A part's count of nonzero elements when it went up as it is.
constexpr uint32_t NOT_PACKED = ~0u;
// The most parts of one launch (a staging piece's): their counts ride in
// the kernel's arguments.
constexpr uint32_t MAX_PACKED_PARTS = 32;
struct packed_parts {
    uint32_t kept[MAX_PACKED_PARTS];  // nonzero elements of each part, or NOT_PACKED
};

// A field element as the copy moves it: 32 bytes in two 16-byte halves.
struct packed_element {
    uint4 lo, hi;
};

// Spreads out the packed parts of `n` elements at `v` (part p at element
// p·PACK_PART, as `parts` says), one block of UNPACK_THREADS per part.
static __global__ void __launch_bounds__(UNPACK_THREADS) unpack_nonzero(packed_element* v, size_t n,
                                                                         packed_parts parts) {
    const uint32_t kept = parts.kept[blockIdx.x];
    if (kept == NOT_PACKED) return;
    packed_element* part = v + (size_t)blockIdx.x * PACK_PART;
    const size_t from_base = n - (size_t)blockIdx.x * PACK_PART;
    const uint32_t len = from_base < PACK_PART ? (uint32_t)from_base : PACK_PART;
    const uint32_t words = (len + 63) / 64, t = threadIdx.x, lane = t % 32, warp = t / 32;
    __shared__ uint64_t bits[PACK_WORDS];
    __shared__ uint32_t before[PACK_WORDS];  // nonzero elements in the words before
    __shared__ uint32_t warp_total[UNPACK_THREADS / 32];
    // The bitmap follows the kept elements: read it all before any write.
    const uint64_t word = t < words ? reinterpret_cast<const uint64_t*>(part + kept)[t] : 0;
    bits[t] = word;
    // An exclusive prefix sum of the words' counts: within each warp, then
    // over the warps' totals.
    const uint32_t count = __popcll(word);
    uint32_t upto = count;
    for (int d = 1; d < 32; d *= 2) {
        const uint32_t below = __shfl_up_sync(~0u, upto, d);
        if (lane >= (uint32_t)d) upto += below;
    }
    if (lane == 31) warp_total[warp] = upto;
    __syncthreads();
    if (warp == 0) {
        uint32_t total = warp_total[lane];
        for (int d = 1; d < 32; d *= 2) {
            const uint32_t below = __shfl_up_sync(~0u, total, d);
            if (lane >= (uint32_t)d) total += below;
        }
        warp_total[lane] = total;
    }
    __syncthreads();
    before[t] = upto - count + (warp ? warp_total[warp - 1] : 0);
    __syncthreads();
    // Group g writes elements [g·T, (g+1)·T); the groups below read only
    // below element before[first word of g] <= g·T.
    for (int g = (int)((len - 1) / UNPACK_THREADS); g >= 0; g--) {
        const uint32_t i = (uint32_t)g * UNPACK_THREADS + t;
        packed_element e{};
        if (i < len) {
            const uint64_t w = bits[i / 64];
            const uint32_t b = i % 64;
            if (w >> b & 1) e = part[before[i / 64] + __popcll(w & ((1ull << b) - 1))];
        }
        __syncthreads();
        if (i < len) part[i] = e;
        __syncthreads();
    }
}

}  // namespace host
}  // namespace c2p
