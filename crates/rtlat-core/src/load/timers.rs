//! `timers`: timer-interrupt and wake-up pressure. Each worker runs four
//! threads (itself and three helpers) that sleep 50 µs at a time.

use std::sync::atomic::Ordering;
use std::time::Duration;

use super::{WorkerCtx, WorkerResult};

pub(super) const OP: &str = "one 50 us sleep completed (4 sleeping threads per worker)";

const HELPERS: usize = 3;
const SLEEP: Duration = Duration::from_micros(50);

pub(super) fn run(ctx: &WorkerCtx) -> WorkerResult {
    std::thread::scope(|scope| {
        for h in 0..HELPERS {
            let stop = ctx.stop_flag();
            let counter = &ctx.counter;
            std::thread::Builder::new()
                .name(format!("load-timers-{}.{h}", ctx.index))
                .stack_size(64 * 1024)
                .spawn_scoped(scope, move || {
                    while !stop.load(Ordering::Relaxed) {
                        std::thread::sleep(SLEEP);
                        counter.add(1);
                    }
                })
                .map_err(|e| format!("cannot start a helper thread: {e}"))?;
        }
        while !ctx.stopping() {
            std::thread::sleep(SLEEP);
            ctx.counter.add(1);
        }
        Ok(())
    })
}
