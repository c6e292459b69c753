//! The ring's relay loop makes no heap allocation.
//!
//! `allocation-counter` counts per thread, so the count is taken inside
//! each member's own thread: a real two-member signal ring where member 0
//! is the test thread itself (the loop runs inline) and member 1 a spawned
//! thread that measures its own loop and reports its count. Every optional
//! buffer is on (histogram with overflows, sample ring) and the pacing
//! pause runs often. A synthetic ring is checked the same way.

use std::sync::mpsc;
use std::sync::{Arc, Barrier};

use rtlat_core::Resolution;
use rtlat_core::SAMPLE_RING_LEN;
use rtlat_core::hot_loops::port::{Baton, SignalPort, SyntheticPort};
use rtlat_core::hot_loops::relay::{Pacing, RelayParams, RingState, relay};
use rtlat_core::time::Period;
use rtlat_core::{Histogram, LoopEnd, SampleRing, ThreadChannel};
use rtlat_sys::signals::{self, ThreadAddress};

const LOOPS: u64 = 3_000;

fn channel() -> ThreadChannel {
    ThreadChannel {
        slot: Default::default(),
        // One bucket (0 us): every lap of 1 us or more overflows (a signal
        // from one thread to another takes longer), so the overflow log
        // and its count of the others run too. With 20, a quiet machine
        // ran all 3000 laps under 20 us now and then, and no overflow.
        histogram: Histogram::new(1),
        samples: SampleRing::new(SAMPLE_RING_LEN),
        ..ThreadChannel::default()
    }
}

fn params(leader: bool) -> RelayParams {
    RelayParams {
        resolution: Resolution::Micros,
        leader,
        loops: leader.then_some(LOOPS),
        duration: None,
        break_threshold: None,
        pacing: leader.then_some(Pacing {
            every: 16,
            pause: Period::from_nanos(20_000),
        }),
    }
}

#[test]
fn a_real_signal_ring_allocates_nothing_in_either_member() {
    // SIGRTMIN + 2: no other test of this binary uses it; blocked in both
    // members (block_all_except keeps only the wake signal open).
    let signal = signals::wake_signal() + 1;
    signals::install_wake_handler().unwrap();
    signals::block_all_except(signals::wake_signal()).unwrap();
    let me = ThreadAddress::current();
    let ring = Arc::new(RingState::new());
    let ready = Arc::new(Barrier::new(2));
    let (handle_tx, handle_rx) = mpsc::channel();
    let (count_tx, count_rx) = mpsc::channel();

    let member1 = {
        let (ring, ready) = (Arc::clone(&ring), Arc::clone(&ready));
        std::thread::spawn(move || {
            signals::block_all_except(signals::wake_signal()).unwrap();
            handle_tx.send(ThreadAddress::current()).unwrap();
            let channel = channel();
            let mut port = SignalPort::new(signal, me);
            let p = params(false);
            ready.wait();
            let mut end = LoopEnd::Stopped;
            let info = allocation_counter::measure(|| {
                end = relay(&mut port, &p, &channel, &ring);
            });
            count_tx
                .send((info.count_total, end, channel.slot.cycles()))
                .unwrap();
        })
    };

    let next = handle_rx.recv().unwrap();
    let channel = channel();
    let mut port = SignalPort::new(signal, next);
    let p = params(true);
    ready.wait();
    // The kick: pending on this thread until its first wait.
    me.signal(signal).unwrap();
    let mut end = LoopEnd::Stopped;
    let info = allocation_counter::measure(|| {
        end = relay(&mut port, &p, &channel, &ring);
    });
    let (their_count, their_end, their_cycles) = count_rx.recv().unwrap();
    member1.join().unwrap();

    assert_eq!(end, LoopEnd::Loops);
    assert_eq!(channel.slot.cycles(), LOOPS);
    assert_eq!(their_end, LoopEnd::Stopped);
    assert_eq!(their_cycles, LOOPS, "member 1 takes the last lap too");
    assert!(ring.paused_ns() > 0, "the pacing pause ran");
    assert!(channel.histogram.as_ref().unwrap().snapshot().overflows > 0);
    assert_eq!(info.count_total, 0, "member 0 allocated: {info:?}");
    assert_eq!(their_count, 0, "member 1 allocated {their_count} times");
}

#[test]
fn a_synthetic_ring_allocates_nothing() {
    let baton = Arc::new(Baton::new(4));
    let ring = Arc::new(RingState::new());
    let (count_tx, count_rx) = mpsc::channel();
    let member1 = {
        let (baton, ring) = (Arc::clone(&baton), Arc::clone(&ring));
        std::thread::spawn(move || {
            let channel = channel();
            let mut port = SyntheticPort::new(baton, 1, 0);
            let p = params(false);
            let info = allocation_counter::measure(|| {
                relay(&mut port, &p, &channel, &ring);
            });
            count_tx.send(info.count_total).unwrap();
        })
    };
    let channel = channel();
    let mut port = SyntheticPort::new(Arc::clone(&baton), 0, 1);
    let p = params(true);
    baton.kick(0);
    let mut end = LoopEnd::Stopped;
    let info = allocation_counter::measure(|| {
        end = relay(&mut port, &p, &channel, &ring);
    });
    let theirs = count_rx.recv().unwrap();
    member1.join().unwrap();
    assert_eq!(end, LoopEnd::Loops);
    assert_eq!(info.count_total, 0, "member 0 allocated: {info:?}");
    assert_eq!(theirs, 0, "member 1 allocated {theirs} times");
}

#[test]
fn a_counting_allocator_does_see_allocations() {
    let info = allocation_counter::measure(|| {
        std::hint::black_box(vec![1u8; 64]);
    });
    assert!(info.count_total >= 1);
}
