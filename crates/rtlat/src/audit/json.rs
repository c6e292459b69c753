//! `rtlat audit --json`: the audit as one JSON document,
//! `{"rtlat_version", "checks": [{"id", "status", "fact", "why", "fix"}],
//! "environment": {...}, "suggested_command"}`; `why` and `fix` are
//! `null` where there is nothing to change.

use std::io::{self, Write};

use rtlat_audit::Audit;
use rtlat_results::audit::AuditDocument;

/// Writes `audit` as an indented JSON document and a newline.
pub fn write_json(w: &mut dyn Write, audit: &Audit) -> io::Result<()> {
    let document = AuditDocument {
        rtlat_version: env!("CARGO_PKG_VERSION"),
        checks: &audit.checks[..],
        environment: &audit.environment,
        suggested_command: &audit.suggested_command,
    };
    serde_json::to_writer_pretty(&mut *w, &document)?;
    w.write_all(b"\n")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::audit::test_support;
    use serde_json::{Value, json};

    /// Its keys are pinned (`report::schema`); it has no version of its
    /// own, so a change of them fails until it is given one.
    #[test]
    fn the_keys_of_the_document_are_pinned() {
        let mut out = Vec::new();
        write_json(&mut out, &test_support::audit()).unwrap();
        crate::report::schema::check_unversioned("audit", &[&String::from_utf8(out).unwrap()]);
    }

    #[test]
    fn the_document_has_the_four_keys_and_null_advice_where_none() {
        let mut out = Vec::new();
        write_json(&mut out, &test_support::audit()).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert!(text.ends_with("}\n"), "{text}");
        let doc: Value = serde_json::from_str(&text).unwrap();
        let keys: Vec<&str> = doc
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        assert_eq!(
            keys,
            [
                "checks",
                "environment",
                "rtlat_version",
                "suggested_command"
            ]
        );
        assert_eq!(doc["rtlat_version"], env!("CARGO_PKG_VERSION"));
        assert_eq!(
            doc["suggested_command"],
            "rtlat cyclictest -m -a 2-3 -t 2 -p 95 -i 1000"
        );
        assert_eq!(
            doc["checks"][0],
            json!({"id": "kernel.preemption", "status": "ok", "fact": "PREEMPT_RT",
                   "why": null, "fix": null})
        );
        assert_eq!(
            doc["checks"][4],
            json!({"id": "clocksource.current", "status": "bad", "fact": "hpet \"slow\"",
                   "why": "every timestamp costs µs", "fix": "clocksource=tsc"})
        );
        let statuses: Vec<&str> = doc["checks"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["status"].as_str().unwrap())
            .collect();
        assert_eq!(statuses, ["ok", "info", "unknown", "warn", "bad"]);
        // The environment as the contract writes it, read back whole.
        let environment: rtlat_audit::Environment =
            serde_json::from_value(doc["environment"].clone()).unwrap();
        assert_eq!(environment, test_support::environment());
    }
}
