//! `rtlat compare --json`: the comparison as a JSON document, the text's
//! content for programs (a CI job that wants to say what changed):
//!
//! ```json
//! {"rtlat_version": "0.1.0",
//!  "base": {"file": "a.json", "threads": 2, "samples": 25000},
//!  "new": {"file": "b.json", "threads": 2, "samples": 25000},
//!  "noise_percent": 10.0, "only_base": [], "only_new": [],
//!  "environment_recorded": {"base": true, "new": true},
//!  "environment_changes": [{"key": "kernel.release", "base": "6.1.0", "new": "6.6.0"}],
//!  "method": {"confidence": 0.95, "correction": "bonferroni", "judged_rows": 9,
//!             "row_confidence": 0.99444, "z": 2.77,
//!             "percentiles": "order statistics, ranks n*p -+ z*sqrt(n*p*(1-p)*D)", ...},
//!  "headline": "Worse: thread 0 p99 +13.8%, all threads p99 +10.3%",
//!  "subjects": [{"name": "thread 0", "base_samples": 20000, "new_samples": 20000,
//!                "rows": [{"row": "p99", "base_us": 29.0, "new_us": 33.0,
//!                          "change_percent": 13.8, "verdict": "worse", "judged": true,
//!                          "base_interval_us": [29.0, 30.0],
//!                          "new_interval_us": [32.0, 34.0],
//!                          "difference_us": {"value": 4.0, "lower": 1.8, "upper": 5.0,
//!                                            "noise": 2.9},
//!                          "dispersion": {"base": {"d": 1.0, "d_used": 1.0,
//!                                                  "effective_n": 20000.0,
//!                                                  "blocks": null, "ladder_ns": null,
//!                                                  "how": "independent"}, "new": ...}}]}],
//!  "verdicts": {"min": "information only", "p99": "worse: thread 0 +13.8%"},
//!  "any_worse": true}
//! ```
//!
//! A row not judged has `"judged": false` and no intervals; min and max
//! carry `"reason"` (why they are information only); a max judged by
//! projections carries `"projection"`: `{"horizon_s", "base": {"value",
//! "lower", "upper"}, "new": ...}` in ns (an unbounded upper end is
//! `null`), and its `difference_us` is NEW's lower minus BASE's upper end
//! to NEW's upper minus BASE's lower end (above 0: no overlap).
//! A judged `floor` row carries `"floor"`: `{"window_s",
//! "base_segments_us", "new_segments_us", "ratio", "ratio_interval",
//! "sigma_log", "df", "t"}` (each tenth's floor, the ratio NEW/BASE of
//! the runs' floors and its interval; see `method.floor`). `method`
//! also says each run's `steal_share` (`null`: not recorded), the limit
//! `host_stalls_steal` and whether the rows of samples were left
//! unjudged for it (`host_stalls`: their verdict is "not judged (host
//! stalls)").
//! `environment_changes` is `null` unless both results record an
//! environment (`environment_recorded` says which do); a value without
//! data is `null`. A run read from the C cyclictest's JSON has a
//! `"resolution"` beside its `"samples"`: how its percentiles were made
//! (from its `-h` histogram, to the whole µs).

use std::io::{self, Write};

use rtlat_results::compare::{
    CompareDocument, DifferenceDto, FactChangeDto, FloorDto, MethodDto, ProjectionDto, Recorded,
    RowDto, RowVerdicts, RunDto, Sides, SpreadDto, SubjectDto,
};

use super::environment::EnvironmentDiff;
use super::figures::ROWS;
use super::input::RunFile;
use super::judge::{
    CONFIDENCE, CORRECTION, Floors, HOST_STALLS_STEAL, Judgement, MIN_BLOCKS, Maxima, Side, Spread,
    percent,
};
use super::render::{Compared, Comparison};
use rtlat_stats::floor::{Floor, FloorChange};

