//! Fallible allocation of the buffers a run holds: a run of many threads
//! (or a long histogram) that asks for more memory than there is gets an
//! error it can report, never an abort.

/// Collects `items` into a slice whose memory is reserved first, so that
/// an allocation that cannot succeed (thousands of threads' channels) is
/// `out_of_memory()` rather than an abort.
pub fn try_collect_slice<T, E>(
    items: impl ExactSizeIterator<Item = Result<T, E>>,
    out_of_memory: impl FnOnce() -> E,
) -> Result<Box<[T]>, E> {
    let mut collected = Vec::new();
    if collected.try_reserve_exact(items.len()).is_err() {
        return Err(out_of_memory());
    }
    for item in items {
        collected.push(item?);
    }
    Ok(collected.into_boxed_slice())
}

/// `len` zeroed atomic cells, or `None` if the allocation fails.
pub(crate) fn zeroed_cells<T: Default>(len: usize) -> Option<Box<[T]>> {
    let mut cells = Vec::new();
    cells.try_reserve_exact(len).ok()?;
    cells.resize_with(len, T::default);
    Some(cells.into_boxed_slice())
}
