//! `cpu`: integer and floating-point arithmetic in registers and L1.
//!
//! Each operation runs 256 steps of a 64-bit xorshift-multiply integer mix
//! and 256 multiply-adds over a 16-wide `f64` vector the compiler turns
//! into SIMD instructions; `black_box` keeps the work from being folded.

use std::hint::black_box;

use super::{WorkerCtx, WorkerResult};

pub(super) const OP: &str = "256 integer mix steps plus 256 multiply-adds on a 16-wide f64 vector";

/// Operations between two looks at the stop flag.
const BATCH: u64 = 64;

pub(super) fn run(ctx: &WorkerCtx) -> WorkerResult {
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15 ^ ctx.index as u64;
    let mut v = [1.0f64; 16];
    let k = [1.000_000_1f64; 16];
    let c = [1e-9f64; 16];
    while !ctx.stopping() {
        for _ in 0..BATCH {
            for _ in 0..256 {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                x = x.wrapping_mul(0x2545_f491_4f6c_dd1d);
            }
            for _ in 0..256 {
                for i in 0..16 {
                    v[i] = v[i].mul_add(k[i], c[i]);
                }
            }
            // Keep the vector bounded and the work observable.
            if v[0] > 1e6 {
                v = [1.0; 16];
            }
            x = black_box(x);
            v = black_box(v);
        }
        ctx.counter.add(BATCH);
    }
    black_box((x, v));
    Ok(())
}
