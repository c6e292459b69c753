//! What an evaluation keeps of each phase's result (`DIR/PHASE.json`, a
//! `rtlat cyclictest --json` document): its figures, its threads, its
//! verdict with the projection, its worst samples explained; and what
//! the phases say together (the causes of their worst samples, grouped).
//! `report.json` holds these; the answer and the page read them there.

use serde_json::{Value, json};

/// A phase's summary for `report.json`, from its result `document`:
/// samples, the all-threads percentiles, samples at or beyond the
/// deadline, a row per measuring thread, the verdict (projection
/// included) and the explained samples.
pub fn phase(document: &Value, deadline_us: Option<u32>) -> Value {
    let mut threads: Vec<Value> = document["thread"]
        .as_object()
        .into_iter()
        .flatten()
        .map(|(index, t)| {
            let p = &t["percentiles"];
            json!({
                "thread": index.parse::<u64>().ok(),
                "cpu": t["cpu"],
                "samples": t["cycles"],
                "min_us": t["min_ns"].as_f64().map(|ns| ns / 1000.0),
                "avg_us": t["mean_ns"].as_f64().map(|ns| ns / 1000.0),
                "p99_us": p["p99"],
                "p99.99_us": p["p99.99"],
                "max_us": p["max"],
                "beyond_deadline": deadline_us.map(|d| beyond(&t["distribution"], d)),
            })
        })
        .collect();
    // The JSON object's keys are in text order (`10` before `2`).
    threads.sort_by_key(|t| t["thread"].as_u64());
    let samples: u64 = threads.iter().filter_map(|t| t["samples"].as_u64()).sum();
    let beyond_deadline = deadline_us.map(|_| {
        threads
            .iter()
            .filter_map(|t| t["beyond_deadline"].as_u64())
            .sum::<u64>()
    });
    json!({
        "samples": samples,
        "all_threads": document["all_threads"],
        "beyond_deadline": beyond_deadline,
        "threads": threads,
        "verdict": document["verdict"],
        "explain": document["explain"],
    })
}

/// The samples of a thread's `distribution` (1 µs buckets, each
/// `[from, to, count]`) at or beyond `deadline_us`: whole buckets from
/// the deadline on, so exact to the bucket's µs.
pub fn beyond(distribution: &Value, deadline_us: u32) -> u64 {
    distribution["buckets"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|b| {
            b[0].as_f64()
                .is_some_and(|from| from >= f64::from(deadline_us))
        })
        .filter_map(|b| b[2].as_u64())
        .sum()
}

/// The projection of a phase (its verdict's `projection`) in at most 22
/// characters: the median maximum over the first horizon with its 95 %
/// interval (`1h 612 [540-800]`, µs), or why there is none.
pub fn projection_cell(projection: &Value) -> String {
    match projection["outcome"].as_str() {
        Some("projected") => {
            let Some(level) = projection["levels"].as_array().and_then(|l| l.first()) else {
                return "beyond its horizons".to_owned();
            };
            let us = |v: &Value| v.as_f64().map(|ns| format!("{:.0}", ns / 1000.0));
            let max = &level["max_ns"];
            format!(
                "{} {} [{}-{}]",
                horizon(level["horizon_s"].as_f64().unwrap_or(0.0)),
                us(&max["value"]).unwrap_or_default(),
                us(&max["lower"]).unwrap_or_default(),
                us(&max["upper"]).unwrap_or_else(|| "inf".to_owned())
            )
        }
        Some("refused") => match projection["id"].as_str() {
            Some("too_few_blocks") => "none: run longer".to_owned(),
            Some("trending") => "none: maxima rising".to_owned(),
            Some("heavy_tail") => "none: heavy tail".to_owned(),
            Some("poor_fit") => "none: poor fit".to_owned(),
            Some("horizon_too_far") => "none: too short".to_owned(),
            _ => "none: no fit".to_owned(),
        },
        _ => "none".to_owned(),
    }
}

/// A horizon in seconds as `1h`, `24h`, `10m`, `30s`.
fn horizon(seconds: f64) -> String {
    if seconds >= 3600.0 && seconds % 3600.0 == 0.0 {
        format!("{:.0}h", seconds / 3600.0)
    } else if seconds >= 60.0 && seconds % 60.0 == 0.0 {
        format!("{:.0}m", seconds / 60.0)
    } else {
        format!("{seconds:.0}s")
    }
}

/// One cause of worst samples, across phases: the stage of the latency
/// it took most of, and who (`kind`, `name`).
#[derive(Clone, Debug, PartialEq)]
pub struct Cause {
    pub stage: String,
    pub kind: String,
    pub name: String,
    /// The explained samples it was the largest cause of.
    pub samples: u64,
    /// The phases those samples came from, in the evaluation's order.
    pub phases: Vec<String>,
    /// The most it took of one sample, ns.
    pub max_ns: f64,
}

