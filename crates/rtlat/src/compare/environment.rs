//! What differs between the machines of two runs: the facts of each
//! result's `"environment"` object (written by every rtlat tool, keys in
//! `rtlat_audit::environment`) that say why latencies may have changed
//! (kernel, its command line, CPU, governors, isolation, clocksource,
//! rtlat's version), compared key by key, so that a regression says
//! what changed with it.

use rtlat_args::escape::escape;
use serde_json::{Map, Value};

/// The facts compared, as dotted paths into `"environment"`, in the order
/// they are listed. `governors` is made from the `cpus` array.
pub const COMPARED: [&str; 19] = [
    "rtlat_version",
    "kernel.release",
    "kernel.version",
    "kernel.preemption",
    "kernel.hz",
    "kernel.nohz_full",
    "kernel.cmdline",
    "cpu.model",
    "cpu.count",
    "cpu.smt",
    "governors",
    "clocksource",
    "isolation.isolated",
    "isolation.nohz_full",
    "isolation.isolcpus",
    "isolation.rcu_nocbs",
    "isolation.irqaffinity",
    "sched_rt_runtime_us",
    "virtualization.hypervisor",
];

/// One run's facts: each of [`COMPARED`], `null` where not recorded.
#[derive(Clone, Debug, PartialEq)]
pub struct Facts(Vec<Value>);

impl Facts {
    /// The facts of an `"environment"` object; `None` when the result has
    /// none (an older rtlat, or an audit that could not be made: `null`).
    pub fn of(environment: Option<&Value>) -> Option<Facts> {
        let env = environment?.as_object()?;
        Some(Facts(COMPARED.iter().map(|key| fact(env, key)).collect()))
    }
}

/// The value of `key` in `env`.
fn fact(env: &Map<String, Value>, key: &str) -> Value {
    if key == "governors" {
        return governors(env.get("cpus"));
    }
    let mut parts = key.split('.');
    let first = parts.next().and_then(|k| env.get(k));
    parts
        .try_fold(first, |value, part| Some(value?.get(part)))
        .flatten()
        .cloned()
        .unwrap_or(Value::Null)
}

/// The measured CPUs' governors: the one name when they all have it,
/// else `CPU: name` for each (`2: performance, 3: powersave`); `null`
/// when none is known.
fn governors(cpus: Option<&Value>) -> Value {
    let Some(cpus) = cpus.and_then(Value::as_array) else {
        return Value::Null;
    };
    let each: Vec<(String, &str)> = cpus
        .iter()
        .filter_map(|c| {
            let governor = c.get("governor")?.as_str()?;
            let cpu = c
                .get("cpu")
                .map_or_else(|| "?".to_owned(), Value::to_string);
            Some((cpu, governor))
        })
        .collect();
    match each.first() {
        None => Value::Null,
        Some((_, first)) if each.iter().all(|(_, g)| g == first) => Value::from(*first),
        Some(_) => Value::from(
            each.iter()
                .map(|(cpu, g)| format!("{cpu}: {g}"))
                .collect::<Vec<_>>()
                .join(", "),
        ),
    }
}

/// One fact that differs.
#[derive(Clone, Debug, PartialEq)]
pub struct FactChange {
    /// Its dotted path (one of [`COMPARED`]).
    pub key: &'static str,
    /// BASE's value.
    pub base: Value,
    /// NEW's value.
    pub new: Value,
}

/// How the two runs' environments compare.
#[derive(Clone, Debug, PartialEq)]
pub enum EnvironmentDiff {
    /// Neither result records one: nothing to say.
    NeitherRecorded,
    /// Only BASE records one.
    OnlyBase,
    /// Only NEW records one.
    OnlyNew,
    /// Both do; the facts that differ, in the order of [`COMPARED`].
    Compared(Vec<FactChange>),
}

impl EnvironmentDiff {
    /// Compares BASE's facts with NEW's.
    pub fn of(base: Option<&Facts>, new: Option<&Facts>) -> EnvironmentDiff {
        match (base, new) {
            (None, None) => EnvironmentDiff::NeitherRecorded,
            (Some(_), None) => EnvironmentDiff::OnlyBase,
            (None, Some(_)) => EnvironmentDiff::OnlyNew,
            (Some(b), Some(n)) => EnvironmentDiff::Compared(
                COMPARED
                    .iter()
                    .zip(b.0.iter().zip(&n.0))
                    .filter(|(_, (b, n))| b != n)
                    .map(|(key, (b, n))| FactChange {
                        key,
                        base: b.clone(),
                        new: n.clone(),
                    })
                    .collect(),
            ),
        }
    }

    /// The lines of the text, before the verdict: none when neither run
    /// records an environment.
    pub fn lines(&self) -> Vec<String> {
        let only = |has: &str, lacks: &str| {
            vec![format!(
                "environment: only {has} records one ({lacks} has no \"environment\"): not compared"
            )]
        };
        match self {
            EnvironmentDiff::NeitherRecorded => Vec::new(),
            EnvironmentDiff::OnlyBase => only("BASE", "NEW"),
            EnvironmentDiff::OnlyNew => only("NEW", "BASE"),
            EnvironmentDiff::Compared(changes) if changes.is_empty() => {
                vec![
                    "environment: the same in both runs (kernel, command line, CPU, governors, \
                      isolation, clocksource, rtlat version)"
                        .to_owned(),
                ]
            }
            EnvironmentDiff::Compared(changes) => {
                let width = changes.iter().map(|c| c.key.len()).max().unwrap_or(0);
                let mut lines = vec!["environment differs (BASE -> NEW):".to_owned()];
                lines.extend(changes.iter().map(|c| {
                    format!(
                        "  {:<width$}  {} -> {}",
                        c.key,
                        shown(&c.base),
                        shown(&c.new)
                    )
                }));
                lines
            }
        }
    }
}

