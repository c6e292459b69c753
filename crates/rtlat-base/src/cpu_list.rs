//! CPU lists as users write them: `0-3,8`, `all`, `!0`, `+0-1`.
//!
//! The syntax follows libnuma's `numa_parse_cpustring_all`, which the C
//! rt-tests use for `-a`:
//!
//! - comma-separated items, each a CPU number `N` or an inclusive range
//!   `N-M`, or `all` (every CPU this process may use);
//! - a leading `!` before the whole list means "every allowed CPU except
//!   these"; a `!` before a later item removes that item from the list
//!   (`0-3,!2`), and a list made only of such items starts from the allowed
//!   set;
//! - a leading `+` (after the `!`, if any) makes the numbers relative to the
//!   allowed set: item `k` is the k-th allowed CPU, counting from 0.
//!
//! Plain numbers are checked against the CPUs the machine has, not against
//! the process affinity; a list with `!` or `+` is taken within the allowed
//! set. Surrounding whitespace is ignored; whitespace inside is not.

use std::collections::BTreeSet;

/// Why a CPU list was refused. Display is one line.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum CpuListError {
    /// Nothing was given.
    #[error("empty CPU list")]
    Empty,
    /// An item is neither `N`, `N-M` nor `all`.
    #[error("bad CPU list item '{item}': expected a CPU number N, a range N-M, or all")]
    Syntax {
        /// The offending item.
        item: String,
    },
    /// A range whose end is below its start.
    #[error("bad CPU range '{item}': {end} is below {start}")]
    Backwards {
        /// The offending item.
        item: String,
        /// Its first number.
        start: usize,
        /// Its second number.
        end: usize,
    },
    /// A CPU number the machine does not have.
    #[error("cpu {cpu} is out of range: this machine has CPUs {machine}")]
    OutOfRange {
        /// The CPU asked for.
        cpu: usize,
        /// The machine's CPUs, formatted like `0-7`.
        machine: String,
    },
    /// A relative (`+`) number past the end of the allowed set.
    #[error("relative cpu +{index} is out of range: this process may use {count} CPUs ({allowed})")]
    RelativeOutOfRange {
        /// The relative index asked for.
        index: usize,
        /// How many CPUs are allowed.
        count: usize,
        /// The allowed CPUs, formatted.
        allowed: String,
    },
    /// The list is well formed but selects nothing.
    #[error("CPU list '{text}' selects no CPU this process may use (allowed: {allowed})")]
    NoCpu {
        /// The list as given.
        text: String,
        /// The allowed CPUs, formatted.
        allowed: String,
    },
}

/// Parses a CPU list into sorted, distinct CPU numbers.
///
/// `allowed` is the process's CPU affinity (any order), `configured` the
/// number of CPUs the machine has (`_SC_NPROCESSORS_CONF`): CPU numbers
/// `0..configured` exist.
pub fn parse_cpu_list(
    text: &str,
    allowed: &[usize],
    configured: usize,
) -> Result<Vec<usize>, CpuListError> {
    let trimmed = text.trim();
    if trimmed.is_empty() {
        return Err(CpuListError::Empty);
    }
    let allowed: BTreeSet<usize> = allowed.iter().copied().collect();
    let allowed_sorted: Vec<usize> = allowed.iter().copied().collect();
    let ctx = Context {
        allowed: &allowed_sorted,
        configured,
    };

    let (invert, rest) = match trimmed.strip_prefix('!') {
        Some(rest) => (true, rest),
        None => (false, trimmed),
    };
    let (relative, body) = match rest.strip_prefix('+') {
        Some(body) => (true, body),
        None => (false, rest),
    };

    let mut included = BTreeSet::new();
    let mut excluded = BTreeSet::new();
    let mut any_included = false;
    for item in body.split(',') {
        match item.strip_prefix('!') {
            // `!!x` and `!a,!b` under a leading `!` make no sense.
            Some(_) if invert => {
                return Err(CpuListError::Syntax {
                    item: item.to_owned(),
                });
            }
            Some(negated) => excluded.extend(ctx.item(negated, relative)?),
            None => {
                any_included = true;
                included.extend(ctx.item(item, relative)?);
            }
        }
    }

    let result: BTreeSet<usize> = if invert {
        allowed.difference(&included).copied().collect()
    } else if !excluded.is_empty() || !any_included {
        let base = if any_included { &included } else { &allowed };
        base.iter()
            .filter(|cpu| allowed.contains(cpu) && !excluded.contains(cpu))
            .copied()
            .collect()
    } else {
        included
    };

    if result.is_empty() {
        return Err(CpuListError::NoCpu {
            text: trimmed.to_owned(),
            allowed: format_cpu_list(&allowed_sorted),
        });
    }
    Ok(result.into_iter().collect())
}

