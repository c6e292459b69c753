//! How rtlat writes a figure with a fixed number of decimals in its
//! documents: the number whose shortest text is printf's.

/// The number whose shortest decimal text is printf's `%.<decimals>f` of
/// `x` (Rust's fixed-precision formatting rounds the exact binary value the
/// same way glibc does).
pub fn round_decimals(x: f64, decimals: usize) -> f64 {
    format!("{x:.decimals$}").parse().unwrap_or(x)
}