/// Writes `c` as JSON, pretty-printed and ended by a newline.
pub fn write_json(w: &mut dyn Write, c: &Comparison<'_>) -> io::Result<()> {
    let doc = CompareDocument {
        rtlat_version: env!("CARGO_PKG_VERSION"),
        base: run_dto(c.base),
        new: run_dto(c.new),
        noise_percent: c.rule.percent,
        only_base: &c.only_base,
        only_new: &c.only_new,
        environment_recorded: Recorded {
            base: c.base.environment.is_some(),
            new: c.new.environment.is_some(),
        },
        environment_changes: match &c.environment {
            EnvironmentDiff::Compared(changes) => Some(
                changes
                    .iter()
                    .map(|change| FactChangeDto {
                        key: change.key,
                        base: &change.base,
                        new: &change.new,
                    })
                    .collect(),
            ),
            _ => None,
        },
        method: MethodDto {
            confidence: CONFIDENCE,
            correction: CORRECTION,
            judged_rows: c.family.rows,
            row_confidence: c.family.per_row,
            z: c.family.z,
            percentiles: "order statistics: ranks n*p -+ z*sqrt(n*p*(1-p)*D), values read \
                          conservatively from the distribution's buckets; D the dispersion of \
                          the count at or above the ladder step nearest the tail, over the \
                          blocks at every scale, or 10 times its dispersion over the run's \
                          tenths when larger (1 without blocks)",
            min_blocks: MIN_BLOCKS,
            maxima: "information only, unless both runs' blocks are projected: then the \
                     projected maximum over the first horizon, worse when the intervals do \
                     not overlap",
            threshold: "max(noise_percent % of BASE, 2 buckets); the floor's: noise_percent % \
                        of BASE",
            floor: "each tenth of a run: the 10th percentile of its windows' maxima (the \
                    blocks); the run's floor their geometric mean; the ratio NEW/BASE and \
                    its interval exp(d -+ t*s*sqrt(2)), d the difference of the tenths' mean \
                    logs, s their pooled standard deviation, t Student's at row_confidence",
            host_stalls_steal: HOST_STALLS_STEAL,
            steal_share: Sides {
                base: c.base.steal_share,
                new: c.new.steal_share,
            },
            host_stalls: c.subjects.iter().any(|s| s.ctx.stalls.is_some()),
        },
        headline: c.headline(),
        subjects: c.subjects.iter().map(subject_dto).collect(),
        verdicts: RowVerdicts(
            ROWS.iter()
                .map(|&row| (row.name(), c.verdict(row)))
                .collect(),
        ),
        any_worse: c.any_worse(),
    };
    let mut w = io::BufWriter::new(w);
    serde_json::to_writer_pretty(&mut w, &doc)?;
    w.write_all(b"\n")?;
    w.flush()
}

fn run_dto(run: &RunFile) -> RunDto<'_> {
    RunDto {
        file: &run.label,
        threads: run.threads.len(),
        samples: run.all.samples,
        resolution: run.resolution,
    }
}

fn subject_dto<'a>(s: &'a Compared<'a>) -> SubjectDto<'a> {
    let us = |ns: Option<i64>| ns.map(|ns| ns as f64 / 1000.0);
    SubjectDto {
        name: &s.name,
        base_samples: s.base.samples,
        new_samples: s.new.samples,
        rows: ROWS
            .iter()
            .zip(&s.judgements)
            .map(|(&row, j)| {
                let (base, new) = s.values(row);
                let projection = match (&s.ctx.maxima, row) {
                    (
                        Maxima::Projected {
                            horizon_s,
                            base,
                            new,
                        },
                        super::figures::Row::Max,
                    ) if j.difference.is_some() => Some(ProjectionDto {
                        horizon_s: *horizon_s,
                        base: *base,
                        new: *new,
                    }),
                    _ => None,
                };
                RowDto {
                    row: row.name(),
                    base_us: us(base),
                    new_us: us(new),
                    change_percent: base
                        .zip(new)
                        .and_then(|(b, n)| percent(b, n))
                        .map(|p| (p * 10.0).round() / 10.0),
                    verdict: j.change.describe(),
                    judged: j.change.judged(),
                    base_interval_us: j.sides.map(|(b, _)| interval_us(&b)),
                    new_interval_us: j.sides.map(|(_, n)| interval_us(&n)),
                    difference_us: difference(j),
                    dispersion: j.sides.map(|(b, n)| Sides {
                        base: spread(&b),
                        new: spread(&n),
                    }),
                    projection,
                    floor: j.floor.as_ref().and_then(|c| floor_dto(&s.ctx.floors, c)),
                    reason: j.reason.clone(),
                }
            })
            .collect(),
    }
}

