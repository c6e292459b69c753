//! `rtlat pi_stress`: priority-inheritance stress with inversion groups,
//! option- and output-compatible with rt-tests pi_stress 2.4. `settings`
//! is the validated configuration, `run` carries it out, `output` holds
//! pi_stress's own formats. The groups themselves are
//! `rtlat_core::inversion`.

pub mod output;
pub mod run;
pub mod settings;
