//! Every tool under faults: children and signals, memory and thread limits, output files that cannot be written, bad inputs to the readers, standard streams on `/dev/full`.

pub(crate) mod children;
pub(crate) mod janitor_death;
pub(crate) mod limits;
pub(crate) mod outputs;
pub(crate) mod readers;
pub(crate) mod stdio;
pub(crate) mod unread;
