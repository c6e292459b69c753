//! The schema of rtlat's documents pinned, for the tests: every key path
//! of a fully populated document with the JSON types its values take,
//! in the order written, against a golden list kept per tool and per
//! `file_version` (`schema/<tool>.v<file_version>.keys`; a document
//! without a version of its schema, `schema/<tool>.unversioned.keys`).
//!
//! A key added, removed, renamed, moved or given another type fails the
//! check unless the document's `file_version` changes with it: a new
//! version has a list of its own, written by the check when it does not
//! exist yet (`RTLAT_SCHEMA_WRITE=1`); an existing list is never
//! rewritten.
//!
//! Paths: `a.b` for key `b` in object `a`; `a.*` for any key of an object
//! whose keys are numbers (the `"thread"` objects, `"histogram"`); `a[]`
//! for the elements of an array.

use std::fmt;
use std::path::PathBuf;

use serde::Deserializer;
use serde::de::{DeserializeSeed, MapAccess, SeqAccess, Visitor};

/// Each key path of the document `text` with the types its values take
/// (`null`, `bool`, `number`, `string`, `object`, `array`, several joined
/// by `|`), one `path: types` line each, in the order first written.
pub fn key_paths(text: &str) -> Vec<String> {
    key_paths_of(&[text])
}

/// [`key_paths`] of several documents of one kind taken together: the
/// paths of the first in its order, then those only a later one writes
/// (a document can hold only one of two alternatives: a projection or
/// why there is none, a run read from rtlat or from C's histogram).
pub fn key_paths_of(texts: &[&str]) -> Vec<String> {
    let mut paths = Paths::default();
    for text in texts {
        let mut reader = serde_json::Deserializer::from_str(text);
        Walk {
            path: String::new(),
            paths: &mut paths,
        }
        .deserialize(&mut reader)
        .expect("valid JSON");
    }
    paths
        .0
        .into_iter()
        .map(|(path, types)| format!("{path}: {}", types.join("|")))
        .collect()
}

/// The paths seen, in order, each with its types.
#[derive(Default)]
struct Paths(Vec<(String, Vec<&'static str>)>);

impl Paths {
    fn record(&mut self, path: &str, kind: &'static str) {
        if path.is_empty() {
            return;
        }
        match self.0.iter_mut().find(|(p, _)| p == path) {
            Some((_, types)) if types.contains(&kind) => {}
            Some((_, types)) => {
                types.push(kind);
                types.sort_unstable();
            }
            None => self.0.push((path.to_string(), vec![kind])),
        }
    }
}

/// Reads one value at `path`, recording it and what it holds.
struct Walk<'p> {
    path: String,
    paths: &'p mut Paths,
}

impl<'de> DeserializeSeed<'de> for Walk<'_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl Walk<'_> {
    fn leaf<E>(self, kind: &'static str) -> Result<(), E> {
        self.paths.record(&self.path, kind);
        Ok(())
    }
}

impl<'de> Visitor<'de> for Walk<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_unit<E>(self) -> Result<(), E> {
        self.leaf("null")
    }

    fn visit_bool<E>(self, _: bool) -> Result<(), E> {
        self.leaf("bool")
    }

    fn visit_i64<E>(self, _: i64) -> Result<(), E> {
        self.leaf("number")
    }

    fn visit_u64<E>(self, _: u64) -> Result<(), E> {
        self.leaf("number")
    }

    fn visit_f64<E>(self, _: f64) -> Result<(), E> {
        self.leaf("number")
    }

    fn visit_str<E>(self, _: &str) -> Result<(), E> {
        self.leaf("string")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        self.paths.record(&self.path, "array");
        let element = format!("{}[]", self.path);
        while seq
            .next_element_seed(Walk {
                path: element.clone(),
                paths: &mut *self.paths,
            })?
            .is_some()
        {}
        Ok(())
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        self.paths.record(&self.path, "object");
        while let Some(key) = map.next_key::<String>()? {
            // Numbered keys (threads, histogram buckets) are one path.
            let key = if key.parse::<i64>().is_ok() {
                "*"
            } else {
                &key
            };
            let path = if self.path.is_empty() {
                key.to_string()
            } else {
                format!("{}.{key}", self.path)
            };
            map.next_value_seed(Walk {
                path,
                paths: &mut *self.paths,
            })?;
        }
        Ok(())
    }
}

