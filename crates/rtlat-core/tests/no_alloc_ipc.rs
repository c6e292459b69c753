//! The hand-off loops make no heap allocation per hand-off.
//!
//! `allocation-counter` counts per thread, so each side runs its loop inside
//! its own `measure` on its own thread, over the real mechanism (a private
//! SysV semaphore set, two POSIX message queues, two futex semaphores,
//! SIGUSR2/SIGUSR1 with sigwaitinfo), a few thousand hand-offs each,
//! SCHED_OTHER, no privilege needed. Results go through the same sinks as
//! in a run: the receiver's `ThreadSlot` and histogram, the sender's count.

use std::sync::atomic::AtomicU64;
use std::sync::{Arc, Barrier};

use allocation_counter::AllocationInfo;
use rtlat_core::hot_loops::handoff::{
    self, ReceiverLink, ReceiverParams, SenderLink, SenderParams,
};
use rtlat_core::hot_loops::links::{
    FutexLink, MqReceiver, MqSender, SemReceiver, SemSender, SignalReceiver, SignalSender,
    SignalTarget,
};
use rtlat_core::hot_loops::{CountSink, SlotSink};
use rtlat_core::{DistributionPlan, LatencyHistogram};
use rtlat_core::{Histogram, LoopEnd, ThreadChannel, ThreadSlot};
use rtlat_core::{Nanos, Resolution};
use rtlat_sys::clock::Timespec;
use rtlat_sys::ipc::futex::BinarySemaphore;
use rtlat_sys::ipc::mqueue::MessageQueue;
use rtlat_sys::ipc::sysv::SemSet;
use rtlat_sys::signals;

const HAND_OFFS: u64 = 3_000;

/// What both sides share in one test.
struct Pair {
    receiver: ThreadChannel,
    sender: ThreadSlot,
    sent: AtomicU64,
    stop: AtomicU64,
    timeouts: AtomicU64,
    receiver_thread: AtomicU64,
    sender_thread: AtomicU64,
    ready: Barrier,
}

impl Pair {
    fn new() -> Arc<Pair> {
        Arc::new(Pair {
            receiver: ThreadChannel {
                slot: ThreadSlot::default(),
                histogram: Histogram::new(100),
                distribution: LatencyHistogram::new(
                    DistributionPlan::new(1000, Nanos::ZERO).expect("the default plan"),
                )
                .map(Arc::new),
                ..ThreadChannel::default()
            },
            sender: ThreadSlot::default(),
            sent: AtomicU64::new(0),
            stop: AtomicU64::new(0),
            timeouts: AtomicU64::new(0),
            receiver_thread: AtomicU64::new(0),
            sender_thread: AtomicU64::new(0),
            ready: Barrier::new(2),
        })
    }
}

fn receiver_params() -> ReceiverParams {
    ReceiverParams {
        // A 1 us pause: the sleep path runs too.
        interval: Some(Timespec {
            tv_sec: 0,
            tv_nsec: 1_000,
        }),
        resolution: Resolution::Micros,
        loops: Some(HAND_OFFS),
        break_threshold: None,
        count_timeouts: false,
    }
}

fn sender_params() -> SenderParams {
    SenderParams {
        loops: Some(HAND_OFFS),
        delay: None,
    }
}

/// Runs both sides, each on its own thread inside its own `measure`;
/// `make_receiver`/`make_sender` build the ends on the side's thread
/// (outside the measurement: set-up may allocate).
fn run_pair<R, S>(
    pair: &Arc<Pair>,
    make_receiver: impl FnOnce(&Pair) -> R + Send + 'static,
    make_sender: impl FnOnce(&Pair) -> S + Send + 'static,
) -> [(LoopEnd, AllocationInfo); 2]
where
    R: ReceiverLink,
    S: SenderLink,
{
    let p = Arc::clone(pair);
    let receiver = std::thread::spawn(move || {
        let _ = signals::block_all_except(signals::wake_signal());
        p.receiver_thread.store(
            signals::ThreadAddress::current().to_bits(),
            std::sync::atomic::Ordering::SeqCst,
        );
        p.ready.wait();
        let mut link = make_receiver(&p);
        let mut sink = SlotSink::new(&p.receiver, &p.timeouts);
        let params = receiver_params();
        let mut end = LoopEnd::Stopped;
        let info = allocation_counter::measure(|| {
            end = handoff::receive(&mut link, &mut sink, &p.sent, &p.stop, &params);
        });
        (end, info)
    });
    let p = Arc::clone(pair);
    let sender = std::thread::spawn(move || {
        let _ = signals::block_all_except(signals::wake_signal());
        p.sender_thread.store(
            signals::ThreadAddress::current().to_bits(),
            std::sync::atomic::Ordering::SeqCst,
        );
        p.ready.wait();
        let mut link = make_sender(&p);
        let mut sink = CountSink::new(&p.sender);
        let params = sender_params();
        let mut end = LoopEnd::Stopped;
        let info = allocation_counter::measure(|| {
            end = handoff::send(&mut link, &mut sink, &p.sent, &p.stop, &params);
        });
        (end, info)
    });
    [receiver.join().unwrap(), sender.join().unwrap()]
}

