//! The mechanisms as ends of the hand-off loops.
//!
//! Each end borrows the kernel objects the run created before the loops
//! started; none of them allocates or formats.

use rtlat_sys::Errno;
use rtlat_sys::clock::{self, Clock, Timespec};
use rtlat_sys::ipc::futex::BinarySemaphore;
use rtlat_sys::ipc::mqueue::MessageQueue;
use rtlat_sys::ipc::sysv::SemSet;
use rtlat_sys::signals::{self, SignalWaiter, ThreadAddress};

use super::handoff::{ReceiverLink, SenderLink, Wake};
use super::{SYNC_MESSAGE, TEST_MESSAGE};
use crate::engine::source::WaitError;
use crate::engine::time::{self, Period};

/// The semaphore of a svsematest set the sender posts to wake the receiver.
pub(crate) const SEM_TO_RECEIVER: u16 = 0;
/// The semaphore the receiver posts to release the sender.
pub(crate) const SEM_TO_SENDER: u16 = 1;

/// `EBADMSG`: a pmqtest message was not the one expected.
pub(crate) const EBADMSG: i32 = Errno::BADMSG.raw_os_error();

/// svsematest's receiver: `semop(-1)` on the hand-off semaphore.
#[derive(Debug)]
pub struct SemReceiver<'a>(pub &'a SemSet);

impl ReceiverLink for SemReceiver<'_> {
    #[inline(always)]
    fn wait(&mut self) -> Result<Wake, WaitError> {
        self.0.wait(SEM_TO_RECEIVER)?;
        Ok(Wake::HandOff)
    }

    #[inline(always)]
    fn release(&mut self) -> Result<(), WaitError> {
        Ok(self.0.post(SEM_TO_SENDER)?)
    }
}

/// svsematest's sender: `semop(+1)` on the hand-off semaphore.
#[derive(Debug)]
pub struct SemSender<'a>(pub &'a SemSet);

impl SenderLink for SemSender<'_> {
    #[inline(always)]
    fn hand_off(&mut self) -> Result<(), WaitError> {
        Ok(self.0.post(SEM_TO_RECEIVER)?)
    }

    #[inline(always)]
    fn wait_release(&mut self) -> Result<(), WaitError> {
        Ok(self.0.wait(SEM_TO_SENDER)?)
    }
}

/// ptsematest's link, the same two semaphores at either end: the receiver
/// waits on the test semaphore and posts the sync one, the sender posts
/// the test semaphore and waits on the sync one.
#[derive(Debug)]
pub struct FutexLink<'a> {
    /// Posted by the sender to wake the receiver.
    pub test: &'a BinarySemaphore,
    /// Posted by the receiver to release the sender.
    pub sync: &'a BinarySemaphore,
}

impl ReceiverLink for FutexLink<'_> {
    #[inline(always)]
    fn wait(&mut self) -> Result<Wake, WaitError> {
        self.test.wait()?;
        Ok(Wake::HandOff)
    }

    #[inline(always)]
    fn release(&mut self) -> Result<(), WaitError> {
        Ok(self.sync.post()?)
    }
}

impl SenderLink for FutexLink<'_> {
    #[inline(always)]
    fn hand_off(&mut self) -> Result<(), WaitError> {
        Ok(self.test.post()?)
    }

    #[inline(always)]
    fn wait_release(&mut self) -> Result<(), WaitError> {
        Ok(self.sync.wait()?)
    }
}

/// pmqtest's receiver: receives "Testing" on the test queue (with `-T`
/// until a deadline on CLOCK_REALTIME, as C does), sends "Syncing" back.
#[derive(Debug)]
pub struct MqReceiver<'a> {
    test: &'a MessageQueue,
    sync: &'a MessageQueue,
    timeout: Option<Period>,
    buf: [u8; 8],
}

impl<'a> MqReceiver<'a> {
    /// The receiver end over the pair's two queues; `timeout`: `-T`.
    pub fn new(
        test: &'a MessageQueue,
        sync: &'a MessageQueue,
        timeout: Option<crate::units::Nanos>,
    ) -> Self {
        MqReceiver {
            test,
            sync,
            timeout: timeout.map(|t| Period::from_nanos(t.as_nanos())),
            buf: [0; 8],
        }
    }
}

impl ReceiverLink for MqReceiver<'_> {
    #[inline(always)]
    fn wait(&mut self) -> Result<Wake, WaitError> {
        let got = match self.timeout {
            None => self.test.receive(&mut self.buf),
            Some(timeout) => {
                let deadline = time::add(clock::now(Clock::Realtime), timeout);
                match self.test.receive_until(&mut self.buf, &deadline) {
                    Err(Errno::TIMEDOUT) => return Ok(Wake::TimedOut),
                    other => other,
                }
            }
        }?;
        if self.buf[..got] != TEST_MESSAGE[..] {
            return Err(WaitError::Failed(EBADMSG));
        }
        Ok(Wake::HandOff)
    }

    #[inline(always)]
    fn release(&mut self) -> Result<(), WaitError> {
        Ok(self.sync.send(SYNC_MESSAGE, 1)?)
    }
}