/// Checks `texts`, documents of `tool` that together populate every key
/// (one alone, when it can), against the golden list of their
/// `file_version`; panics saying what changed and what to do.
pub fn check(tool: &str, texts: &[&str]) {
    let versions: Vec<u64> = texts
        .iter()
        .map(|text| {
            let doc: serde_json::Value = serde_json::from_str(text).expect("valid JSON");
            doc["file_version"]
                .as_u64()
                .expect("the document has a file_version")
        })
        .collect();
    let version = versions[0];
    assert!(
        versions.iter().all(|&v| v == version),
        "documents of several versions: {versions:?}"
    );
    check_against(tool, &format!("v{version}"), "its file_version", texts);
}

/// [`check`] for documents without a version of their schema (`rtlat
/// audit --json`, `rtlat compare --json`: only `rtlat_version`): any
/// change of their keys fails until they are given one.
pub fn check_unversioned(tool: &str, texts: &[&str]) {
    check_against(tool, "unversioned", "a version (it has none)", texts);
}

fn check_against(tool: &str, label: &str, version: &str, texts: &[&str]) {
    let written = key_paths_of(texts);
    let file = golden(tool, label);
    let Ok(golden) = std::fs::read_to_string(&file) else {
        if std::env::var_os("RTLAT_SCHEMA_WRITE").is_some() {
            std::fs::write(&file, written.join("\n") + "\n").expect("writing the key list");
            return;
        }
        panic!(
            "no key list for the {tool} document {label} ({}): run the test with \
             RTLAT_SCHEMA_WRITE=1 to write it, and commit it",
            file.display()
        );
    };
    let golden: Vec<&str> = golden.lines().collect();
    if golden != written {
        let gone: Vec<&&str> = golden
            .iter()
            .filter(|g| !written.iter().any(|w| w == **g))
            .collect();
        let new: Vec<&String> = written
            .iter()
            .filter(|w| !golden.contains(&w.as_str()))
            .collect();
        panic!(
            "the keys of the {tool} document changed but not {version} ({label}): change \
             the version with them (a new version gets a key list of its own) or undo the \
             change.\nno longer written: {gone:#?}\nnew: {new:#?}\n(neither: the order \
             changed; compare with {})",
            file.display()
        );
    }
}

