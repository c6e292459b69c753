//! Live outputs: read the shared per-thread slots from the main thread
//! (never real-time) while the measuring threads run.

pub mod fifo;
pub mod progress;
pub mod snapshot;
pub mod text;

use crate::output::Stdout;

/// After a live frame (or a batch of lines) has been written to `out`:
/// flushes it and says how the display loop ends, if it does. `Some(true)`:
/// the output was closed, the run must stop; `Some(false)`: the run had
/// `ended` by itself (looked at before the frame was drawn, so that the
/// last frame shows the final figures); `None`: the display goes on.
pub fn after_frame(out: &mut Stdout, ended: bool) -> Option<bool> {
    out.flush();
    if out.is_closed() {
        Some(true)
    } else if ended {
        Some(false)
    } else {
        None
    }
}
