// Points of y^2 = x^3 + b (a = 0: BLS12-381's G1 over Fp and G2 over Fp2) in
// Jacobian coordinates (X, Y, Z) ~ (X/Z^2, Y/Z^3); Z = 0 is the point at
// infinity. Layouts match blst's blst_p1 / blst_p2 (X, Y, Z) and the affine
// blst_p1_affine / blst_p2_affine (x, y), affine infinity being all zeros.
//
// The formulas are the EFD's dbl-2009-l, add-2007-bl and madd-2007-bl, with
// the exceptional cases (infinity, P + P, P + (−P)) handled explicitly.
#pragma once

namespace c2p {

template <class F>
struct affine_t {
    F x, y;
    __device__ bool is_inf() const { return x.is_zero() && y.is_zero(); }
};

template <class F>
struct jacobian_t {
    F X, Y, Z;

    __device__ static jacobian_t inf() { return {F::zero(), F::one(), F::zero()}; }
    __device__ bool is_inf() const { return Z.is_zero(); }

    __device__ static jacobian_t from_affine(const affine_t<F>& p) {
        return p.is_inf() ? inf() : jacobian_t{p.x, p.y, F::one()};
    }

    __device__ jacobian_t dbl() const {
        F A = X.sqr(), B = Y.sqr();
        F C = B.sqr();
        F D = (X + B).sqr() - A - C;
        D = D + D;
        F E = A + A + A;
        F Fs = E.sqr();
        F X3 = Fs - (D + D);
        F C8 = C + C;
        C8 = C8 + C8;
        C8 = C8 + C8;
        F Y3 = E * (D - X3) - C8;
        F Z3 = Y * Z;
        return {X3, Y3, Z3 + Z3};  // Z = 0 stays 0: the double of infinity
    }

    __device__ friend jacobian_t operator+(const jacobian_t& p, const jacobian_t& q) {
        if (p.is_inf()) return q;
        if (q.is_inf()) return p;
        F Z1Z1 = p.Z.sqr(), Z2Z2 = q.Z.sqr();
        F U1 = p.X * Z2Z2, U2 = q.X * Z1Z1;
        F S1 = p.Y * q.Z * Z2Z2, S2 = q.Y * p.Z * Z1Z1;
        F H = U2 - U1, r = S2 - S1;
        if (H.is_zero()) return r.is_zero() ? p.dbl() : inf();
        F H2 = H + H;
        F I = H2.sqr();
        F J = H * I;
        r = r + r;
        F V = U1 * I;
        F X3 = r.sqr() - J - (V + V);
        F S1J = S1 * J;
        F Y3 = r * (V - X3) - (S1J + S1J);
        F Z3 = ((p.Z + q.Z).sqr() - Z1Z1 - Z2Z2) * H;
        return {X3, Y3, Z3};
    }

    // p + q with q affine (Z = 1): the addition MSM buckets use.
    __device__ jacobian_t add_affine(const affine_t<F>& q) const {
        if (q.is_inf()) return *this;
        if (is_inf()) return from_affine(q);
        F Z1Z1 = Z.sqr();
        F U2 = q.x * Z1Z1, S2 = q.y * Z * Z1Z1;
        F H = U2 - X, r = S2 - Y;
        if (H.is_zero()) return r.is_zero() ? dbl() : inf();
        F HH = H.sqr();
        F I = HH + HH;
        I = I + I;
        F J = H * I;
        r = r + r;
        F V = X * I;
        F X3 = r.sqr() - J - (V + V);
        F YJ = Y * J;
        F Y3 = r * (V - X3) - (YJ + YJ);
        F Z3 = (Z + H).sqr() - Z1Z1 - HH;
        return {X3, Y3, Z3};
    }

    __device__ jacobian_t operator-() const { return {X, -Y, Z}; }

    __device__ jacobian_t to_jacobian() const { return *this; }
};

}  // namespace c2p