fn golden(tool: &str, label: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("src/report/schema")
        .join(format!("{tool}.{label}.keys"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_and_types_of_a_small_document() {
        let doc = r#"{"b": 1, "thread": {"0": {"x": null}, "1": {"x": 2.5}},
            "list": [{"k": "v"}, {"k": true}], "a": {}}"#;
        assert_eq!(
            key_paths(doc),
            [
                "b: number",
                "thread: object",
                "thread.*: object",
                "thread.*.x: null|number",
                "list: array",
                "list[]: object",
                "list[].k: bool|string",
                "a: object",
            ]
        );
    }

    #[test]
    fn several_documents_add_the_paths_and_types_only_later_ones_write() {
        let first = r#"{"a": 1, "p": {"outcome": "projected", "levels": []}}"#;
        let second = r#"{"a": null, "p": {"outcome": "refused", "id": "x"}, "z": true}"#;
        assert_eq!(
            key_paths_of(&[first, second]),
            [
                "a: null|number",
                "p: object",
                "p.outcome: string",
                "p.levels: array",
                "p.id: string",
                "z: bool",
            ]
        );
        assert_eq!(key_paths_of(&[first]), key_paths(first));
    }

    /// A thread that measured with every key signaltest writes: `-h`,
    /// disturbances, a time for its maximum.
    fn full_thread() -> rtlat_core::ThreadReport {
        use crate::report::test_support::ThreadFixture;
        use rtlat_core::Resolution;
        let mut t = ThreadFixture::new(0)
            .tid(4242)
            .pinned(1, 0)
            .samples(&[3, 4, 9, 120], Resolution::Micros, 0, Some(100))
            .distribution(&[3_000, 4_000, 9_000, 120_000])
            .build();
        t.disturbances = Some(rtlat_core::Disturbances {
            involuntary_switches: 1,
            migrations: Some(0),
            minor_faults: 2,
            major_faults: 0,
        });
        t
    }

    /// Checks `tool`'s documents, written by `write`, of a run of
    /// `cmdline` beside the staged `load`, judged from `judged`: audited
    /// (CPU 1, without cpufreq, and CPU 2, with a governor and idle
    /// states) with a quiet system's counters (the hypervisor's steal
    /// counted), which write `environment`, `audit` and `steal_share`;
    /// and neither, which leaves them `null`.
    fn check_audited_and_not(
        tool: &str,
        cmdline: &str,
        judged: &rtlat_core::RunReport,
        load: (
            &rtlat_core::load::LoadSchedule,
            &rtlat_core::load::LoadSummary,
        ),
        write: impl Fn(
            &mut Vec<u8>,
            &crate::report::RunMeta,
            crate::report::json::Extras,
        ) -> std::io::Result<()>,
    ) {
        use crate::report::test_support::{meta, render};
        use crate::report::verdict::tests::{fixture_audit, quiet_system};
        let load = crate::report::load::LoadResults {
            schedule: load.0,
            summary: load.1,
            run_time: Some(std::time::Duration::from_millis(1500)),
        };
        let document = |m: &crate::report::RunMeta, system| {
            let verdict = crate::report::verdict::judge(judged, m, system);
            let extras = crate::report::json::Extras {
                load: Some(&load),
                verdict: &verdict,
                explain: None,
                timeline: None,
            };
            render(|w| write(w, m, extras))
        };
        let mut audited = meta(cmdline);
        audited.audit = Some(fixture_audit("tuned-rt", vec![1, 2], 95));
        check(
            tool,
            &[
                &document(&audited, Some(&quiet_system())),
                &document(&meta(cmdline), None),
            ],
        );
    }

    /// The phases of a staged load of two phases (the second cut short)
    /// of [`full_thread`], each with its distribution, and the load.
    fn staged_load() -> (
        Vec<rtlat_core::PhaseReport>,
        rtlat_core::load::LoadSchedule,
        rtlat_core::load::LoadSummary,
    ) {
        let (mut report, schedule, summary) = crate::report::json::tests::staged_load();
        let mut phases = std::mem::take(&mut report.threads[0].phases);
        for phase in &mut phases {
            phase.distribution = full_thread().distribution;
        }
        (phases, schedule, summary)
    }

    #[test]
    fn the_keys_of_oslats_document_change_only_with_its_version() {
        use crate::oslat::output::{Summary, members, tests::figures};
        use crate::report::test_support::run;
        let (_, schedule, summary) = staged_load();
        let threads = [figures(1, vec![10, 0, 2], 1, 3)];
        let oslat = Summary {
            threads: &threads,
            bias: 0,
            scale: rtlat_core::oslat::Scale::DEFAULT,
            rt_tests: rtlat_core::RtTests::V2_4,
            bucket_size: 3,
            zero_omit: false,
        };
        let report = run(rtlat_core::Resolution::Micros, vec![full_thread()]);
        check_audited_and_not(
            "oslat",
            "oslat -D 1 --json=x.json",
            &report,
            (&schedule, &summary),
            |w, m, extras| {
                let members = members(&oslat, extras.load.map(crate::report::json::load_dto));
                crate::report::json::write_envelope(w, m, &members, extras.verdict)
            },
        );
    }

    #[test]
    fn the_keys_of_signaltests_document_change_only_with_its_version() {
        use crate::report::json::Extras;
        use crate::report::test_support::{run, timeline};
        let (phases, schedule, summary) = staged_load();
        let mut thread = full_thread();
        thread.phases = phases;
        let report = run(rtlat_core::Resolution::Micros, vec![thread]);
        check_audited_and_not(
            "signaltest",
            "signaltest -h 100",
            &report,
            (&schedule, &summary),
            |w, m, extras| {
                let extras = Extras {
                    timeline: Some(timeline()),
                    ..extras
                };
                crate::signaltest::output::write_json(w, &report, m, &extras)
            },
        );
    }

    /// The documents of the pass/fail tools, with an audit and without.
    fn pass_fail_documents<M: serde::Serialize>(cmdline: &str, members: &M) -> [String; 2] {
        use crate::report::test_support::{meta, render};
        use crate::report::verdict::tests::fixture_audit;
        let mut audited = meta(cmdline);
        audited.audit = Some(fixture_audit("tuned-rt", vec![1, 2], 95));
        [
            render(|w| crate::report::json::write_unjudged(w, &audited, members)),
            render(|w| crate::report::json::write_unjudged(w, &meta(cmdline), members)),
        ]
    }

    #[test]
    fn the_keys_of_rt_migrate_tests_document_change_only_with_its_version() {
        use rtlat_core::migrate::TaskInterval;
        let row = vec![TaskInterval::default(); 2];
        let members = crate::migrate::output::members(&[row], &[2, 3]);
        let [a, b] = pass_fail_documents("rt-migrate-test -l 1", &members);
        check("rt-migrate-test", &[&a, &b]);
    }

    #[test]
    fn the_keys_of_ssdds_document_change_only_with_its_version() {
        let members = rtlat_results::passfail::SsddMembers {};
        let [a, b] = pass_fail_documents("ssdd -f 1", &members);
        check("ssdd", &[&a, &b]);
    }

    #[test]
    fn the_keys_of_pi_stress_document_change_only_with_its_version() {
        use crate::report::test_support::{meta, render};
        use crate::report::verdict::tests::fixture_audit;
        use rtlat_results::pi_stress::PiStressMembers;
        let members = PiStressMembers {
            inversion: 1001,
            groups: 2,
            stuck_groups: vec![1],
        };
        let mut audited = meta("pi_stress -q --json=-");
        audited.audit = Some(fixture_audit("tuned-rt", vec![1, 2], 95));
        let plain = meta("pi_stress -q --json=-");
        check(
            "pi_stress",
            &[
                &render(|w| crate::pi_stress::output::write_json(w, &audited, &members)),
                &render(|w| crate::pi_stress::output::write_json(w, &plain, &members)),
            ],
        );
    }

    #[test]
    fn the_keys_of_cyclicdeadlines_document_change_only_with_its_version() {
        use crate::report::json::Extras;
        use crate::report::test_support::{run, timeline};
        let (_, schedule, summary) = staged_load();
        let report = run(rtlat_core::Resolution::Micros, vec![full_thread()]);
        check_audited_and_not(
            "cyclicdeadline",
            "cyclicdeadline -q",
            &report,
            (&schedule, &summary),
            |w, m, extras| {
                let extras = Extras {
                    timeline: Some(timeline()),
                    ..extras
                };
                crate::cyclicdeadline::output::write_json(w, &report, m, &extras)
            },
        );
    }

    #[test]
    fn the_keys_of_the_ipc_tools_document_change_only_with_its_version() {
        use crate::ipc::PairTool;
        use rtlat_core::EndReason;
        use rtlat_core::ipc::{PairReport, PairResult, SideResult};
        use rtlat_core::{Nanos, Resolution};
        let t = full_thread();
        let (phases, schedule, summary) = staged_load();
        let side = |id: i32| SideResult {
            id,
            policy: t.policy,
            priority: 80,
            cpu: Some(1),
            compat: t.compat,
            precise: t.precise,
            error: None,
            disturbances: t.disturbances,
            ended: true,
        };
        let report = PairReport {
            resolution: Resolution::Micros,
            end: EndReason::Stopped,
            pairs: vec![PairResult {
                index: 0,
                interval: Nanos::from_micros(1000),
                receiver: side(100),
                sender: side(101),
                timeouts: 2,
                histogram: t.histogram.clone(),
                distribution: t.distribution.clone(),
                phases,
            }],
            break_info: None,
        };
        let cpus = [(1, 0)];
        let receivers = crate::ipc::output::receivers_as_run_report(&report, &cpus);
        check_audited_and_not(
            "ipc",
            "pmqtest -h 100",
            &receivers,
            (&schedule, &summary),
            |w, m, extras| {
                crate::ipc::output::write_json(w, PairTool::Pmqtest, &report, &cpus, m, extras)
            },
        );
    }
}