/// Formats CPU numbers as a compact list: `[0, 1, 2, 3, 8]` gives `0-3,8`.
///
/// The input need not be sorted or distinct; an empty input gives `""`.
pub fn format_cpu_list(cpus: &[usize]) -> String {
    let set: BTreeSet<usize> = cpus.iter().copied().collect();
    let mut out = String::new();
    let mut iter = set.into_iter().peekable();
    while let Some(start) = iter.next() {
        let mut end = start;
        while iter.peek() == Some(&(end + 1)) {
            end += 1;
            iter.next();
        }
        if !out.is_empty() {
            out.push(',');
        }
        if end == start {
            out.push_str(&start.to_string());
        } else {
            out.push_str(&format!("{start}-{end}"));
        }
    }
    out
}

struct Context<'a> {
    allowed: &'a [usize],
    configured: usize,
}

impl Context<'_> {
    /// One item: `all`, `N` or `N-M`, absolute or relative.
    fn item(&self, item: &str, relative: bool) -> Result<Vec<usize>, CpuListError> {
        if item == "all" {
            return Ok(self.allowed.to_vec());
        }
        let syntax = || CpuListError::Syntax {
            item: item.to_owned(),
        };
        let (start, end) = match item.split_once('-') {
            Some((a, b)) => (number(a).ok_or_else(syntax)?, number(b).ok_or_else(syntax)?),
            None => {
                let n = number(item).ok_or_else(syntax)?;
                (n, n)
            }
        };
        if end < start {
            return Err(CpuListError::Backwards {
                item: item.to_owned(),
                start,
                end,
            });
        }
        if relative {
            if end >= self.allowed.len() {
                return Err(CpuListError::RelativeOutOfRange {
                    index: end,
                    count: self.allowed.len(),
                    allowed: format_cpu_list(self.allowed),
                });
            }
            Ok(self.allowed[start..=end].to_vec())
        } else {
            if end >= self.configured {
                let machine: Vec<usize> = (0..self.configured).collect();
                return Err(CpuListError::OutOfRange {
                    cpu: if start >= self.configured { start } else { end },
                    machine: format_cpu_list(&machine),
                });
            }
            Ok((start..=end).collect())
        }
    }
}