fn check(name: &str, pair: &Pair, results: [(LoopEnd, AllocationInfo); 2]) {
    for ((end, info), side) in results.iter().zip(["receiver", "sender"]) {
        assert_eq!(*end, LoopEnd::Loops, "{name} {side}");
        assert_eq!(info.count_total, 0, "{name} {side}: allocations: {info:?}");
    }
    assert_eq!(pair.receiver.slot.cycles(), HAND_OFFS, "{name}");
    assert_eq!(pair.sender.cycles(), HAND_OFFS, "{name}");
    let c = pair.receiver.slot.compat();
    assert!(c.min >= 0 && c.min <= c.max, "{name}: {c:?}");
    let h = pair.receiver.histogram.as_ref().unwrap().snapshot();
    assert_eq!(h.total() + h.overflows, HAND_OFFS, "{name}");
}

#[test]
fn sysv_semaphore_hand_offs_allocate_nothing() {
    let pair = Pair::new();
    let set = Arc::new(SemSet::create_private(2).unwrap());
    let (r, s) = (Arc::clone(&set), Arc::clone(&set));
    let results = run_pair(
        &pair,
        move |_| SemReceiverOwned(r),
        move |_| SemSenderOwned(s),
    );
    check("svsem", &pair, results);
}

#[test]
fn message_queue_hand_offs_allocate_nothing() {
    let pair = Pair::new();
    let queues = Arc::new((
        MessageQueue::create_private(1, 8).unwrap(),
        MessageQueue::create_private(1, 8).unwrap(),
    ));
    let (r, s) = (Arc::clone(&queues), Arc::clone(&queues));
    let results = run_pair(
        &pair,
        move |_| MqReceiverOwned(r, Some(Nanos::from_secs(5))),
        move |_| MqSenderOwned(s),
    );
    check("pmq", &pair, results);
}

#[test]
fn futex_hand_offs_allocate_nothing() {
    let pair = Pair::new();
    let sems = Arc::new((BinarySemaphore::new(), BinarySemaphore::new()));
    let (r, s) = (Arc::clone(&sems), Arc::clone(&sems));
    let results = run_pair(&pair, move |_| FutexOwned(r), move |_| FutexOwned(s));
    check("futex", &pair, results);
}

#[test]
fn signal_hand_offs_allocate_nothing() {
    let pair = Pair::new();
    let results = run_pair(
        &pair,
        |p| {
            let sender = p.sender_thread.load(std::sync::atomic::Ordering::SeqCst);
            SignalReceiver::new(SignalTarget::Thread(signals::ThreadAddress::from_bits(
                sender,
            )))
        },
        |p| {
            let receiver = p.receiver_thread.load(std::sync::atomic::Ordering::SeqCst);
            SignalSender::new(SignalTarget::Thread(signals::ThreadAddress::from_bits(
                receiver,
            )))
        },
    );
    check("signal", &pair, results);
}

#[test]
fn a_counting_allocator_does_see_allocations() {
    let info = allocation_counter::measure(|| {
        std::hint::black_box(vec![1u8; 64]);
    });
    assert!(info.count_total >= 1);
}

// The links borrow their kernel objects; these own a share of them so that
// they can move into the side's thread. Each call forwards to the real
// link, built on the spot (a plain struct of references: no allocation).

struct SemReceiverOwned(Arc<SemSet>);
impl ReceiverLink for SemReceiverOwned {
    fn wait(&mut self) -> Result<handoff::Wake, rtlat_core::WaitError> {
        SemReceiver(&self.0).wait()
    }
    fn release(&mut self) -> Result<(), rtlat_core::WaitError> {
        SemReceiver(&self.0).release()
    }
}

struct SemSenderOwned(Arc<SemSet>);
impl SenderLink for SemSenderOwned {
    fn hand_off(&mut self) -> Result<(), rtlat_core::WaitError> {
        SemSender(&self.0).hand_off()
    }
    fn wait_release(&mut self) -> Result<(), rtlat_core::WaitError> {
        SemSender(&self.0).wait_release()
    }
}

struct MqReceiverOwned(Arc<(MessageQueue, MessageQueue)>, Option<Nanos>);
impl ReceiverLink for MqReceiverOwned {
    fn wait(&mut self) -> Result<handoff::Wake, rtlat_core::WaitError> {
        MqReceiver::new(&self.0.0, &self.0.1, self.1).wait()
    }
    fn release(&mut self) -> Result<(), rtlat_core::WaitError> {
        MqReceiver::new(&self.0.0, &self.0.1, self.1).release()
    }
}

struct MqSenderOwned(Arc<(MessageQueue, MessageQueue)>);
impl SenderLink for MqSenderOwned {
    fn hand_off(&mut self) -> Result<(), rtlat_core::WaitError> {
        MqSender::new(&self.0.0, &self.0.1).hand_off()
    }
    fn wait_release(&mut self) -> Result<(), rtlat_core::WaitError> {
        MqSender::new(&self.0.0, &self.0.1).wait_release()
    }
}

/// Both ends of a ptsematest link over semaphores it owns.
struct FutexOwned(Arc<(BinarySemaphore, BinarySemaphore)>);
impl FutexOwned {
    fn link(&self) -> FutexLink<'_> {
        FutexLink {
            test: &self.0.0,
            sync: &self.0.1,
        }
    }
}
impl ReceiverLink for FutexOwned {
    fn wait(&mut self) -> Result<handoff::Wake, rtlat_core::WaitError> {
        self.link().wait()
    }
    fn release(&mut self) -> Result<(), rtlat_core::WaitError> {
        self.link().release()
    }
}
impl SenderLink for FutexOwned {
    fn hand_off(&mut self) -> Result<(), rtlat_core::WaitError> {
        self.link().hand_off()
    }
    fn wait_release(&mut self) -> Result<(), rtlat_core::WaitError> {
        self.link().wait_release()
    }
}