fn interval_us(side: &Side) -> [f64; 2] {
    [side.lower as f64 / 1000.0, side.upper as f64 / 1000.0]
}

/// µs rounded to the ns; `None` for an unbounded end.
fn finite_us(ns: f64) -> Option<f64> {
    ns.is_finite().then(|| (ns).round() / 1000.0)
}

fn difference(j: &Judgement) -> Option<DifferenceDto> {
    j.difference.map(|d| DifferenceDto {
        value: finite_us(d.value),
        lower: finite_us(d.lower),
        upper: finite_us(d.upper),
        noise: finite_us(d.tolerance),
    })
}

fn spread(side: &Side) -> SpreadDto {
    let (how, blocks, ladder_ns, raw) = match side.spread {
        Spread::Independent => ("independent", None, None, None),
        Spread::Measured {
            blocks,
            ladder_ns,
            raw,
        } => ("measured", Some(blocks), Some(ladder_ns), Some(raw)),
        Spread::Predicted {
            segments,
            ladder_ns,
            raw,
        } => ("predicted", Some(segments), Some(ladder_ns), Some(raw)),
        Spread::NoStep { blocks } => ("no_step", Some(blocks), None, None),
        Spread::TooFewBlocks { blocks } => ("too_few_blocks", Some(blocks), None, None),
    };
    SpreadDto {
        d: side.spread.dispersion().unwrap_or(f64::NAN),
        d_used: side.dispersion,
        effective_n: side.effective_n,
        how,
        blocks,
        ladder_ns,
        raw,
    }
}

