//! `DIR/report.html`: the evaluation as one self-contained page (no
//! network, no script, no external font or style; prints well; readable on
//! a phone). The plots are drawn by `rtlat plot` (the rtlat-plot binary,
//! kept out of this one) into `DIR/<phase>.<kind>.svg` and inlined here.

use std::fmt::Write as _;
use std::path::Path;

use serde_json::Value;

use crate::markup::escape as esc;

/// The page's style: one column, real tables, print without the colours.
const STYLE: &str = "\
body{font-family:sans-serif;max-width:60rem;margin:0 auto;padding:1rem;line-height:1.4;color:#111}
h1{font-size:1.6rem}h2{font-size:1.3rem;border-bottom:1px solid #ccc}h3{font-size:1.1rem}
div.scroll{overflow-x:auto}
pre{background:#f4f4f4;padding:.5rem;overflow-x:auto;white-space:pre-wrap}
table{border-collapse:collapse;margin:.5rem 0;display:block;overflow-x:auto}
th,td{border:1px solid #ccc;padding:.2rem .5rem;text-align:right}th{background:#eee}
td.text,th.text{text-align:left}
figure{margin:.5rem 0}figure svg{width:100%;height:auto;max-width:100%}
.bad{color:#a00}.warn{color:#a60}.ok{color:#070}
@media print{body{max-width:none;color:#000}pre{background:none;border:1px solid #999}
figure{break-inside:avoid}h2{break-after:avoid}}
";

/// An SVG file as an inline figure: its XML declaration and doctype left
/// out, labelled for screen readers; `None` when it cannot be read.
fn inline_svg(path: &Path, label: &str) -> Option<String> {
    let svg = std::fs::read_to_string(path).ok()?;
    let start = svg.find("<svg")?;
    let body = &svg[start..];
    let body = body.replacen(
        "<svg",
        &format!("<svg role=\"img\" aria-label=\"{}\"", esc(label)),
        1,
    );
    Some(format!(
        "<figure>{body}<figcaption>{}</figcaption></figure>\n",
        esc(label)
    ))
}

/// The page, from `report` (report.json's content, the answer in it);
/// `dir` holds the phases' plots.
pub fn page(report: &Value, dir: &Path) -> String {
    let mut h = String::new();
    let answer: Vec<&str> = report["answer"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    let _ = write!(
        h,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <title>rtlat evaluation</title><style>{STYLE}</style></head><body>\n\
         <h1>rtlat evaluation</h1>\n<section id=\"answer\"><h2>The answer</h2><pre>{}</pre>\n",
        esc(&answer.join("\n"))
    );
    let limits: Vec<&str> = report["means"]["limits"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    if !limits.is_empty() {
        h.push_str("<p>What this evaluation went without:</p><ul>\n");
        for limit in limits {
            let _ = writeln!(h, "<li class=\"warn\">{}</li>", esc(limit));
        }
        h.push_str("</ul>\n");
    }
    h.push_str("</section>\n");
    machine(&mut h, report);
    causes(&mut h, report);
    for phase in report["phases"].as_array().into_iter().flatten() {
        phase_section(&mut h, report, phase, dir);
    }
    compare_section(&mut h, &report["compare"]);
    method(&mut h, report);
    h.push_str("</body></html>\n");
    h
}

/// The machine: its environment, the audit's findings with their fixes,
/// the suggested command line.
fn machine(h: &mut String, report: &Value) {
    h.push_str("<section id=\"machine\"><h2>The machine</h2>\n");
    let env = &report["environment"];
    if env.is_object() {
        let kernel = &env["kernel"];
        let cpu = &env["cpu"];
        let rows = [
            (
                "Kernel",
                format!(
                    "{} ({})",
                    text(&kernel["release"]),
                    text(&kernel["preemption"])
                ),
            ),
            (
                "CPU",
                format!("{} x {}", text(&cpu["count"]), text(&cpu["model"])),
            ),
            ("Measured CPUs", list(&env["measured_cpus"])),
            (
                "Isolated CPUs",
                Some(text(&env["isolation"]["isolated"]))
                    .filter(|cpus| !cpus.is_empty())
                    .unwrap_or_else(|| "none".to_owned()),
            ),
            ("Clock source", text(&env["clocksource"])),
            (
                "Virtualization",
                if env["virtualization"]["hypervisor"] == true {
                    "under a hypervisor".to_owned()
                } else {
                    "none seen".to_owned()
                },
            ),
        ];
        h.push_str("<table><tbody>\n");
        for (what, value) in rows {
            let _ = writeln!(
                h,
                "<tr><th class=\"text\" scope=\"row\">{what}</th><td class=\"text\">{}</td></tr>",
                esc(&value)
            );
        }
        h.push_str("</tbody></table>\n");
    }
    let audit = &report["audit"];
    if audit.is_object() {
        h.push_str(
            "<h3>What the audit found</h3>\
             <table><thead><tr><th class=\"text\">Check</th><th class=\"text\">Status</th>\
             <th class=\"text\">Found</th><th class=\"text\">Fix</th></tr></thead><tbody>\n",
        );
        for check in audit["checks"].as_array().into_iter().flatten() {
            let status = check["status"].as_str().unwrap_or("");
            if status == "ok" || status == "info" {
                continue;
            }
            let class = if status == "bad" { "bad" } else { "warn" };
            let _ = writeln!(
                h,
                "<tr><td class=\"text\">{}</td><td class=\"text {class}\">{}</td>\
                 <td class=\"text\">{}: {}</td><td class=\"text\">{}</td></tr>",
                esc(check["id"].as_str().unwrap_or("")),
                esc(status),
                esc(check["fact"].as_str().unwrap_or("")),
                esc(check["why"].as_str().unwrap_or("")),
                esc(check["fix"].as_str().unwrap_or(""))
            );
        }
        h.push_str("</tbody></table>\n");
        if let Some(command) = audit["suggested_command"].as_str() {
            let _ = writeln!(
                h,
                "<p>Suggested command line:</p><pre>{}</pre>",
                esc(command)
            );
        }
    } else {
        h.push_str("<p>No audit was made.</p>\n");
    }
    h.push_str("</section>\n");
}

/// The causes of the worst samples, grouped across phases.
fn causes(h: &mut String, report: &Value) {
    let Some(causes) = report["causes"].as_array().filter(|c| !c.is_empty()) else {
        return;
    };
    h.push_str(
        "<section id=\"causes\"><h2>Why the worst samples were late</h2>\
         <p>Each explained sample counts once, for the largest cause of its largest stage.</p>\
         <table><thead><tr><th class=\"text\">Stage</th><th class=\"text\">Cause</th>\
         <th>Samples</th><th class=\"text\">Phases</th><th>Most of one sample, us</th></tr>\
         </thead><tbody>\n",
    );
    for c in causes {
        let _ = writeln!(
            h,
            "<tr><td class=\"text\">{}</td><td class=\"text\">{}: {}</td><td>{}</td>\
             <td class=\"text\">{}</td><td>{:.1}</td></tr>",
            esc(&text(&c["stage"])),
            esc(&text(&c["kind"])),
            esc(&text(&c["name"])),
            c["samples"],
            esc(&list(&c["phases"])),
            c["max_us"].as_f64().unwrap_or(0.0)
        );
    }
    h.push_str("</tbody></table></section>\n");
}

/// One phase: its plots, its threads, the samples beyond the deadline,
/// its projection, the verdict's reasons, the worst samples explained,
/// the exact command.
fn phase_section(h: &mut String, report: &Value, phase: &Value, dir: &Path) {
    let name = phase["name"].as_str().unwrap_or("");
    let _ = writeln!(
        h,
        "<section id=\"phase-{0}\"><h2>Phase {0} ({1} s)</h2>",
        esc(name),
        phase["seconds"]
    );
    if let Some(workload) = phase["workload"].as_str() {
        let _ = writeln!(
            h,
            "<p>The workload ({}): {}.</p>",
            esc(&text(&report["load_command"])),
            esc(workload)
        );
    }
    let chosen = phase["plotted_threads"].as_array().map(Vec::len);
    for (kind, what) in super::PLOTS {
        let svg = dir.join(format!("{name}.{kind}.svg"));
        // A long phase's timeline merges its 100 ms intervals.
        let what = match phase["timeline_interval_s"].as_f64() {
            Some(s) if kind == "timeline" && s > 0.15 => {
                format!("the maximum of each {s:.1} s (100 ms intervals merged)")
            }
            _ => what.to_owned(),
        };
        let label = match chosen {
            Some(n) if kind != "percentile" => format!(
                "Phase {name}: {what}, the {n} threads with the highest maxima of {} \
                 (every thread is in the table)",
                phase["threads"].as_array().map_or(0, Vec::len)
            ),
            _ => format!("Phase {name}: {what}"),
        };
        if let Some(figure) = inline_svg(&svg, &label) {
            h.push_str(&figure);
        }
    }
    if phase["threads"].is_array() {
        per_cpu_table(h, phase, report["deadline_us"].as_u64());
        projection(h, &phase["verdict"]["projection"]);
        verdict_list(h, &phase["verdict"]);
        explained(h, phase);
    } else {
        h.push_str("<p class=\"bad\">This phase left no result.</p>\n");
    }
    let _ = writeln!(
        h,
        "<h3>How it was measured</h3><pre>{}</pre></section>",
        esc(&phase["command"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .collect::<Vec<_>>()
            .join(" "))
    );
}

/// How the whole evaluation was made, to reproduce it.
fn method(h: &mut String, report: &Value) {
    let command: Vec<&str> = report["command"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    let durations: Vec<String> = report["phases"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|p| format!("{} {} s", text(&p["name"]), p["seconds"]))
        .collect();
    let _ = writeln!(
        h,
        "<section id=\"method\"><h2>How it was measured</h2>\
         <p>The command:</p><pre>{}</pre>\
         <p>rtlat {} audited the machine (<code>audit.json</code>), then ran each phase as the \
         command shown under it, one after the other: {}; {:.0} s in all. Each phase measured \
         as rtlat cyclictest does, a thread per measured CPU; its result is beside this page \
         (<code>PHASE.json</code>, <code>PHASE.hgrm</code>, <code>PHASE.stats.jsonl</code>), \
         with <code>report.json</code>, which holds everything this page shows.{}</p>\
         </section>",
        esc(&command.join(" ")),
        esc(report["rtlat_version"].as_str().unwrap_or("")),
        esc(&durations.join(", ")),
        report["elapsed_s"].as_f64().unwrap_or(0.0),
        if report["ended_at_once"] == true {
            " The evaluation was ended at once (a second Ctrl-C): the phase it came in is \
             not shown, and no phase after it ran."
        } else if report["cut_short"] == true {
            " The evaluation was cut short (Ctrl-C): the phases after the last one shown did \
             not run."
        } else {
            ""
        }
    );
}

/// A JSON value as text: a string as it is, anything else as JSON,
/// nothing for `null`.
fn text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

/// A JSON array as a comma-separated list.
fn list(v: &Value) -> String {
    v.as_array()
        .into_iter()
        .flatten()
        .map(text)
        .collect::<Vec<_>>()
        .join(", ")
}

/// Each measuring thread: its CPU, figures and samples beyond the
/// deadline; the worst first when there are many.
fn per_cpu_table(h: &mut String, phase: &Value, deadline_us: Option<u64>) {
    let mut threads: Vec<&Value> = phase["threads"].as_array().into_iter().flatten().collect();
    if threads.len() > MANY_THREADS {
        threads.sort_by(|a, b| {
            let max = |t: &Value| t["max_us"].as_f64().unwrap_or(0.0);
            max(b).total_cmp(&max(a))
        });
    }
    let deadline_column = deadline_us.is_some();
    let _ = writeln!(
        h,
        "<h3>Per CPU{}</h3><div class=\"scroll\"><table><thead><tr><th>Thread</th><th>CPU</th>\
         <th>Samples</th><th>Min, us</th><th>Avg, us</th><th>p99, us</th><th>p99.99, us</th>\
         <th>Max, us</th>{}</tr></thead><tbody>",
        if threads.len() > MANY_THREADS {
            ", the highest maximum first"
        } else {
            ""
        },
        match deadline_us {
            Some(d) => format!("<th>Beyond {d} us</th>"),
            None => String::new(),
        }
    );
    let num = |v: &Value, digits: usize| {
        v.as_f64()
            .map_or(String::new(), |x| format!("{x:.digits$}"))
    };
    let all = &phase["all_threads"];
    for t in threads {
        let over = t["beyond_deadline"].as_u64().unwrap_or(0);
        let class = if over > 0 { " class=\"bad\"" } else { "" };
        let _ = writeln!(
            h,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>\
             <td{class}>{}</td>{}</tr>",
            t["thread"],
            t["cpu"],
            t["samples"],
            num(&t["min_us"], 1),
            num(&t["avg_us"], 1),
            num(&t["p99_us"], 0),
            num(&t["p99.99_us"], 0),
            num(&t["max_us"], 1),
            if deadline_column {
                format!("<td{class}>{over}</td>")
            } else {
                String::new()
            }
        );
    }
    let _ = writeln!(
        h,
        "</tbody><tfoot><tr><th class=\"text\" colspan=\"2\">All</th><td>{}</td><td></td>\
         <td></td><td>{}</td><td>{}</td><td>{}</td>{}</tr></tfoot></table></div>",
        phase["samples"],
        num(&all["p99"], 0),
        num(&all["p99.99"], 0),
        num(&all["max"], 1),
        if deadline_column {
            format!("<td>{}</td>", phase["beyond_deadline"])
        } else {
            String::new()
        }
    );
}

/// Above this many measuring threads, the table lists the worst first.
const MANY_THREADS: usize = 8;

/// The projection: each horizon's maximum with its interval and the
/// deadline's exceedance rate, or why there is none.
fn projection(h: &mut String, projection: &Value) {
    h.push_str("<h3>Projection</h3>\n");
    match projection["outcome"].as_str() {
        Some("projected") => {
            let us = |v: &Value| {
                v.as_f64()
                    .map_or("unbounded".to_owned(), |ns| format!("{:.0}", ns / 1000.0))
            };
            h.push_str(
                "<table><thead><tr><th>Over</th><th>Median maximum, us</th>\
                 <th>95% interval, us</th></tr></thead><tbody>\n",
            );
            for level in projection["levels"].as_array().into_iter().flatten() {
                let max = &level["max_ns"];
                let _ = writeln!(
                    h,
                    "<tr><td>{} s</td><td>{}</td><td>{} to {}</td></tr>",
                    level["horizon_s"],
                    us(&max["value"]),
                    us(&max["lower"]),
                    us(&max["upper"])
                );
            }
            h.push_str("</tbody></table>\n");
            if let Some(d) = projection["deadline"].as_object() {
                let rate = &d["per_hour"];
                let _ = writeln!(
                    h,
                    "<p>Beyond the deadline: {:.2} times an hour (95% interval {:.2} to {}).</p>",
                    rate["value"].as_f64().unwrap_or(0.0),
                    rate["lower"].as_f64().unwrap_or(0.0),
                    rate["upper"]
                        .as_f64()
                        .map_or("unbounded".to_owned(), |u| format!("{u:.2}"))
                );
            }
            let _ = writeln!(h, "<p>{}</p>", esc(&text(&projection["method"])));
        }
        Some("refused") => {
            let _ = writeln!(
                h,
                "<p>None: {}; {}.</p>",
                esc(&text(&projection["reason"])),
                esc(&text(&projection["advice"]))
            );
        }
        _ => h.push_str("<p>None was made.</p>\n"),
    }
}

/// The verdict's reasons.
fn verdict_list(h: &mut String, verdict: &Value) {
    let Some(reasons) = verdict["reasons"].as_array() else {
        return;
    };
    let _ = writeln!(
        h,
        "<h3>Verdict</h3><p>Machine <strong>{}</strong>, measurement <strong>{}</strong>.</p><ul>",
        esc(verdict["machine"].as_str().unwrap_or("")),
        esc(verdict["measurement"].as_str().unwrap_or(""))
    );
    for reason in reasons {
        let _ = writeln!(h, "<li>{}</li>", esc(reason["text"].as_str().unwrap_or("")));
    }
    h.push_str("</ul>\n");
}

/// The phase's worst samples explained (`--explain`): each sample's
/// latency cut into its stages, the largest cause of each stage.
fn explained(h: &mut String, phase: &Value) {
    let Some(samples) = phase["explain"].as_array().filter(|s| !s.is_empty()) else {
        return;
    };
    h.push_str(
        "<h3>The worst samples explained</h3><table><thead><tr><th>Thread</th><th>CPU</th>\
         <th>Latency, us</th><th>Due, s into the run</th><th class=\"text\">Stages: us, \
         largest cause</th></tr></thead><tbody>\n",
    );
    for sample in samples {
        let stages: Vec<String> = sample["components"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|c| {
                let cause = c["causes"]
                    .as_array()
                    .and_then(|causes| causes.first())
                    .map(|cause| {
                        format!(
                            " ({} {})",
                            cause["kind"].as_str().unwrap_or(""),
                            cause["name"].as_str().unwrap_or("")
                        )
                    })
                    .unwrap_or_default();
                format!(
                    "{} {:.1}{cause}",
                    c["name"].as_str().unwrap_or(""),
                    c["ns"].as_f64().unwrap_or(0.0) / 1000.0
                )
            })
            .collect();
        let _ = writeln!(
            h,
            "<tr><td>{}</td><td>{}</td><td>{:.1}</td><td>{:.6}</td><td class=\"text\">{}</td></tr>",
            sample["thread"],
            sample["cpu"],
            sample["latency_ns"].as_f64().unwrap_or(0.0) / 1000.0,
            sample["due_at_ns"].as_f64().unwrap_or(0.0) / 1e9,
            esc(&stages.join("; "))
        );
    }
    h.push_str("</tbody></table>\n");
}

/// With `--compare`: the section `compare` from report.json's
/// `"compare"`: the base, the answer's line, a table of every change
/// (each phase's rows of all threads, and each thread's row that is
/// worse or better) with its values, its change, the interval of the
/// difference and its verdict, the phases not compared and why, and
/// what differs between the machines. Nothing without `--compare`.
fn compare_section(h: &mut String, compare: &Value) {
    if compare.is_null() {
        return;
    }
    let text = |v: &Value| esc(v.as_str().unwrap_or(""));
    let us = |v: &Value| {
        v.as_f64()
            .map_or_else(|| "-".to_owned(), |us| format!("{us:.3}"))
    };
    let _ = writeln!(
        h,
        "<section id=\"compare\"><h2>Against an earlier evaluation</h2>\
         <p>Each phase against the phase of the same name in <code>{}</code>, judged as \
         <code>rtlat compare</code> judges two runs (noise {}% of the base; intervals 95% \
         family-wise within a phase).</p><p><strong>{}</strong></p>",
        text(&compare["base"]),
        compare["noise_percent"],
        text(&compare["answer"])
    );
    h.push_str(
        "<table><thead><tr><th class=\"text\">Phase</th><th class=\"text\">Thread</th>\
         <th class=\"text\">Row</th><th>Base, us</th><th>New, us</th><th>Change</th>\
         <th>Difference, us (interval)</th><th class=\"text\">Verdict</th></tr></thead>\
         <tbody>\n",
    );
    for phase in compare["phases"].as_array().into_iter().flatten() {
        let name = text(&phase["name"]);
        let subjects = phase["comparison"]["subjects"].as_array();
        let Some(subjects) = subjects else {
            let _ = writeln!(
                h,
                "<tr><td class=\"text\">{name}</td><td class=\"text\" colspan=\"7\">{}: {}\
                 </td></tr>",
                text(&phase["status"]),
                text(&phase["why"])
            );
            continue;
        };
        for subject in subjects {
            let all = subject["name"] == "all threads";
            for row in subject["rows"].as_array().into_iter().flatten() {
                let verdict = row["verdict"].as_str().unwrap_or("");
                let changed = verdict == "worse" || verdict == "better";
                if !all && !changed {
                    continue;
                }
                let difference = &row["difference_us"];
                let interval = if difference.is_object() {
                    let end = |v: &Value| {
                        v.as_f64()
                            .map_or_else(|| "unbounded".to_owned(), |us| format!("{us:+.1}"))
                    };
                    format!(
                        "{} [{}, {}]",
                        end(&difference["value"]),
                        end(&difference["lower"]),
                        end(&difference["upper"])
                    )
                } else {
                    String::new()
                };
                let class = match verdict {
                    "worse" => " bad",
                    "better" => " ok",
                    _ => "",
                };
                let _ = writeln!(
                    h,
                    "<tr><td class=\"text\">{name}</td><td class=\"text\">{}</td>\
                     <td class=\"text\">{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>\
                     <td class=\"text{class}\">{}</td></tr>",
                    text(&subject["name"]),
                    text(&row["row"]),
                    us(&row["base_us"]),
                    us(&row["new_us"]),
                    row["change_percent"]
                        .as_f64()
                        .map_or_else(|| "-".to_owned(), |p| format!("{p:+.1}%")),
                    interval,
                    esc(verdict)
                );
            }
        }
    }
    h.push_str("</tbody></table>\n");
    let only: Vec<String> = compare["only_in_base"]
        .as_array()
        .into_iter()
        .flatten()
        .map(text)
        .collect();
    if !only.is_empty() {
        let _ = writeln!(
            h,
            "<p>Only in the base, not measured here: {}.</p>",
            only.join(", ")
        );
    }
    h.push_str("<h3>The machines</h3>\n");
    let changes = compare["environment_changes"].as_array();
    if let Some(changes) = changes.filter(|c| !c.is_empty()) {
        h.push_str(
            "<table><thead><tr><th class=\"text\">Fact</th><th class=\"text\">Base</th>\
             <th class=\"text\">New</th></tr></thead><tbody>\n",
        );
        let fact = |v: &Value| match v {
            Value::Null => "-".to_owned(),
            Value::String(s) => esc(s),
            other => esc(&other.to_string()),
        };
        for change in changes {
            let _ = writeln!(
                h,
                "<tr><td class=\"text\">{}</td><td class=\"text\">{}</td>\
                 <td class=\"text\">{}</td></tr>",
                text(&change["key"]),
                fact(&change["base"]),
                fact(&change["new"])
            );
        }
        h.push_str("</tbody></table>\n");
    } else {
        let lines = compare["environment"].as_array().filter(|l| !l.is_empty());
        match lines {
            Some(lines) => {
                for line in lines {
                    let _ = writeln!(h, "<p>{}</p>", text(line));
                }
            }
            None => h.push_str("<p>Neither evaluation's results record their machine.</p>\n"),
        }
    }
    h.push_str("</section>\n");
}
