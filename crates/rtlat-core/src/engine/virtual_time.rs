//! Virtual-time order for synthetic runs.
//!
//! Synthetic threads do not sleep, so left alone they would race each
//! other, and a run's result would depend on how the OS schedules them. The
//! [`Turnstile`] makes them take turns in virtual-time order instead: before
//! each sample a thread posts the virtual time it wakes at and waits until
//! every live thread has posted and its time is the earliest (ties go to
//! the lower thread number). It then holds the turn until it posts again or
//! retires, so everything it does for that sample — statistics, spike
//! records, a break — happens before any later sample of any thread.
//!
//! The first thread that ends the run (its loops done, its duration over, a
//! break) ends it for all at that virtual moment, as the first real thread
//! to get there does in cyclictest. Only synthetic runs use this; the real
//! measuring loop never takes a lock.

use std::sync::{Condvar, Mutex, MutexGuard, PoisonError};

use rtlat_sys::clock::Timespec;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Seat {
    /// Running its own code: holding the turn, or not yet posted.
    Busy,
    /// Waiting to wake at this virtual time.
    Posted(Timespec),
    /// Its loop has ended.
    Retired,
}

#[derive(Debug)]
struct Seats {
    seats: Vec<Seat>,
    ended: bool,
}

/// The run has ended: the waiting thread must leave its loop.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RunEnded;

/// Hands the turn to the synthetic thread whose next wake-up is earliest.
#[derive(Debug)]
pub struct Turnstile {
    seats: Mutex<Seats>,
    turn: Condvar,
}

impl Turnstile {
    /// A turnstile for `threads` threads, all busy (none has posted yet).
    pub fn new(threads: usize) -> Turnstile {
        Turnstile {
            seats: Mutex::new(Seats {
                seats: vec![Seat::Busy; threads],
                ended: false,
            }),
            turn: Condvar::new(),
        }
    }

    fn lock(&self) -> MutexGuard<'_, Seats> {
        self.seats.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Thread `index` wakes next at `at`: returns when that is the earliest
    /// wake-up of all live threads, or `Err(RunEnded)` once another thread
    /// has ended the run.
    pub fn wait_turn(&self, index: usize, at: Timespec) -> Result<(), RunEnded> {
        let mut s = self.lock();
        s.seats[index] = Seat::Posted(at);
        self.turn.notify_all();
        loop {
            if s.ended {
                s.seats[index] = Seat::Busy;
                return Err(RunEnded);
            }
            if next_in_turn(&s.seats) == Some(index) {
                s.seats[index] = Seat::Busy;
                return Ok(());
            }
            s = self.turn.wait(s).unwrap_or_else(PoisonError::into_inner);
        }
    }

    /// Thread `index` has left its loop; `ends_run` when its loop count,
    /// duration or a break ended it (which ends the run for all).
    pub fn retire(&self, index: usize, ends_run: bool) {
        let mut s = self.lock();
        s.seats[index] = Seat::Retired;
        s.ended |= ends_run;
        self.turn.notify_all();
    }
}

/// The thread whose turn it is: none while any thread is busy, else the
/// earliest posted wake-up (lowest index on a tie).
fn next_in_turn(seats: &[Seat]) -> Option<usize> {
    if seats.contains(&Seat::Busy) {
        return None;
    }
    seats
        .iter()
        .enumerate()
        .filter_map(|(i, seat)| match seat {
            Seat::Posted(at) => Some(((at.tv_sec, at.tv_nsec), i)),
            _ => None,
        })
        .min()
        .map(|(_, i)| i)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(ns: i64) -> Timespec {
        Timespec {
            tv_sec: 0,
            tv_nsec: ns,
        }
    }

    #[test]
    fn earliest_posted_goes_first_and_ties_go_to_the_lower_index() {
        let seats = [
            Seat::Posted(at(5)),
            Seat::Posted(at(3)),
            Seat::Posted(at(3)),
        ];
        assert_eq!(next_in_turn(&seats), Some(1));
        let seats = [Seat::Posted(at(5)), Seat::Busy, Seat::Retired];
        assert_eq!(next_in_turn(&seats), None);
        let seats = [Seat::Retired, Seat::Posted(at(9))];
        assert_eq!(next_in_turn(&seats), Some(1));
    }

    #[test]
    fn threads_take_turns_in_virtual_time_order() {
        use std::sync::Arc;
        let turnstile = Arc::new(Turnstile::new(2));
        let order = Arc::new(Mutex::new(Vec::new()));
        let handles: Vec<_> = (0..2)
            .map(|index| {
                let (turnstile, order) = (Arc::clone(&turnstile), Arc::clone(&order));
                std::thread::spawn(move || {
                    // Thread 0 wakes every 3 ns, thread 1 every 5 ns.
                    let period = [3, 5][index];
                    for k in 1..=6 {
                        turnstile.wait_turn(index, at(k * period)).unwrap();
                        order.lock().unwrap().push(k * period);
                    }
                    turnstile.retire(index, false);
                })
            })
            .collect();
        for h in handles {
            h.join().unwrap();
        }
        let order = order.lock().unwrap().clone();
        let mut sorted = order.clone();
        sorted.sort();
        assert_eq!(order, sorted);
    }

    #[test]
    fn a_run_ending_thread_releases_the_others() {
        let turnstile = Turnstile::new(2);
        turnstile.retire(0, true);
        assert_eq!(turnstile.wait_turn(1, at(1)), Err(RunEnded));
    }
}