/// A plain decimal number: digits only, no sign, no blanks.
fn number(text: &str) -> Option<usize> {
    if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    text.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const ALL8: &[usize] = &[0, 1, 2, 3, 4, 5, 6, 7];

    fn parse8(text: &str) -> Result<Vec<usize>, CpuListError> {
        parse_cpu_list(text, ALL8, 8)
    }

    #[test]
    fn single_numbers_and_ranges() {
        assert_eq!(parse8("3").unwrap(), vec![3]);
        assert_eq!(parse8("0-3").unwrap(), vec![0, 1, 2, 3]);
        assert_eq!(parse8("5,1,1-2").unwrap(), vec![1, 2, 5]);
        assert_eq!(parse8("2-2").unwrap(), vec![2]);
        assert_eq!(parse8(" 0-1 ").unwrap(), vec![0, 1]);
    }

    #[test]
    fn plain_lists_are_not_limited_to_the_affinity() {
        assert_eq!(parse_cpu_list("3", &[0, 1], 4).unwrap(), vec![3]);
    }

    #[test]
    fn all_means_the_allowed_set() {
        assert_eq!(parse_cpu_list("all", &[1, 3], 4).unwrap(), vec![1, 3]);
        assert_eq!(parse_cpu_list("0,all", &[1, 3], 4).unwrap(), vec![0, 1, 3]);
    }

    #[test]
    fn negation() {
        assert_eq!(parse8("!0").unwrap(), vec![1, 2, 3, 4, 5, 6, 7]);
        assert_eq!(parse8("!0-5,7").unwrap(), vec![6]);
        assert_eq!(parse_cpu_list("!0", &[0, 2, 3], 4).unwrap(), vec![2, 3]);
        assert_eq!(parse8("0-3,!2").unwrap(), vec![0, 1, 3]);
        assert_eq!(
            parse8("!1,!2").unwrap_err(),
            CpuListError::Syntax { item: "!2".into() }
        );
        // Only exclusions: start from the allowed set.
        assert_eq!(
            parse_cpu_list("1,!1", &[0, 1], 2).unwrap_err().to_string(),
            "CPU list '1,!1' selects no CPU this process may use (allowed: 0-1)"
        );
        // A list with ! stays within the allowed set.
        assert_eq!(parse_cpu_list("0-3,!1", &[1, 2], 4).unwrap(), vec![2]);
    }

    #[test]
    fn relative() {
        assert_eq!(parse_cpu_list("+0", &[2, 4, 6], 8).unwrap(), vec![2]);
        assert_eq!(parse_cpu_list("+1-2", &[6, 2, 4], 8).unwrap(), vec![4, 6]);
        assert_eq!(parse_cpu_list("!+0", &[2, 4, 6], 8).unwrap(), vec![4, 6]);
        assert_eq!(
            parse_cpu_list("+3", &[2, 4, 6], 8).unwrap_err().to_string(),
            "relative cpu +3 is out of range: this process may use 3 CPUs (2,4,6)"
        );
    }

    #[test]
    fn errors() {
        assert_eq!(parse8("").unwrap_err(), CpuListError::Empty);
        assert_eq!(parse8("  ").unwrap_err(), CpuListError::Empty);
        for bad in [
            "0-", "-1", "a", "1,", ",1", "1 ,2", "1-2-3", "+", "!", "0x1", "1:2", "+-1",
        ] {
            assert!(
                matches!(parse8(bad), Err(CpuListError::Syntax { .. })),
                "{bad}: {:?}",
                parse8(bad)
            );
        }
        assert_eq!(
            parse8("3-1").unwrap_err().to_string(),
            "bad CPU range '3-1': 1 is below 3"
        );
        assert_eq!(
            parse_cpu_list("64", &[0, 1], 2).unwrap_err().to_string(),
            "cpu 64 is out of range: this machine has CPUs 0-1"
        );
        assert_eq!(
            parse_cpu_list("1-5", &[0, 1], 2).unwrap_err().to_string(),
            "cpu 5 is out of range: this machine has CPUs 0-1"
        );
        assert_eq!(
            parse_cpu_list("!0-1", &[0, 1], 2).unwrap_err().to_string(),
            "CPU list '!0-1' selects no CPU this process may use (allowed: 0-1)"
        );
        assert!(matches!(
            parse8("99999999999999999999999999"),
            Err(CpuListError::Syntax { .. })
        ));
        for text in ["", "0-", "3-1", "a", "64", "!0-7"] {
            let msg = parse8(text).unwrap_err().to_string();
            assert!(!msg.contains('\n') && !msg.is_empty(), "{msg}");
        }
    }

    #[test]
    fn formatting() {
        assert_eq!(format_cpu_list(&[]), "");
        assert_eq!(format_cpu_list(&[0]), "0");
        assert_eq!(format_cpu_list(&[0, 1]), "0-1");
        assert_eq!(format_cpu_list(&[0, 1, 2, 3, 8]), "0-3,8");
        assert_eq!(format_cpu_list(&[8, 3, 2, 2, 1, 0, 10, 11]), "0-3,8,10-11");
    }

    proptest! {
        #[test]
        fn format_then_parse_round_trips(cpus in proptest::collection::btree_set(0usize..128, 1..40)) {
            let cpus: Vec<usize> = cpus.into_iter().collect();
            let text = format_cpu_list(&cpus);
            let all: Vec<usize> = (0..128).collect();
            prop_assert_eq!(parse_cpu_list(&text, &all, 128).unwrap(), cpus.clone());
            // Plain lists do not depend on the affinity.
            prop_assert_eq!(parse_cpu_list(&text, &[0], 128).unwrap(), cpus);
        }

        #[test]
        fn relative_lists_index_the_allowed_set(
            allowed in proptest::collection::btree_set(0usize..128, 1..40),
            picks in proptest::collection::btree_set(0usize..40, 1..10),
        ) {
            let allowed: Vec<usize> = allowed.into_iter().collect();
            let picks: Vec<usize> = picks.into_iter().filter(|&k| k < allowed.len()).collect();
            prop_assume!(!picks.is_empty());
            let text = format!("+{}", format_cpu_list(&picks));
            let want: Vec<usize> = picks.iter().map(|&k| allowed[k]).collect();
            prop_assert_eq!(parse_cpu_list(&text, &allowed, 128).unwrap(), want);
        }

        #[test]
        fn negation_is_the_complement_within_allowed(
            allowed in proptest::collection::btree_set(0usize..64, 1..40),
            cpus in proptest::collection::btree_set(0usize..64, 1..40),
        ) {
            let allowed: Vec<usize> = allowed.into_iter().collect();
            let cpus: Vec<usize> = cpus.into_iter().collect();
            let text = format!("!{}", format_cpu_list(&cpus));
            let want: Vec<usize> = allowed.iter().copied().filter(|c| !cpus.contains(c)).collect();
            match parse_cpu_list(&text, &allowed, 64) {
                Ok(got) => prop_assert_eq!(got, want),
                Err(CpuListError::NoCpu { .. }) => prop_assert!(want.is_empty()),
                Err(e) => prop_assert!(false, "{}", e),
            }
        }
    }
}
