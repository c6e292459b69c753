//! A SysV semaphore set of one run's own.
//!
//! svsematest keys its sets with `ftok(argv[0], i)`, so two instances of
//! the tool share (and disturb) each other's semaphores. A set created with
//! `IPC_PRIVATE` has a fresh id nobody else knows; one created under a
//! fresh key with `IPC_EXCL` ([`SemSet::create_exclusive`]) is as much its
//! creator's, and its key can be told to a process that cleans up after
//! this one before the set exists. A child process of ours that is told
//! the id can use it ([`SemSet::attach`]).
#![allow(unsafe_code)]

use super::last_errno;
use crate::Errno;

/// A SysV semaphore set. The creator removes it when dropped.
#[derive(Debug)]
pub struct SemSet {
    id: i32,
    owner: bool,
}

impl SemSet {
    /// Creates a private set of `count` semaphores, all at 0, accessible to
    /// this user only.
    pub fn create_private(count: u16) -> Result<SemSet, Errno> {
        SemSet::create(libc::IPC_PRIVATE, count, libc::IPC_CREAT)
    }

    /// Creates a set of `count` semaphores, all at 0, accessible to this
    /// user only, under `key` (not `IPC_PRIVATE`), which must be new:
    /// `EEXIST` if a set has it already. A set whose key is known before
    /// it exists can be announced to a process that cleans up after this
    /// one BEFORE it is made ([`set_of_key`] finds it).
    pub fn create_exclusive(key: i32, count: u16) -> Result<SemSet, Errno> {
        SemSet::create(key, count, libc::IPC_CREAT | libc::IPC_EXCL)
    }

    /// `semget(key, count, 0600 | flags)`, every semaphore set to 0.
    fn create(key: libc::key_t, count: u16, flags: libc::c_int) -> Result<SemSet, Errno> {
        // SAFETY: semget has no memory effects; any arguments are valid.
        let id = unsafe { libc::semget(key, i32::from(count), 0o600 | flags) };
        if id < 0 {
            return Err(last_errno());
        }
        let set = SemSet { id, owner: true };
        for sem in 0..count {
            set.set_value(sem, 0)?;
        }
        Ok(set)
    }

    /// Uses the set `id` that another process created (and removes).
    pub fn attach(id: i32) -> SemSet {
        SemSet { id, owner: false }
    }

    /// The set's id, to hand to [`SemSet::attach`] in another process.
    pub fn id(&self) -> i32 {
        self.id
    }

    fn set_value(&self, sem: u16, value: i32) -> Result<(), Errno> {
        // SAFETY: SETVAL takes the value as an int passed in the variadic
        // `union semun` position; an int is how glibc reads it on Linux.
        let rc = unsafe { libc::semctl(self.id, i32::from(sem), libc::SETVAL, value) };
        if rc < 0 { Err(last_errno()) } else { Ok(()) }
    }

    /// The current value of semaphore `sem`.
    pub fn value(&self, sem: u16) -> Result<i32, Errno> {
        // SAFETY: GETVAL reads no argument beyond the fixed ones.
        let rc = unsafe { libc::semctl(self.id, i32::from(sem), libc::GETVAL) };
        if rc < 0 { Err(last_errno()) } else { Ok(rc) }
    }

    #[inline(always)]
    fn op(&self, sem: u16, delta: i16) -> Result<(), Errno> {
        let mut op = libc::sembuf {
            sem_num: sem,
            sem_op: delta,
            sem_flg: 0,
        };
        // SAFETY: `op` is one initialised sembuf on the stack and the count
        // passed is 1.
        let rc = unsafe { libc::semop(self.id, &mut op, 1) };
        if rc < 0 { Err(last_errno()) } else { Ok(()) }
    }

    /// Adds one to semaphore `sem` (one `semop`), waking a waiter.
    #[inline]
    pub fn post(&self, sem: u16) -> Result<(), Errno> {
        self.op(sem, 1)
    }

    /// Takes one from semaphore `sem`, blocking while it is 0 (one
    /// `semop`). `Err(Errno::INTR)` when a signal handler ran first.
    #[inline]
    pub fn wait(&self, sem: u16) -> Result<(), Errno> {
        self.op(sem, -1)
    }
}

impl Drop for SemSet {
    fn drop(&mut self) {
        if self.owner {
            let _ = remove_set(self.id);
        }
    }
}

/// Removes the semaphore set `id` (`IPC_RMID`), whoever created it: for a
/// process that cleans up after another (rtlat's janitor).
pub fn remove_set(id: i32) -> Result<(), Errno> {
    // SAFETY: IPC_RMID reads no argument beyond the fixed ones.
    let rc = unsafe { libc::semctl(id, 0, libc::IPC_RMID) };
    if rc < 0 { Err(last_errno()) } else { Ok(()) }
}

/// The id of the set with key `key`, if there is one (`ENOENT` if not).
pub fn set_of_key(key: i32) -> Result<i32, Errno> {
    // SAFETY: semget has no memory effects; any arguments are valid.
    let id = unsafe { libc::semget(key, 0, 0) };
    if id < 0 { Err(last_errno()) } else { Ok(id) }
}

/// The process id of the last process that changed semaphore `sem` of set
/// `id` (`GETPID`: its last `semop`, or the `SETVAL` that created it):
/// tells which run a set belongs to.
pub fn last_operator(id: i32, sem: u16) -> Result<i32, Errno> {
    // SAFETY: GETPID reads no argument beyond the fixed ones.
    let rc = unsafe { libc::semctl(id, i32::from(sem), libc::GETPID) };
    if rc < 0 { Err(last_errno()) } else { Ok(rc) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn post_then_wait_and_removal() {
        let set = SemSet::create_private(2).unwrap();
        assert_eq!(set.value(1).unwrap(), 0);
        set.post(1).unwrap();
        assert_eq!(set.value(1).unwrap(), 1);
        set.wait(1).unwrap();
        assert_eq!(set.value(1).unwrap(), 0);
        let other = SemSet::create_private(2).unwrap();
        assert_ne!(other.id(), set.id(), "private sets never collide");
        let id = set.id();
        let own = crate::system::current_pid();
        assert_eq!(last_operator(id, 0), Ok(own), "SETVAL at creation");
        drop(set);
        assert!(SemSet::attach(id).value(0).is_err(), "removed on drop");
        assert_eq!(remove_set(id), Err(Errno::INVAL), "removed once");
        let third = SemSet::create_private(1).unwrap();
        let third_id = third.id();
        std::mem::forget(third);
        assert_eq!(remove_set(third_id), Ok(()), "removed by id");
    }
}
