//! The one-line summaries of the tools and the help title made of one.
//! `rtlat plot`'s summary is here because two binaries print it: the
//! `rtlat-plot` binary starts its help with it, and `rtlat --help` lists
//! it (through the `rtlat` binary's registry of tools, whose other tools
//! keep their summaries in their command-line modules; a test there
//! checks that the two agree).

/// What `rtlat plot` is for, in one line (at most 65 characters, to fit
/// the top help's column).
pub const PLOT_SUMMARY: &str = "draw latency plots (SVG or PNG) from rt-tests and rtlat results";

/// The first line of a tool's `--help`: `rtlat NAME: SUMMARY`.
pub fn help_title(name: &str, summary: &str) -> String {
    format!("rtlat {name}: {summary}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_summary_fits_the_top_help() {
        assert!(PLOT_SUMMARY.chars().count() <= 65, "{PLOT_SUMMARY}");
    }
}