/// The causes of the explained samples of every phase (`phases`: name
/// and summary), grouped: each sample counts once, for the largest cause
/// of its largest stage; most samples first, then the most time.
pub fn causes<'a>(phases: impl IntoIterator<Item = (&'a str, &'a Value)>) -> Vec<Cause> {
    let mut causes: Vec<Cause> = Vec::new();
    for (phase, summary) in phases {
        for sample in summary["explain"].as_array().into_iter().flatten() {
            let Some(stage) = sample["components"].as_array().and_then(|stages| {
                stages.iter().max_by(|a, b| {
                    let ns = |s: &Value| s["ns"].as_f64().unwrap_or(0.0);
                    ns(a).total_cmp(&ns(b))
                })
            }) else {
                continue;
            };
            let Some(cause) = stage["causes"].as_array().and_then(|c| c.first()) else {
                continue;
            };
            let stage_name = stage["name"].as_str().unwrap_or("").to_owned();
            let kind = cause["kind"].as_str().unwrap_or("").to_owned();
            // A task's name without its number (`load-cpu-1`: `load-cpu`),
            // so that one load's workers are one cause.
            let name = cause["name"].as_str().unwrap_or("");
            let name = if kind == "task" {
                name.trim_end_matches(|c: char| c.is_ascii_digit() || c == '-' || c == '/')
            } else {
                name
            }
            .to_owned();
            let ns = cause["ns"].as_f64().unwrap_or(0.0);
            match causes
                .iter_mut()
                .find(|c| c.stage == stage_name && c.kind == kind && c.name == name)
            {
                Some(c) => {
                    c.samples += 1;
                    c.max_ns = c.max_ns.max(ns);
                    if !c.phases.iter().any(|p| p == phase) {
                        c.phases.push(phase.to_owned());
                    }
                }
                None => causes.push(Cause {
                    stage: stage_name,
                    kind,
                    name,
                    samples: 1,
                    phases: vec![phase.to_owned()],
                    max_ns: ns,
                }),
            }
        }
    }
    causes.sort_by(|a, b| {
        b.samples
            .cmp(&a.samples)
            .then(b.max_ns.total_cmp(&a.max_ns))
    });
    causes
}

impl Cause {
    pub fn to_json(&self) -> Value {
        json!({
            "stage": self.stage,
            "kind": self.kind,
            "name": self.name,
            "samples": self.samples,
            "phases": self.phases,
            "max_us": self.max_ns / 1000.0,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn samples_beyond_the_deadline_are_counted_from_its_bucket_on() {
        let d = json!({"buckets": [[98.0, 99.0, 5], [99.0, 100.0, 2], [100.0, 101.0, 3],
                                   [250.0, 251.0, 1]]});
        assert_eq!(beyond(&d, 100), 4);
        assert_eq!(beyond(&d, 99), 6);
        assert_eq!(beyond(&d, 300), 0);
        assert_eq!(beyond(&json!({}), 100), 0);
    }

    #[test]
    fn a_projection_is_its_first_horizon_with_its_interval_or_why_none() {
        let projected = json!({"outcome": "projected", "levels": [
            {"horizon_s": 3600.0, "max_ns": {"value": 612_400.0, "lower": 540_000.0,
             "upper": 800_100.0}}]});
        assert_eq!(projection_cell(&projected), "1h 612 [540-800]");
        let unbounded = json!({"outcome": "projected", "levels": [
            {"horizon_s": 86400.0, "max_ns": {"value": 1.0e6, "lower": 9.0e5, "upper": null}}]});
        assert_eq!(projection_cell(&unbounded), "24h 1000 [900-inf]");
        let refused = json!({"outcome": "refused", "id": "too_few_blocks"});
        assert_eq!(projection_cell(&refused), "none: run longer");
        for cell in [&projected, &unbounded, &refused].map(projection_cell) {
            assert!(cell.chars().count() <= 22, "{cell}");
        }
    }

    #[test]
    fn causes_are_grouped_across_phases_a_load_s_workers_as_one() {
        let sample = |stage: &str, kind: &str, name: &str, ns: f64| {
            json!({"components": [
                {"name": "handler_to_wakeup", "ns": 100.0, "causes": []},
                {"name": stage, "ns": ns, "causes": [{"kind": kind, "name": name, "ns": ns}]}]})
        };
        let idle = json!({"explain": [sample("irq_latency", "unattributed", "off", 9e3)]});
        let cpu = json!({"explain": [
            sample("thread_latency", "task", "load-cpu-0", 5e3),
            sample("thread_latency", "task", "load-cpu-1", 7e3),
            sample("irq_latency", "unattributed", "off", 2e4)]});
        let causes = causes([("idle", &idle), ("cpu", &cpu)]);
        assert_eq!(causes.len(), 2);
        assert_eq!(causes[0].name, "off");
        assert_eq!(causes[0].phases, ["idle", "cpu"]);
        assert_eq!((causes[0].samples, causes[0].max_ns), (2, 2e4));
        assert_eq!(causes[1].name, "load-cpu");
        assert_eq!((causes[1].samples, causes[1].phases.len()), (2, 1));
    }
}
