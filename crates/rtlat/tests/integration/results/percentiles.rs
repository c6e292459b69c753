//! The full distribution through the binary: JSON `percentiles`,
//! `distribution` and `all_threads` agree with the `--percentiles` table,
//! the `.hgrm` files and the run's own counts; nothing is lost to `-h`'s
//! overflow.

use crate::support::{read_json, run, synthetic};

/// The `--percentiles` rows: name and the seven values (a value's `*`,
/// too few samples beyond it, left out).
fn table(stdout: &str) -> Vec<(String, Vec<f64>)> {
    stdout
        .lines()
        .skip_while(|l| !l.starts_with("# Percentiles (us)"))
        .skip(1)
        .take_while(|l| l.starts_with("# ") && !l.starts_with("# * "))
        .map(|l| {
            let fields: Vec<&str> = l[2..].split_whitespace().collect();
            let (name, values) = fields.split_at(fields.len() - 7);
            (
                name.join(" "),
                values
                    .iter()
                    .map(|v| v.trim_end_matches('*').parse().unwrap())
                    .collect(),
            )
        })
        .collect()
}

const LABELS: [&str; 7] = ["p50", "p90", "p99", "p99.9", "p99.99", "p99.999", "max"];

#[test]
fn json_table_and_hgrm_agree() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("run.json");
    let hgrm = dir.path().join("run.hgrm");
    let r = run(&mut synthetic(
        3,
        [
            "-q",
            "-l",
            "20000",
            "-t",
            "2",
            "-h",
            "50",
            "--percentiles",
            "--json",
            json.to_str().unwrap(),
            "--hgrm",
            hgrm.to_str().unwrap(),
            "--hgrm-per-thread",
        ],
    ));
    r.expect_code(0);
    let doc = read_json(&json);
    let rows = table(&r.stdout);
    let names: Vec<&str> = rows.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, ["T: 0", "T: 1", "All"], "{}", r.stdout);
    let mut total_cycles = 0;
    for (i, (_, values)) in rows.iter().take(2).enumerate() {
        let t = &doc["thread"][i.to_string()];
        let cycles = t["cycles"].as_u64().unwrap();
        total_cycles += cycles;
        for (label, value) in LABELS.iter().zip(values) {
            assert_eq!(t["percentiles"][label].as_f64(), Some(*value), "{label}");
        }
        // Percentiles rise; max is the exact maximum.
        assert!(values.windows(2).all(|w| w[0] <= w[1]), "{values:?}");
        assert_eq!(
            t["percentiles"]["max"].as_f64().unwrap() * 1000.0,
            t["max_ns"].as_f64().unwrap()
        );
        // Every sample is in the distribution, those beyond -h 50 too.
        let buckets = t["distribution"]["buckets"].as_array().unwrap();
        let counted: u64 = buckets.iter().map(|b| b[2].as_u64().unwrap()).sum();
        assert_eq!(counted, cycles);
        let beyond_h: u64 = buckets
            .iter()
            .filter(|b| b[0].as_f64().unwrap() >= 50.0)
            .map(|b| b[2].as_u64().unwrap())
            .sum();
        assert!(beyond_h > 0, "the synthetic source has samples above 50 us");
        // Each thread's .hgrm counts its samples.
        let own = std::fs::read_to_string(dir.path().join(format!("run.{i}.hgrm"))).unwrap();
        assert!(
            own.contains(&format!("Total count    = {cycles:>12}]")),
            "{own}"
        );
    }
    for (label, value) in LABELS.iter().zip(&rows[2].1) {
        assert_eq!(doc["all_threads"][label].as_f64(), Some(*value), "{label}");
    }
    let all = std::fs::read_to_string(&hgrm).unwrap();
    assert!(all.contains(&format!("Total count    = {total_cycles:>12}]")));
    let last = all
        .lines()
        .rfind(|l| !l.starts_with('#') && !l.trim().is_empty())
        .unwrap();
    assert!(last.contains(" 1.000000000000 "), "the 100 % line: {last}");
}

#[test]
fn bucket_width_changes_the_exact_buckets() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("run.json");
    let r = run(&mut synthetic(
        3,
        [
            "-q",
            "-l",
            "5000",
            "--bucket-width",
            "250",
            "--json",
            json.to_str().unwrap(),
        ],
    ));
    r.expect_code(0);
    let doc = read_json(&json);
    let first = &doc["thread"]["0"]["distribution"]["buckets"][0];
    let width = first[1].as_f64().unwrap() - first[0].as_f64().unwrap();
    assert_eq!(width, 0.25);
    for bad in ["0", "1000001", "x"] {
        let r = run(&mut synthetic(3, ["-q", "-l", "10", "--bucket-width", bad]));
        r.expect_code(2);
        assert!(
            r.stderr
                .starts_with("rtlat cyclictest: --bucket-width: invalid value"),
            "{}",
            r.stderr
        );
    }
    let r = run(&mut synthetic(3, ["-q", "-l", "10", "--hgrm-per-thread"]));
    r.expect_code(2);
    assert!(
        r.stderr.contains("--hgrm-per-thread needs --hgrm"),
        "{}",
        r.stderr
    );
}
