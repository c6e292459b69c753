//! The phases of an evaluation and how long each measures: the idle
//! phase, one loaded phase per default load kind, and the user's own
//! workload when `--load-command` gives one; `-D/--duration` is the total,
//! split evenly, in whole seconds as `rtlat cyclictest -D` takes them,
//! over the phases that `--phase NAME:DURATION` does not fix; `--phase
//! NAME:0` leaves a phase out. (The audit, before them,
//! takes the time it takes: it measures nothing.)

use std::fmt::Write as _;

use rtlat_core::Nanos;
use rtlat_core::load::LoadKind;

/// The default total when `-D` is not given.
pub const DEFAULT_TOTAL: Nanos = Nanos::from_secs(600);

/// The shortest phase: below it a phase has too few samples to say
/// anything (its projection refuses below 30 blocks anyway, and says so).
pub const MIN_PHASE: Nanos = Nanos::from_secs(1);

/// The loads of the loaded phases, one phase each, in order: what real
/// systems do to a real-time thread (arithmetic, memory and cache, I/O,
/// processes, timers).
pub const DEFAULT_LOADS: [LoadKind; 6] = [
    LoadKind::Cpu,
    LoadKind::Memory,
    LoadKind::Cache,
    LoadKind::Io,
    LoadKind::Fork,
    LoadKind::Timers,
];

/// What a phase runs beside the measurement.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PhaseKind {
    /// Nothing.
    Idle,
    /// One of rtlat's loads.
    Load(LoadKind),
    /// The user's `--load-command`.
    Command,
}

impl PhaseKind {
    /// The phase's name, as `--phase` and the report spell it.
    pub fn name(self) -> &'static str {
        match self {
            PhaseKind::Idle => "idle",
            PhaseKind::Load(kind) => kind.name(),
            PhaseKind::Command => "command",
        }
    }
}

/// A phase and how long it measures.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Phase {
    pub kind: PhaseKind,
    pub duration: Nanos,
}

/// The phases an evaluation has before `--phase`: idle, one per load of
/// `loads` (`--load`, else [`DEFAULT_LOADS`]), and `command` when there is
/// a workload.
pub fn phases_of(loads: &[LoadKind], with_command: bool) -> Vec<PhaseKind> {
    let mut phases = vec![PhaseKind::Idle];
    phases.extend(loads.iter().copied().map(PhaseKind::Load));
    if with_command {
        phases.push(PhaseKind::Command);
    }
    phases
}

/// One `--phase NAME:DURATION`, as given.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PhaseRequest {
    pub name: String,
    pub duration: Nanos,
}

/// Why the phases cannot be planned: one line, without the option's name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PlanError(pub String);

/// The phases of `phases` with their durations: those `requests` name
/// take theirs (the last request of a name wins; 0 leaves the phase out),
/// the others share what is left of `total` (the default total when
/// `None`) evenly, in whole seconds, the first ones a second more while
/// the remainder lasts.
pub fn plan(
    phases: &[PhaseKind],
    requests: &[PhaseRequest],
    total: Option<Nanos>,
) -> Result<Vec<Phase>, PlanError> {
    let mut fixed: Vec<Option<Nanos>> = vec![None; phases.len()];
    for request in requests {
        let Some(at) = phases.iter().position(|p| p.name() == request.name) else {
            return Err(PlanError(format!(
                "unknown phase '{}': the phases are {}",
                request.name,
                names(phases)
            )));
        };
        if request.duration != Nanos::ZERO && request.duration < MIN_PHASE {
            return Err(PlanError(format!(
                "phase '{}' of {}: a phase measures at least {} (0 leaves it out)",
                request.name,
                seconds(request.duration),
                seconds(MIN_PHASE)
            )));
        }
        fixed[at] = Some(request.duration);
    }
    let fixed_sum: i64 = fixed.iter().flatten().map(|d| d.as_nanos()).sum();
    let open: Vec<usize> = (0..phases.len()).filter(|&i| fixed[i].is_none()).collect();
    let total_given = total.is_some();
    let total = total.unwrap_or(DEFAULT_TOTAL);
    let mut durations: Vec<Nanos> = fixed.iter().map(|d| d.unwrap_or(Nanos::ZERO)).collect();
    if open.is_empty() {
        if total_given && fixed_sum != total.as_nanos() {
            return Err(PlanError(format!(
                "the phases add up to {}, not the {} of -D: leave out -D, or a phase's \
                 duration to share the rest",
                seconds(Nanos(fixed_sum)),
                seconds(total)
            )));
        }
    } else {
        // Whole seconds, as -D takes them: the first phases one more
        // while the remainder lasts.
        let left_s = (total.as_nanos() - fixed_sum) / 1_000_000_000;
        let each_s = left_s / open.len() as i64;
        if each_s < MIN_PHASE.as_nanos() / 1_000_000_000 {
            let mut message = format!(
                "{} too short to split over {} phase{} ({}), at least {} each",
                seconds(total),
                open.len(),
                if open.len() == 1 { "" } else { "s" },
                open.iter()
                    .map(|&i| phases[i].name())
                    .collect::<Vec<_>>()
                    .join(", "),
                seconds(MIN_PHASE)
            );
            if fixed_sum > 0 {
                let _ = write!(
                    message,
                    " after the {} --phase fixes",
                    seconds(Nanos(fixed_sum))
                );
            }
            return Err(PlanError(message));
        }
        let extra = left_s % open.len() as i64;
        for (n, &i) in open.iter().enumerate() {
            let s = each_s + i64::from((n as i64) < extra);
            durations[i] = Nanos::from_secs(s);
        }
    }
    let planned: Vec<Phase> = phases
        .iter()
        .zip(durations)
        .filter(|(_, d)| *d != Nanos::ZERO)
        .map(|(&kind, duration)| Phase { kind, duration })
        .collect();
    if planned.is_empty() {
        return Err(PlanError(
            "every phase is left out: nothing would be measured".to_owned(),
        ));
    }
    Ok(planned)
}

