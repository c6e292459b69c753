//! What an ipc run writes and which clock it reads: the shared output
//! options and `--synthetic`, which needs a limit to end.

use rtlat_args::UsageError;
use rtlat_args::values::OptionName;
use rtlat_core::TimeSourceKind;

use super::flags::name;
use super::raw::Raw;
use super::stopping::Stopping;
use crate::cli::output_options::Outputs;

/// The outputs (their warnings go to `warnings`) and the clock.
pub(super) fn outputs_and_source(
    raw: &Raw,
    stopping: &Stopping,
    warnings: &mut Vec<String>,
) -> Result<(Outputs, TimeSourceKind), UsageError> {
    let mut outputs = raw.shared.outputs(name, &stopping.unit)?;
    warnings.append(&mut outputs.warnings);
    let source = raw.shared.source(name)?;
    if matches!(source, TimeSourceKind::Synthetic { .. })
        && stopping.loops.is_none()
        && stopping.duration.is_none()
    {
        return Err(UsageError(format!(
            "{} needs {} or {} to end",
            name("synthetic").spelling(),
            name("loops").spelling(),
            name("duration").spelling()
        )));
    }
    Ok((outputs, source))
}