/// A fact as the text shows it: strings without quotes (`""` for an
/// empty one), `-` for one not recorded. A string is whatever the file
/// says (a kernel command line, a host's governor): escaped, one change
/// one line.
fn shown(value: &Value) -> String {
    match value {
        Value::Null => "-".to_owned(),
        Value::String(s) if s.is_empty() => "\"\"".to_owned(),
        Value::String(s) => escape(s).into_owned(),
        other => escape(&other.to_string()).into_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn environment() -> Value {
        json!({
            "rtlat_version": "0.1.0",
            "kernel": {"release": "6.1.0-rt", "version": "#1 SMP PREEMPT_RT",
                       "preemption": "PREEMPT_RT", "hz": 1000, "nohz_full": true,
                       "cmdline": "isolcpus=2-3"},
            "cpu": {"model": "Xeon", "count": 4, "smt": false},
            "measured_cpus": [2, 3],
            "cpus": [{"cpu": 2, "governor": "performance", "idle_states": []},
                     {"cpu": 3, "governor": "performance", "idle_states": []}],
            "clocksource": "tsc",
            "isolation": {"isolated": "2-3", "nohz_full": "2-3", "isolcpus": "2-3",
                          "rcu_nocbs": null, "irqaffinity": "0-1"},
            "sched_rt_runtime_us": -1,
            "virtualization": {"hypervisor": false, "steal_time_seen": false},
            "limits": {"rlimit_rtprio": "unlimited", "rlimit_memlock": "8388608",
                       "cap_sys_nice": true, "cap_ipc_lock": true}
        })
    }

    fn diff(base: &Value, new: &Value) -> EnvironmentDiff {
        EnvironmentDiff::of(
            Facts::of(Some(base)).as_ref(),
            Facts::of(Some(new)).as_ref(),
        )
    }

    #[test]
    fn the_same_environment_has_no_change() {
        let env = environment();
        assert_eq!(diff(&env, &env), EnvironmentDiff::Compared(Vec::new()));
        assert_eq!(diff(&env, &env).lines().len(), 1);
    }

    #[test]
    fn each_changed_fact_is_listed_with_both_values_in_order() {
        let base = environment();
        let mut new = environment();
        new["kernel"]["release"] = json!("6.6.0");
        new["kernel"]["cmdline"] = json!("quiet");
        new["cpus"][1]["governor"] = json!("powersave");
        new["isolation"]["rcu_nocbs"] = json!("2-3");
        new["rtlat_version"] = json!("0.2.0");
        // Facts not compared (the limits) change nothing.
        new["limits"]["cap_ipc_lock"] = json!(false);
        let EnvironmentDiff::Compared(changes) = diff(&base, &new) else {
            panic!()
        };
        let keys: Vec<&str> = changes.iter().map(|c| c.key).collect();
        assert_eq!(
            keys,
            [
                "rtlat_version",
                "kernel.release",
                "kernel.cmdline",
                "governors",
                "isolation.rcu_nocbs"
            ]
        );
        assert_eq!(changes[3].base, json!("performance"));
        assert_eq!(changes[3].new, json!("2: performance, 3: powersave"));
        assert_eq!(changes[4].base, Value::Null);
        let lines = diff(&base, &new).lines();
        assert_eq!(lines[0], "environment differs (BASE -> NEW):");
        assert_eq!(lines[2], "  kernel.release       6.1.0-rt -> 6.6.0");
        assert_eq!(lines[5], "  isolation.rcu_nocbs  - -> 2-3");
    }

    #[test]
    fn hostile_facts_are_escaped_one_change_one_line() {
        let base = environment();
        let mut new = environment();
        new["kernel"]["cmdline"] = json!("quiet\x1b]0;OWNED\x07\nok  fake");
        new["cpu"]["model"] = json!(["\u{202e}x"]);
        let lines = diff(&base, &new).lines();
        let text = lines.join("\n");
        assert!(!text.contains(['\x1b', '\x07', '\u{202e}']), "{text:?}");
        assert!(lines.iter().all(|l| !l.contains('\n')), "{lines:?}");
        assert!(
            text.contains(r"isolcpus=2-3 -> quiet\e]0;OWNED\x07\nok  fake"),
            "{text}"
        );
        assert!(text.contains(r#"Xeon -> ["\u{202e}x"]"#), "{text}");
    }

    #[test]
    fn a_missing_or_null_environment_is_not_compared() {
        let env = environment();
        let facts = Facts::of(Some(&env));
        assert_eq!(Facts::of(Some(&Value::Null)), None);
        assert_eq!(Facts::of(None), None);
        assert_eq!(
            EnvironmentDiff::of(None, None),
            EnvironmentDiff::NeitherRecorded
        );
        assert!(EnvironmentDiff::of(None, None).lines().is_empty());
        assert_eq!(
            EnvironmentDiff::of(facts.as_ref(), None).lines(),
            ["environment: only BASE records one (NEW has no \"environment\"): not compared"]
        );
        assert_eq!(
            EnvironmentDiff::of(None, facts.as_ref()),
            EnvironmentDiff::OnlyNew
        );
    }

    #[test]
    fn a_fact_missing_from_one_side_is_a_change_to_null() {
        let base = environment();
        let mut new = environment();
        new.as_object_mut().unwrap().remove("clocksource");
        new["kernel"].as_object_mut().unwrap().remove("hz");
        let EnvironmentDiff::Compared(changes) = diff(&base, &new) else {
            panic!()
        };
        assert_eq!(changes.len(), 2);
        assert_eq!(
            (changes[0].key, &changes[0].new),
            ("kernel.hz", &Value::Null)
        );
        assert_eq!(changes[1].key, "clocksource");
    }
}
