//! `DIR/report.html`: the evaluation as one self-contained page (no
//! network, no script, no external font or style; prints well; readable on
//! a phone). The plots are drawn by `rtlat plot` (the rtlat-plot binary,
//! kept out of this one) into `DIR/<phase>.<kind>.svg` and inlined here.

use std::fmt::Write as _;
use std::path::Path;

use serde_json::Value;

/// The page's style: one column, real tables, print without the colours.
const STYLE: &str = "\
body{font-family:sans-serif;max-width:60rem;margin:0 auto;padding:1rem;line-height:1.4;color:#111}
h1{font-size:1.6rem}h2{font-size:1.3rem;border-bottom:1px solid #ccc}h3{font-size:1.1rem}
pre{background:#f4f4f4;padding:.5rem;overflow-x:auto;white-space:pre-wrap}
table{border-collapse:collapse;margin:.5rem 0;display:block;overflow-x:auto}
th,td{border:1px solid #ccc;padding:.2rem .5rem;text-align:right}th{background:#eee}
td.text,th.text{text-align:left}
figure{margin:.5rem 0}figure svg{width:100%;height:auto;max-width:100%}
.bad{color:#a00}.warn{color:#a60}.ok{color:#070}
@media print{body{max-width:none;color:#000}pre{background:none;border:1px solid #999}
figure{break-inside:avoid}h2{break-after:avoid}}
";

/// Escapes text for HTML.
fn esc(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            _ => out.push(c),
        }
    }
    out
}

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

/// The page. `answer` is the answer's lines; `report` is report.json's
/// content; `dir` holds the phases' files.
pub fn page(answer: &[String], report: &Value, audit: Option<&Value>, dir: &Path) -> String {
    let mut h = String::new();
    let _ = write!(
        h,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <title>rtlat evaluation</title><style>{STYLE}</style></head><body>\n\
         <h1>rtlat evaluation</h1>\n<section id=\"answer\"><h2>The answer</h2><pre>{}</pre></section>\n",
        esc(&answer.join("\n"))
    );
    h.push_str("<section id=\"machine\"><h2>The machine</h2>\n");
    match audit {
        Some(audit) => {
            h.push_str(
                "<table><thead><tr><th class=\"text\">Check</th><th class=\"text\">Status</th>\
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
        }
        None => h.push_str("<p>No audit was made.</p>\n"),
    }
    h.push_str("</section>\n");
    for phase in report["phases"].as_array().into_iter().flatten() {
        let name = phase["name"].as_str().unwrap_or("");
        let _ = writeln!(
            h,
            "<section id=\"phase-{0}\"><h2>Phase {0} ({1} s)</h2>",
            esc(name),
            phase["seconds"]
        );
        for (kind, what) in [
            ("latency", "samples by latency"),
            ("percentile", "latency by percentile"),
            ("timeline", "each 100 ms interval's maximum and p99"),
        ] {
            let svg = dir.join(format!("{name}.{kind}.svg"));
            if let Some(figure) = inline_svg(&svg, &format!("Phase {name}: {what}")) {
                h.push_str(&figure);
            }
        }
        if let Some(document) = phase_document(dir, name) {
            per_cpu_table(&mut h, &document);
            verdict_list(&mut h, &document);
            explained(&mut h, &document);
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
    compare_section(&mut h, &report["compare"]);
    let _ = write!(
        h,
        "<section id=\"method\"><h2>How it was measured</h2><p>rtlat {} ran each phase as the \
         command shown under it, one after the other; each phase's result is beside this \
         page (<code>PHASE.json</code>, <code>PHASE.hgrm</code>, \
         <code>PHASE.stats.jsonl</code>), with <code>report.json</code>.{}</p></section>\n\
         </body></html>\n",
        esc(report["rtlat_version"].as_str().unwrap_or("")),
        if report["cut_short"] == true {
            " The evaluation was cut short (Ctrl-C): the phases after the last one shown did \
             not run."
        } else {
            ""
        }
    );
    h
}

fn phase_document(dir: &Path, name: &str) -> Option<Value> {
    serde_json::from_str(&std::fs::read_to_string(dir.join(format!("{name}.json"))).ok()?).ok()
}

/// Each measuring thread: its CPU and figures.
fn per_cpu_table(h: &mut String, document: &Value) {
    let Some(threads) = document["thread"].as_object() else {
        return;
    };
    h.push_str(
        "<table><thead><tr><th>Thread</th><th>CPU</th><th>Samples</th><th>Min, us</th>\
         <th>Avg, us</th><th>p99, us</th><th>p99.99, us</th><th>Max, us</th></tr></thead><tbody>\n",
    );
    for (index, t) in threads {
        let p = &t["percentiles"];
        let _ = writeln!(
            h,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>\
             <td>{}</td></tr>",
            esc(index),
            t["cpu"],
            t["cycles"],
            t["min"],
            t["avg"],
            p["p99"],
            p["p99.99"],
            p["max"]
        );
    }
    h.push_str("</tbody></table>\n");
}

/// The verdict's reasons.
fn verdict_list(h: &mut String, document: &Value) {
    let verdict = &document["verdict"];
    let Some(reasons) = verdict["reasons"].as_array() else {
        return;
    };
    let _ = writeln!(
        h,
        "<p>Verdict: machine <strong>{}</strong>, measurement <strong>{}</strong>.</p><ul>",
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
fn explained(h: &mut String, document: &Value) {
    let Some(samples) = document["explain"].as_array().filter(|s| !s.is_empty()) else {
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
