//! Man pages and shell completions, made from what the parsers use: each
//! tool's option table (`OptSpec` rows: the spellings, whether a value
//! follows, whether the row is hidden) and its help in parts ([`Help`]:
//! what each option does, the name of its value), so that neither is
//! written twice. Every tool's options are [`options`](crate::options)
//! definitions, and its [`Help`] is built from them (`Page::model`), the
//! same definitions its `--help` is printed from.
//!
//! - [`help`]: a help in parts, and the reader of a help text (for tests);
//! - [`man`]: a man page in roff from them;
//! - [`complete`]: bash, zsh and fish completions;
//! - [`undocumented`]: the rows of a table the help does not list, and the
//!   options the help lists that the table does not have (the test of
//!   every tool calls it, so that the pages cannot drift from the parser).

pub mod complete;
pub mod help;
pub mod man;

use crate::getopt::OptSpec;
use help::Help;

/// What differs between a table and a help: `(listed by the table, not
/// the help; listed by the help, not the table)`, as spelled options
/// (`-t`, `--threads`). Hidden rows are not expected in the help, and
/// are an error there.
pub fn undocumented(table: &[OptSpec<()>], help: &Help) -> (Vec<String>, Vec<String>) {
    let spell = |row: &OptSpec<()>| -> Vec<String> {
        row.short
            .map(|s| format!("-{s}"))
            .into_iter()
            .chain(row.long.map(|l| format!("--{l}")))
            .collect()
    };
    let listed = help.option_names();
    let visible: Vec<String> = table.iter().filter(|r| !r.hidden).flat_map(spell).collect();
    let missing = visible
        .iter()
        .filter(|n| !listed.contains(n))
        .cloned()
        .collect();
    let unknown = listed
        .iter()
        .filter(|n| !visible.contains(n))
        .cloned()
        .collect();
    (missing, unknown)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::getopt::{NO, REQ};

    #[test]
    fn both_ways() {
        let help = help::parse("t\n\nOptions:\n  -q, --quiet   q\n      --typo   t\n");
        let table = [
            OptSpec::c((), Some('q'), "quiet", NO),
            OptSpec::c((), None, "json", REQ),
            OptSpec::new_long((), "seam", REQ).hidden(),
        ];
        assert_eq!(
            undocumented(&table, &help),
            (vec!["--json".to_string()], vec!["--typo".to_string()])
        );
        let seam =
            help::parse("t\n\nOptions:\n  -q, --quiet   q\n      --json=F  j\n      --seam=S  s\n");
        assert_eq!(
            undocumented(&table, &seam),
            (vec![], vec!["--seam".to_string()])
        );
    }
}