fn floor_dto(floors: &Floors, change: &FloorChange) -> Option<FloorDto> {
    let Floors::Both { base, new } = floors else {
        return None;
    };
    let us = |f: &Floor| f.segments_ns.iter().map(|&ns| ns as f64 / 1000.0).collect();
    Some(FloorDto {
        window_s: base.window_ns as f64 / 1e9,
        base_segments_us: us(base),
        new_segments_us: us(new),
        ratio: change.ratio,
        ratio_interval: [change.lower, change.upper],
        sigma_log: change.sigma,
        df: change.df,
        t: change.t,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::input::parse;
    use crate::compare::judge::NoiseRule;
    use crate::compare::render::compare;
    use serde_json::Value;

    const BASE: &str = include_str!("testdata/base.json");
    const NEW: &str = include_str!("testdata/new.json");

    fn json_of(base: &str, new: &str) -> Value {
        let (base, new) = (
            parse("base.json", base).unwrap(),
            parse("new.json", new).unwrap(),
        );
        let c = compare(&base, &new, NoiseRule { percent: 10.0 });
        let mut out = Vec::new();
        write_json(&mut out, &c).unwrap();
        serde_json::from_slice(&out).unwrap()
    }

    /// `text` with an `"environment"` whose kernel release is `release`.
    fn with_environment(text: &str, release: &str) -> String {
        let mut doc: Value = serde_json::from_str(text).unwrap();
        doc["environment"] = serde_json::json!({
            "rtlat_version": "0.1.0",
            "kernel": {"release": release, "cmdline": "quiet"},
        });
        doc.to_string()
    }

    /// `text` whose verdict records the hypervisor's steal as `share`.
    fn with_steal(text: &str, share: f64) -> String {
        let mut doc: Value = serde_json::from_str(text).unwrap();
        doc["verdict"] = serde_json::json!({"level": "trustworthy", "steal_share": share});
        doc.to_string()
    }

    /// The comparison of `base` and `new` (texts) as JSON text.
    fn text_of(base: &str, new: &str) -> String {
        let (base, new) = (
            parse("base.json", base).unwrap(),
            parse("new.json", new).unwrap(),
        );
        let c = compare(&base, &new, NoiseRule { percent: 10.0 });
        let mut out = Vec::new();
        write_json(&mut out, &c).unwrap();
        String::from_utf8(out).unwrap()
    }

    /// Its keys are pinned (`report::schema`); it has no version of its
    /// own, so a change of them fails until it is given one. No one
    /// comparison writes every key, so three are taken together: the
    /// fixtures with environments (their changes); two runs with 40 s of
    /// blocks and a recorded steal below the limit (floor rows, projected
    /// maxima, measured dispersions, each run's steal share, a thread
    /// only NEW has); a C cyclictest's histogram of two threads against
    /// an rtlat result of one (`resolution`, a thread only BASE has).
    #[test]
    fn the_keys_of_the_document_are_pinned() {
        use crate::compare::fixtures::{C_WITH_HISTOGRAM, Thread, document, projectable};
        let environments = text_of(
            &with_environment(BASE, "6.1.0"),
            &with_environment(NEW, "6.6.0"),
        );
        let run = |threads: &[Thread], steal| with_steal(&document(threads, true), steal);
        let (one, two) = (
            [projectable(40_000)],
            [projectable(80_000), projectable(80_000)],
        );
        let blocks = text_of(&run(&one, 0.001), &run(&two, 0.002));
        let v: Value = serde_json::from_str(&blocks).unwrap();
        let rows = &v["subjects"][0]["rows"];
        let row = |name: &str| {
            rows.as_array()
                .unwrap()
                .iter()
                .find(|r| r["row"] == name)
                .unwrap_or_else(|| panic!("no row {name}: {rows}"))
        };
        // Each optional part is there, so its keys are pinned.
        assert!(row("floor")["floor"].is_object(), "{}", row("floor"));
        assert!(row("max")["projection"].is_object(), "{}", row("max"));
        assert_eq!(row("p99.9")["dispersion"]["base"]["how"], "measured");
        assert_eq!(v["method"]["steal_share"]["new"], 0.002);
        assert_eq!(v["method"]["host_stalls"], false);
        assert_eq!(v["only_new"], serde_json::json!([1]));
        let c_histogram = text_of(C_WITH_HISTOGRAM, &document(&one, false));
        let c: Value = serde_json::from_str(&c_histogram).unwrap();
        assert_eq!(
            c["base"]["resolution"],
            crate::compare::input::FROM_C_HISTOGRAM
        );
        assert_eq!(c["only_base"], serde_json::json!([1]));
        crate::report::schema::check_unversioned(
            "compare",
            &[&environments, &blocks, &c_histogram],
        );
    }

    #[test]
    fn the_figures_and_verdicts_of_the_text() {
        let v = json_of(BASE, NEW);
        assert_eq!(v["base"]["file"], "base.json");
        assert_eq!(v["new"]["samples"], 25000);
        assert_eq!(v["noise_percent"], 10.0);
        let thread0 = &v["subjects"][0];
        assert_eq!(thread0["name"], "thread 0");
        let p99 = &thread0["rows"][2];
        assert_eq!(p99["row"], "p99");
        assert_eq!(p99["base_us"], 29.0);
        assert_eq!(p99["new_us"], 33.0);
        assert_eq!(p99["change_percent"], 13.8);
        // Within noise now: the fixtures' p99 sits at the edge of a gap
        // in their distributions (29 us, then 256 us), so its interval
        // reaches across it.
        assert_eq!(p99["verdict"], "within noise");
        assert_eq!(p99["judged"], true);
        assert_eq!(p99["base_interval_us"], serde_json::json!([29.0, 257.0]));
        assert_eq!(p99["dispersion"]["base"]["how"], "independent");
        assert_eq!(p99["dispersion"]["base"]["d"], 1.0);
        assert_eq!(p99["dispersion"]["base"]["effective_n"], 20000.0);
        let floor = &thread0["rows"][4];
        assert_eq!(floor["row"], "floor");
        assert_eq!(floor["verdict"], "no data");
        assert_eq!(floor["judged"], false);
        assert_eq!(floor["base_us"], Value::Null);
        assert_eq!(floor["reason"], "no blocks, so no windows");
        let max = &thread0["rows"][5];
        assert_eq!(max["verdict"], "information only");
        assert_eq!(max["judged"], false);
        assert_eq!(max["difference_us"], Value::Null);
        assert_eq!(
            max["reason"],
            "one sample each, not a statistic; no blocks to project from"
        );
        assert_eq!(v["subjects"][2]["name"], "all threads");
        assert_eq!(v["verdicts"]["p99"], "within noise");
        assert_eq!(v["verdicts"]["max"], "information only");
        assert_eq!(v["any_worse"], false);
        assert_eq!(v["method"]["correction"], "bonferroni");
        assert_eq!(v["method"]["confidence"], 0.95);
        assert_eq!(v["method"]["judged_rows"], 8);
        assert!(
            v["headline"]
                .as_str()
                .unwrap()
                .starts_with("No change beyond noise")
        );
        // Neither fixture records an environment.
        assert_eq!(v["environment_changes"], Value::Null);
        assert_eq!(
            v["environment_recorded"],
            serde_json::json!({"base": false, "new": false})
        );
    }

    #[test]
    fn a_change_carries_both_intervals_the_difference_and_the_dispersion() {
        use crate::compare::fixtures::{document, thread};
        let even = |late| document(&[thread(late, |_| 10)], true);
        let v = json_of(&even(40_000), &even(80_000));
        let p999 = &v["subjects"][0]["rows"][3];
        assert_eq!(p999["verdict"], "worse", "{p999}");
        assert_eq!(p999["base_us"], 45.0);
        assert_eq!(p999["new_us"], 85.0);
        let [lower, upper] = [0, 1].map(|i| p999["new_interval_us"][i].as_f64().unwrap());
        assert!(lower <= 85.0 && 85.0 <= upper, "{p999}");
        let d = &p999["difference_us"];
        assert_eq!(d["value"], 40.0);
        assert!(d["lower"].as_f64().unwrap() > 0.0, "{d}");
        assert_eq!(d["noise"], 4.5);
        let spread = &p999["dispersion"]["base"];
        assert_eq!(spread["how"], "measured");
        assert_eq!(spread["blocks"], 100);
        // 50 us has no sample below 46 us: the nearest step inside is 20 us.
        assert_eq!(spread["ladder_ns"], 20_000);
        assert_eq!(spread["d"], 1.0);
        assert_eq!(v["any_worse"], true);
        // p50, p99 and p99.9 of thread 0 and of all threads, and both
        // floors: each row at 1 - 0.05/8.
        assert_eq!(v["method"]["judged_rows"], 8);
        let z = v["method"]["z"].as_f64().unwrap();
        assert!((z - 2.734).abs() < 1e-3, "{z}");
    }

    #[test]
    fn environment_changes_name_the_key_and_both_values() {
        let v = json_of(
            &with_environment(BASE, "6.1.0-rt"),
            &with_environment(NEW, "6.6.0"),
        );
        assert_eq!(
            v["environment_changes"],
            serde_json::json!([{"key": "kernel.release", "base": "6.1.0-rt", "new": "6.6.0"}])
        );
        let only_new = json_of(BASE, &with_environment(NEW, "6.6.0"));
        assert_eq!(only_new["environment_changes"], Value::Null);
        assert_eq!(only_new["environment_recorded"]["new"], true);
    }
}
