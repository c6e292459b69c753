//! The free-running counter `rtlat oslat` reads in its busy loop, as C
//! oslat reads it: `lfence; rdtsc` on x86_64, `rdtsc` on i686,
//! `isb; mrs cntvct_el0; isb` on aarch64, and CLOCK_MONOTONIC (through the
//! vDSO, in nanoseconds) on every other architecture. No read is a system
//! call and none allocates.
#![allow(unsafe_code)]

/// What [`read`] reads on this architecture (for messages and the JSON).
pub const KIND: &str = if cfg!(any(target_arch = "x86_64", target_arch = "x86")) {
    "tsc"
} else if cfg!(target_arch = "aarch64") {
    "cntvct_el0"
} else {
    "clock_monotonic"
};

/// The counter's current value, in its own ticks.
#[inline(always)]
pub fn read() -> u64 {
    #[cfg(target_arch = "x86_64")]
    {
        // SAFETY: lfence and rdtsc exist on every x86_64 CPU, touch no
        // memory and only write EAX/EDX, which the intrinsic's result takes.
        unsafe {
            core::arch::x86_64::_mm_lfence();
            core::arch::x86_64::_rdtsc()
        }
    }
    #[cfg(target_arch = "x86")]
    {
        // SAFETY: rdtsc exists on every CPU i686 code runs on (Pentium and
        // later), touches no memory and only writes EAX/EDX.
        unsafe { core::arch::x86::_rdtsc() }
    }
    #[cfg(target_arch = "aarch64")]
    {
        let value: u64;
        // SAFETY: cntvct_el0 is readable from EL0 on Linux (the kernel
        // enables it for the vDSO); isb only orders the instruction stream.
        // The asm writes only `value`.
        unsafe {
            core::arch::asm!(
                "isb",
                "mrs {v}, cntvct_el0",
                "isb",
                v = out(reg) value,
                options(nostack, preserves_flags),
            );
        }
        value
    }
    #[cfg(not(any(target_arch = "x86_64", target_arch = "x86", target_arch = "aarch64")))]
    {
        let t = crate::clock::now(crate::clock::Clock::Monotonic);
        (t.tv_sec as u64)
            .wrapping_mul(1_000_000_000)
            .wrapping_add(t.tv_nsec as u64)
    }
}

/// The counter's frequency in Hz where the architecture states it
/// (`cntfrq_el0` on aarch64; 1 GHz for the nanosecond clock); `None`
/// where it must be measured (the TSC).
pub fn stated_hz() -> Option<u64> {
    #[cfg(target_arch = "aarch64")]
    {
        let hz: u64;
        // SAFETY: cntfrq_el0 is readable from EL0; the asm writes only `hz`.
        unsafe {
            core::arch::asm!(
                "mrs {v}, cntfrq_el0",
                v = out(reg) hz,
                options(nomem, nostack, preserves_flags),
            );
        }
        Some(hz)
    }
    #[cfg(any(target_arch = "x86_64", target_arch = "x86"))]
    {
        None
    }
    #[cfg(not(any(target_arch = "x86_64", target_arch = "x86", target_arch = "aarch64")))]
    {
        Some(1_000_000_000)
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_counter_moves_forward() {
        let a = super::read();
        std::thread::sleep(std::time::Duration::from_millis(2));
        assert!(super::read() > a);
    }
}
