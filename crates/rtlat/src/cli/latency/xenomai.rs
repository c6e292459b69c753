//! The options of Xenomai's `latency` that drive its in-kernel benchmark
//! or its mode switches (`-t 1`, `-t 2`, `-D`, `-b`): read to be refused
//! with a line saying why.

use rtlat_args::UsageError;
use rtlat_args::values::{OptionName, int, invalid};

use super::Raw;
use super::flags::short;
use rtlat_args::options::Name;

/// An error when the command line asks for something only Xenomai has.
pub(super) fn refuse_xenomai_only(raw: &Raw) -> Result<(), UsageError> {
    if let Some(mode) = &raw.test_mode {
        match int::<i64>(mode) {
            Some(0) => {}
            Some(1) => {
                return Err(needs_xenomai(
                    short('t'),
                    mode,
                    "the in-kernel periodic task runs in Xenomai's timerbench driver",
                ));
            }
            Some(2) => {
                return Err(needs_xenomai(
                    short('t'),
                    mode,
                    "the in-kernel timer handler runs in Xenomai's timerbench driver",
                ));
            }
            _ => {
                return Err(invalid(
                    short('t'),
                    mode,
                    "expected a test mode: 0 (periodic user-mode task); 1 and 2 need Xenomai",
                ));
            }
        }
    }
    if let Some(device) = &raw.device {
        return Err(needs_xenomai(
            short('D'),
            device,
            "it picks a Xenomai timerbench device",
        ));
    }
    if raw.break_on_switch {
        return Err(needs_xenomai(
            short('b'),
            "",
            "it stops at a switch to Linux (secondary) mode",
        ));
    }
    Ok(())
}

fn needs_xenomai(id: Name, value: &str, what: &str) -> UsageError {
    UsageError(format!(
        "{}{value}: {what}, which needs the Xenomai kernel; on Linux only the periodic \
         user-mode task (-t 0) exists",
        id.spelling(),
        value = if value.is_empty() {
            String::new()
        } else {
            format!(" {value}")
        },
    ))
}
