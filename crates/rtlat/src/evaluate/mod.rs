//! `rtlat evaluate` (issue 29): a qualification in one command. Only its
//! phase plan exists yet ([`plan`]); the tool, the run and the report
//! follow (design/issue29-evaluate.md).
// Until the tool uses it (this branch only).
#![allow(dead_code)]

pub mod plan;