/// pmqtest's sender: sends "Testing", waits for "Syncing" (once: C's
/// sender receives it twice with `-T`, which makes the receiver time out).
#[derive(Debug)]
pub struct MqSender<'a> {
    test: &'a MessageQueue,
    sync: &'a MessageQueue,
    buf: [u8; 8],
}

impl<'a> MqSender<'a> {
    /// The sender end over the pair's two queues.
    pub fn new(test: &'a MessageQueue, sync: &'a MessageQueue) -> Self {
        MqSender {
            test,
            sync,
            buf: [0; 8],
        }
    }
}

impl SenderLink for MqSender<'_> {
    #[inline(always)]
    fn hand_off(&mut self) -> Result<(), WaitError> {
        Ok(self.test.send(TEST_MESSAGE, 1)?)
    }

    #[inline(always)]
    fn wait_release(&mut self) -> Result<(), WaitError> {
        let got = self.sync.receive(&mut self.buf)?;
        if self.buf[..got] != SYNC_MESSAGE[..] {
            return Err(WaitError::Failed(EBADMSG));
        }
        Ok(())
    }
}

/// Where a signal goes: a thread of this process, or another process.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SignalTarget {
    /// `tgkill` to this thread of this process.
    Thread(ThreadAddress),
    /// `kill` to this process (fork mode).
    Process(i32),
}

impl SignalTarget {
    #[inline(always)]
    fn send(self, signal: i32) -> Result<(), WaitError> {
        match self {
            // A partner thread that has already left its loop (the run is
            // ending) has nothing left to receive.
            SignalTarget::Thread(t) => match t.signal(signal) {
                Err(e) if e == rtlat_sys::Errno::SRCH => Ok(()),
                other => other,
            },
            SignalTarget::Process(pid) => signals::signal_process(pid, signal),
        }
        .map_err(WaitError::from)
    }
}

/// The signal that wakes sigwaittest's receiver (SIGUSR2).
pub(crate) const fn handoff_signal() -> i32 {
    rtlat_sys::ipc::SIGUSR2
}

/// The signal that releases sigwaittest's sender (SIGUSR1).
pub(crate) const fn release_signal() -> i32 {
    rtlat_sys::ipc::SIGUSR1
}

/// sigwaittest's receiver: `sigwaitinfo(SIGUSR2)`, then SIGUSR1 to the
/// sender. Both signals must be blocked in the receiving thread.
#[derive(Debug)]
pub struct SignalReceiver {
    waiter: SignalWaiter,
    sender: SignalTarget,
}

impl SignalReceiver {
    /// The receiver end; `sender` is where the release goes.
    pub fn new(sender: SignalTarget) -> Self {
        SignalReceiver {
            waiter: SignalWaiter::new(&[handoff_signal()]),
            sender,
        }
    }
}

impl ReceiverLink for SignalReceiver {
    #[inline(always)]
    fn wait(&mut self) -> Result<Wake, WaitError> {
        self.waiter.wait()?;
        Ok(Wake::HandOff)
    }

    #[inline(always)]
    fn release(&mut self) -> Result<(), WaitError> {
        self.sender.send(release_signal())
    }
}

/// sigwaittest's sender: SIGUSR2 to the receiver, then
/// `sigwaitinfo(SIGUSR1)`.
#[derive(Debug)]
pub struct SignalSender {
    waiter: SignalWaiter,
    receiver: SignalTarget,
}

impl SignalSender {
    /// The sender end; `receiver` is where the hand-off goes.
    pub fn new(receiver: SignalTarget) -> Self {
        SignalSender {
            waiter: SignalWaiter::new(&[release_signal()]),
            receiver,
        }
    }
}

impl SenderLink for SignalSender {
    #[inline(always)]
    fn hand_off(&mut self) -> Result<(), WaitError> {
        self.receiver.send(handoff_signal())
    }

    #[inline(always)]
    fn wait_release(&mut self) -> Result<(), WaitError> {
        self.waiter.wait()?;
        Ok(())
    }
}

/// The receiver's interval as the relative `timespec` its sleep takes;
/// `None` for no sleep.
pub fn interval_timespec(interval: crate::units::Nanos) -> Option<Timespec> {
    (interval.as_nanos() > 0).then(|| Period::from_nanos(interval.as_nanos()).as_timespec())
}
