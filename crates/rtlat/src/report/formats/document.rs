//! The final outputs of a command whose result is one document rather
//! than a run (`rtlat compare`, `rtlat audit`, `rtlat load`'s rates): the
//! [`Document`] each command fills, and its text ([`Text`]). Its JSON is
//! the same [`super::json::Json`] format the measuring tools use; both are
//! in [`super::DOCUMENT_FORMATS`].

use std::io::{self, Write};

use super::Format;
use crate::output::{OutputTarget, Stdout};

/// A command's result, as the formats of [`super::DOCUMENT_FORMATS`] see
/// it.
pub trait Document {
    /// The text for a person (already wrapped or coloured as the command
    /// wants it).
    fn write_text(&self, w: &mut dyn Write) -> io::Result<()>;

    /// Where `--json` sends the JSON document, if the command has it and
    /// it was given.
    fn json_target(&self) -> Option<&OutputTarget> {
        None
    }

    /// The JSON document; written only when [`Document::json_target`]
    /// names a place.
    fn write_json(&self, w: &mut dyn Write) -> io::Result<()> {
        let _ = w;
        Ok(())
    }
}

/// The text, on stdout unless the JSON goes there instead.
pub struct Text;

impl Format<dyn Document + '_> for Text {
    fn write(&self, run: &(dyn Document + '_), out: &mut Stdout) -> anyhow::Result<()> {
        if run.json_target() != Some(&OutputTarget::Stdout) {
            out.emit(|w| run.write_text(w));
        }
        Ok(())
    }
}
