//! An error number or an I/O error in the C library's words, as rt-tests
//! prints them ("Permission denied"): what every crate's messages say
//! about a failed call, with no call of its own (the standard library
//! holds the table).

/// The C library's description of an error number (`strerror`), without
/// the ` (os error N)` suffix Rust adds: "Permission denied".
pub fn strerror(errno: i32) -> String {
    let text = std::io::Error::from_raw_os_error(errno).to_string();
    match text.rfind(" (os error ") {
        Some(cut) => text[..cut].to_string(),
        None => text,
    }
}

/// An I/O error as [`strerror`] words it ("No space left on device"); an
/// error without an errno as Rust shows it.
pub fn io_strerror(e: &std::io::Error) -> String {
    e.raw_os_error().map_or_else(|| e.to_string(), strerror)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_error_number_reads_as_the_c_library_words_it() {
        assert_eq!(strerror(13), "Permission denied");
        let full = std::io::Error::from_raw_os_error(28);
        assert_eq!(io_strerror(&full), "No space left on device");
        let plain = std::io::Error::other("no errno here");
        assert_eq!(io_strerror(&plain), "no errno here");
    }
}