/// `idle, cpu, memory, ...`.
fn names(phases: &[PhaseKind]) -> String {
    phases
        .iter()
        .map(|p| p.name())
        .collect::<Vec<_>>()
        .join(", ")
}

/// `90 s`, `1.5 s`.
fn seconds(d: Nanos) -> String {
    let s = d.as_nanos() as f64 / 1e9;
    format!("{} s", (s * 1000.0).round() / 1000.0)
}

/// Reads `NAME:DURATION` (the duration as `-D` reads it).
/// `--load LIST`: the loads of the loaded phases, in the order given
/// (`none`: no loaded phase).
pub fn parse_loads(text: &str) -> Result<Vec<LoadKind>, String> {
    if text == "none" {
        return Ok(Vec::new());
    }
    let mut loads = Vec::new();
    for name in text.split(',') {
        let Some(kind) = LoadKind::from_name(name) else {
            return Err(format!(
                "unknown load '{name}': expected none, or some of {} joined by commas",
                LoadKind::ALL.map(LoadKind::name).join(", ")
            ));
        };
        if loads.contains(&kind) {
            return Err(format!("load '{name}' named twice"));
        }
        loads.push(kind);
    }
    Ok(loads)
}

pub fn parse_request(text: &str) -> Result<PhaseRequest, String> {
    let Some((name, duration)) = text.split_once(':') else {
        return Err("expected NAME:DURATION (idle:60, io:5m, fork:0)".to_owned());
    };
    if name.is_empty() {
        return Err("expected NAME:DURATION: the phase's name is missing".to_owned());
    }
    let duration = match rtlat_args::values::duration(duration) {
        Ok(Some(d)) => d,
        Ok(None) => Nanos::ZERO,
        Err(_) => {
            return Err(format!(
                "expected NAME:DURATION, DURATION as -D takes it: {}",
                rtlat_args::values::DURATION_EXPECTED
            ));
        }
    };
    Ok(PhaseRequest {
        name: name.to_owned(),
        duration,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(name: &str, secs: i64) -> PhaseRequest {
        PhaseRequest {
            name: name.to_owned(),
            duration: Nanos::from_secs(secs),
        }
    }

    fn durations(phases: &[Phase]) -> Vec<(&'static str, i64)> {
        phases
            .iter()
            .map(|p| (p.kind.name(), p.duration.as_nanos() / 1_000_000))
            .collect()
    }

    #[test]
    fn the_total_is_shared_evenly_the_last_taking_the_rest() {
        let phases = phases_of(&DEFAULT_LOADS, false);
        let planned = plan(&phases, &[], Some(Nanos::from_secs(70))).unwrap();
        let names = ["idle", "cpu", "memory", "cache", "io", "fork", "timers"];
        assert_eq!(durations(&planned), names.map(|n| (n, 10_000)));
        let planned = plan(&phases, &[], Some(Nanos::from_secs(10))).unwrap();
        let sum: i64 = planned.iter().map(|p| p.duration.as_nanos()).sum();
        assert_eq!(sum, Nanos::from_secs(10).as_nanos());
        let secs: Vec<i64> = planned
            .iter()
            .map(|p| p.duration.as_nanos() / 1_000_000_000)
            .collect();
        assert_eq!(secs, [2, 2, 2, 1, 1, 1, 1]);
        let default = plan(&phases, &[], None).unwrap();
        let sum: i64 = default.iter().map(|p| p.duration.as_nanos()).sum();
        assert_eq!(sum, DEFAULT_TOTAL.as_nanos());
    }

    #[test]
    fn a_phase_fixed_keeps_its_duration_and_zero_leaves_it_out() {
        let phases = phases_of(&DEFAULT_LOADS, true);
        let planned = plan(
            &phases,
            &[request("command", 30), request("io", 0), request("io", 0)],
            Some(Nanos::from_secs(90)),
        )
        .unwrap();
        let mut want: Vec<(&str, i64)> = ["idle", "cpu", "memory", "cache", "fork", "timers"]
            .map(|n| (n, 10_000))
            .to_vec();
        want.push(("command", 30_000));
        assert_eq!(durations(&planned), want);
        // Every phase fixed: -D must agree, or be left out.
        let all: Vec<PhaseRequest> = phases.iter().map(|p| request(p.name(), 2)).collect();
        assert_eq!(plan(&phases, &all, None).unwrap().len(), 8);
        assert!(plan(&phases, &all, Some(Nanos::from_secs(16))).is_ok());
        let e = plan(&phases, &all, Some(Nanos::from_secs(20))).unwrap_err();
        assert!(
            e.0.starts_with("the phases add up to 16 s, not the 20 s of -D"),
            "{e:?}"
        );
    }

    #[test]
    fn bad_plans_are_one_line() {
        let phases = phases_of(&DEFAULT_LOADS, false);
        let e = plan(&phases, &[request("command", 5)], None).unwrap_err();
        assert_eq!(
            e.0,
            "unknown phase 'command': the phases are idle, cpu, memory, cache, io, fork, timers"
        );
        let e = plan(&phases, &[], Some(Nanos::from_secs(5))).unwrap_err();
        assert_eq!(
            e.0,
            "5 s too short to split over 7 phases (idle, cpu, memory, cache, io, fork, \
             timers), at least 1 s each"
        );
        let e = plan(&phases, &[request("idle", 58)], Some(Nanos::from_secs(60))).unwrap_err();
        assert!(e.0.ends_with("after the 58 s --phase fixes"), "{e:?}");
        let short = PhaseRequest {
            name: "idle".to_owned(),
            duration: Nanos(500_000_000),
        };
        let e = plan(&phases, &[short], None).unwrap_err();
        assert_eq!(
            e.0,
            "phase 'idle' of 0.5 s: a phase measures at least 1 s (0 leaves it out)"
        );
        let none: Vec<PhaseRequest> = phases.iter().map(|p| request(p.name(), 0)).collect();
        let e = plan(&phases, &none, None).unwrap_err();
        assert_eq!(e.0, "every phase is left out: nothing would be measured");
    }

    #[test]
    fn phase_requests_read_as_d_does() {
        assert_eq!(parse_request("idle:90"), Ok(request("idle", 90)));
        assert_eq!(parse_request("io:5m"), Ok(request("io", 300)));
        assert_eq!(parse_request("fork:0"), Ok(request("fork", 0)));
        assert!(
            parse_request("idle")
                .unwrap_err()
                .starts_with("expected NAME:DURATION")
        );
        assert!(
            parse_request(":10")
                .unwrap_err()
                .contains("name is missing")
        );
        assert!(
            parse_request("idle:ten")
                .unwrap_err()
                .contains("as -D takes it")
        );
    }

    #[test]
    fn load_lists_choose_the_loaded_phases() {
        assert_eq!(
            parse_loads("io,cpu").unwrap(),
            vec![LoadKind::Io, LoadKind::Cpu]
        );
        assert_eq!(parse_loads("none").unwrap(), vec![]);
        let names: Vec<&str> = phases_of(&parse_loads("io,cpu").unwrap(), true)
            .into_iter()
            .map(PhaseKind::name)
            .collect();
        assert_eq!(names, ["idle", "io", "cpu", "command"]);
        assert!(
            parse_loads("cpu,gpu")
                .unwrap_err()
                .contains("unknown load 'gpu'")
        );
        assert!(parse_loads("cpu,cpu").unwrap_err().contains("named twice"));
        assert!(parse_loads("").unwrap_err().contains("unknown load ''"));
    }
}
