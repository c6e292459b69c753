//! `--fail-if` text into [`Limit`]s: comma-separated `METRIC OP
//! VALUE[UNIT]`.

use std::fmt;

use crate::report::verdict::{Level, Machine, Measurement};

/// What a limit measures.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Metric {
    /// The smallest latency.
    Min,
    /// The mean latency.
    Avg,
    /// The largest latency.
    Max,
    /// The median.
    P50,
    /// The 90th percentile.
    P90,
    /// The 99th percentile.
    P99,
    /// The 99.9th percentile.
    P99_9,
    /// The 99.99th percentile.
    P99_99,
    /// The 99.999th percentile.
    P99_999,
    /// Missed periods: a count, not a latency.
    Overruns,
    /// The run's verdict: a level, not a number.
    Verdict,
    /// The verdict's measurement part: a level.
    Measurement,
    /// The verdict's machine part: a level.
    Machine,
}

impl Metric {
    /// Whether the metric is read from the full distribution (a
    /// percentile), which not every mode keeps.
    pub const fn is_percentile(self) -> bool {
        matches!(
            self,
            Metric::P50
                | Metric::P90
                | Metric::P99
                | Metric::P99_9
                | Metric::P99_99
                | Metric::P99_999
        )
    }

    /// Every metric, in the order messages list them.
    pub const ALL: [Metric; 13] = [
        Metric::Min,
        Metric::Avg,
        Metric::Max,
        Metric::P50,
        Metric::P90,
        Metric::P99,
        Metric::P99_9,
        Metric::P99_99,
        Metric::P99_999,
        Metric::Overruns,
        Metric::Verdict,
        Metric::Measurement,
        Metric::Machine,
    ];

    /// How it is written: `max`, `p99.9`, `overruns`.
    pub const fn name(self) -> &'static str {
        match self {
            Metric::Min => "min",
            Metric::Avg => "avg",
            Metric::Max => "max",
            Metric::P50 => "p50",
            Metric::P90 => "p90",
            Metric::P99 => "p99",
            Metric::P99_9 => "p99.9",
            Metric::P99_99 => "p99.99",
            Metric::P99_999 => "p99.999",
            Metric::Overruns => "overruns",
            Metric::Verdict => "verdict",
            Metric::Measurement => "measurement",
            Metric::Machine => "machine",
        }
    }

    /// The label of a percentile, as in [`crate::gate::Metrics::percentiles_ns`]
    /// and `rtlat_core::STANDARD_PERCENTILES` (`p99.9`);
    /// `None` for the other metrics.
    pub const fn percentile_label(self) -> Option<&'static str> {
        match self {
            Metric::P50
            | Metric::P90
            | Metric::P99
            | Metric::P99_9
            | Metric::P99_99
            | Metric::P99_999 => Some(self.name()),
            _ => None,
        }
    }

    /// Whether it is a count (no unit) rather than a latency.
    pub const fn is_count(self) -> bool {
        matches!(self, Metric::Overruns)
    }

    /// Whether it is a latency (which needs samples to be measured).
    pub const fn is_latency(self) -> bool {
        !matches!(self, Metric::Overruns) && !self.is_level()
    }

    /// Whether it is a level of the run's verdict (`verdict`,
    /// `measurement`, `machine`), compared with `=` and `!=` only.
    pub const fn is_level(self) -> bool {
        matches!(
            self,
            Metric::Verdict | Metric::Measurement | Metric::Machine
        )
    }

    fn from_name(name: &str) -> Option<Metric> {
        Metric::ALL.into_iter().find(|m| m.name() == name)
    }
}

impl fmt::Display for Metric {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The comparison that FAILS the gate: `max > 100us` fails when the
/// maximum is above 100 µs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Op {
    /// `>`
    Gt,
    /// `>=`
    Ge,
    /// `<`
    Lt,
    /// `<=`
    Le,
    /// `=`, for the verdict only: the level REQUIRED (the gate fails
    /// when the verdict is another).
    Is,
    /// `!=`, for the verdict only: the level refused (the gate fails when
    /// the verdict is that one).
    IsNot,
}

impl Op {
    /// Every operator.
    pub const ALL: [Op; 6] = [Op::Gt, Op::Ge, Op::Lt, Op::Le, Op::Is, Op::IsNot];

    /// `>`, `>=`, `<`, `<=`.
    pub const fn symbol(self) -> &'static str {
        match self {
            Op::Gt => ">",
            Op::Ge => ">=",
            Op::Lt => "<",
            Op::Le => "<=",
            Op::Is => "=",
            Op::IsNot => "!=",
        }
    }

    /// Whether the limit is broken: `measured OP limit` holds for the
    /// comparisons; for `=` the values differ, for `!=` they are equal.
    pub fn fails(self, measured: f64, limit: f64) -> bool {
        match self {
            Op::Gt => measured > limit,
            Op::Ge => measured >= limit,
            Op::Lt => measured < limit,
            Op::Le => measured <= limit,
            Op::Is => measured != limit,
            Op::IsNot => measured == limit,
        }
    }

    /// Whether it compares levels (`=`, `!=`) rather than numbers.
    const fn is_level_test(self) -> bool {
        matches!(self, Op::Is | Op::IsNot)
    }

    fn from_symbol(symbol: &str) -> Option<Op> {
        Op::ALL.into_iter().find(|o| o.symbol() == symbol)
    }
}

impl fmt::Display for Op {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.symbol())
    }
}

/// A latency unit.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Unit {
    /// Nanoseconds, `ns`.
    Ns,
    /// Microseconds, `us` or `µs`: the default.
    Us,
    /// Milliseconds, `ms`.
    Ms,
    /// Seconds, `s`.
    S,
}

impl Unit {
    /// Nanoseconds in one unit.
    pub const fn nanos(self) -> i64 {
        match self {
            Unit::Ns => 1,
            Unit::Us => 1_000,
            Unit::Ms => 1_000_000,
            Unit::S => 1_000_000_000,
        }
    }

    /// Digits after the point that a whole number of ns can need.
    const fn decimals(self) -> usize {
        match self {
            Unit::Ns => 0,
            Unit::Us => 3,
            Unit::Ms => 6,
            Unit::S => 9,
        }
    }

    fn from_text(text: &str) -> Option<Unit> {
        match text {
            "ns" => Some(Unit::Ns),
            // The micro sign (U+00B5) and the Greek mu (U+03BC) look alike.
            "us" | "\u{b5}s" | "\u{3bc}s" => Some(Unit::Us),
            "ms" => Some(Unit::Ms),
            "s" => Some(Unit::S),
            _ => None,
        }
    }

    /// `ns` in this unit, with as many decimals as it takes (at most
    /// those of whole nanoseconds, one more for a mean): `153.2`, `100`.
    pub fn format(self, ns: f64) -> String {
        let places = self.decimals() + 1;
        let text = format!("{:.*}", places, ns / self.nanos() as f64);
        let text = text.trim_end_matches('0').trim_end_matches('.');
        if text == "-0" {
            "0".to_string()
        } else {
            text.to_string()
        }
    }
}

/// A limit's value.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Threshold {
    /// A latency, exactly, and the unit it was given in.
    Time {
        /// The value in ns.
        ns: i64,
        /// The unit written (or `us` by default), for messages.
        unit: Unit,
    },
    /// A count (`overruns`).
    Count(u64),
    /// A level of the verdict (`verdict`, `measurement`, `machine`).
    Level(GateLevel),
}

/// A level a gate requires or refuses: of the verdict or of one of its
/// parts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum GateLevel {
    /// `verdict=LEVEL`.
    Verdict(Level),
    /// `measurement=LEVEL`.
    Measurement(Measurement),
    /// `machine=LEVEL`.
    Machine(Machine),
}

impl GateLevel {
    /// The levels of `metric`'s, best first (empty for a number).
    pub fn all(metric: Metric) -> Vec<GateLevel> {
        match metric {
            Metric::Verdict => Level::ALL.map(GateLevel::Verdict).to_vec(),
            Metric::Measurement => Measurement::ALL.map(GateLevel::Measurement).to_vec(),
            Metric::Machine => Machine::ALL.map(GateLevel::Machine).to_vec(),
            _ => Vec::new(),
        }
    }

    /// As written: `caveats`, `doubtful`, `not-ready`.
    pub const fn name(self) -> &'static str {
        match self {
            GateLevel::Verdict(l) => l.name(),
            GateLevel::Measurement(l) => l.name(),
            GateLevel::Machine(l) => l.name(),
        }
    }

    /// Its rank among its metric's levels, the number gates compare: 0
    /// the best.
    pub fn rank(self) -> f64 {
        match self {
            GateLevel::Verdict(l) => l as u8 as f64,
            GateLevel::Measurement(l) => l as u8 as f64,
            GateLevel::Machine(l) => l as u8 as f64,
        }
    }

    /// The level of `metric` named `name`.
    fn from_name(metric: Metric, name: &str) -> Option<GateLevel> {
        GateLevel::all(metric)
            .into_iter()
            .find(|l| l.name() == name)
    }
}

impl Threshold {
    /// The value compared with a measurement: ns, a count, or a level's
    /// rank ([`level_rank`]).
    pub fn as_f64(self) -> f64 {
        match self {
            Threshold::Time { ns, .. } => ns as f64,
            Threshold::Count(n) => n as f64,
            Threshold::Level(level) => level.rank(),
        }
    }
}

/// A verdict's level as the number gates compare: 0 trustworthy, 1
/// caveats, 2 untrustworthy.
pub fn level_rank(level: Level) -> f64 {
    GateLevel::Verdict(level).rank()
}

/// The level of `metric` at `rank` ([`GateLevel::rank`]).
pub fn rank_level(metric: Metric, rank: f64) -> Option<GateLevel> {
    GateLevel::all(metric)
        .into_iter()
        .find(|l| l.rank() == rank)
}

/// One `METRIC OP VALUE[UNIT]`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Limit {
    /// What is measured.
    pub metric: Metric,
    /// The failing condition.
    pub op: Op,
    /// The value it is compared with.
    pub threshold: Threshold,
    /// The value as written (`2.5`), to repeat it in messages.
    value_text: String,
    /// The unit as written (`µs`), `us` when none was; empty for a count.
    unit_text: String,
}

impl Limit {
    /// The limit's value for messages, unit spaced: `100 us`, `2.5 ms`, `0`.
    pub fn value_display(&self) -> String {
        if self.unit_text.is_empty() {
            self.value_text.clone()
        } else {
            format!("{} {}", self.value_text, self.unit_text)
        }
    }

    /// A measured value in the limit's unit for messages: `153.2 us`.
    pub fn measured_display(&self, measured: f64) -> String {
        match self.threshold {
            Threshold::Time { unit, .. } => format!("{} {}", unit.format(measured), self.unit_text),
            Threshold::Count(_) => format!("{measured}"),
            Threshold::Level(_) => rank_level(self.metric, measured)
                .map_or("?", GateLevel::name)
                .to_string(),
        }
    }
}

/// `max > 100us`: the metric, the operator and the value with its unit as
/// written (`us` when none was), blanks normalised.
impl fmt::Display for Limit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} {} {}{}",
            self.metric, self.op, self.value_text, self.unit_text
        )
    }
}

/// Why a `--fail-if` text was refused: one line, no program prefix.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("--fail-if: {}{problem}", .limit.as_ref().map(|l| format!("'{l}': ")).unwrap_or_default())]
pub struct GateError {
    /// The offending limit as written, if the problem is in one.
    pub limit: Option<String>,
    /// What is wrong and what is accepted.
    pub problem: String,
}

const SHAPE: &str = "METRIC OP VALUE[UNIT], e.g. 'max>100us,p99.9>40us', or \
                     verdict=LEVEL, verdict!=LEVEL (also measurement, machine)";
const OPERATORS: &str = ">, >=, < or <= (the condition that fails)";
const LEVEL_OPERATORS: &str = "= (the level required) or != (the level refused)";
const UNITS: &str = "ns, us, µs, ms or s (us by default)";

fn metric_list() -> String {
    Metric::ALL.map(Metric::name).join(", ")
}

fn level_list(metric: Metric) -> String {
    let names: Vec<&str> = GateLevel::all(metric)
        .into_iter()
        .map(GateLevel::name)
        .collect();
    format!(
        "{} or {}",
        names[..names.len() - 1].join(", "),
        names[names.len() - 1]
    )
}

/// Reads a `--fail-if` text: comma-separated `METRIC OP VALUE[UNIT]` (see
/// the module documentation), in order.
pub fn parse(expr: &str) -> Result<Vec<Limit>, GateError> {
    if expr.trim().is_empty() {
        return Err(GateError {
            limit: None,
            problem: format!("no limit given; expected comma-separated {SHAPE}"),
        });
    }
    expr.split(',')
        .map(|part| {
            let part = part.trim();
            if part.is_empty() {
                return Err(GateError {
                    limit: Some(expr.to_string()),
                    problem: format!("empty limit between commas; expected {SHAPE}"),
                });
            }
            parse_limit(part).map_err(|problem| GateError {
                limit: Some(part.to_string()),
                problem,
            })
        })
        .collect()
}

/// Splits off the longest prefix of `text` whose characters satisfy `f`.
fn take_while(text: &str, f: impl Fn(char) -> bool) -> (&str, &str) {
    let end = text.find(|c| !f(c)).unwrap_or(text.len());
    text.split_at(end)
}

fn parse_limit(part: &str) -> Result<Limit, String> {
    let (name, rest) = take_while(part, |c| c.is_alphanumeric() || c == '.' || c == '_');
    let rest = rest.trim_start();
    let (symbol, rest) = take_while(rest, |c| matches!(c, '<' | '>' | '=' | '!'));
    let metric = match Metric::from_name(name) {
        Some(m) => m,
        None if name.is_empty() => {
            return Err(format!("missing metric; expected one of {}", metric_list()));
        }
        None => {
            return Err(format!(
                "unknown metric '{name}'; expected one of {}",
                metric_list()
            ));
        }
    };
    let operators = if metric.is_level() {
        LEVEL_OPERATORS
    } else {
        OPERATORS
    };
    let op = match Op::from_symbol(symbol) {
        Some(op) if op.is_level_test() == metric.is_level() => op,
        None if symbol.is_empty() => {
            return Err(format!("expected an operator {operators} after '{name}'"));
        }
        _ => return Err(format!("unknown operator '{symbol}'; expected {operators}")),
    };
    let rest = rest.trim_start();
    if metric.is_level() {
        let Some(level) = GateLevel::from_name(metric, rest) else {
            return Err(format!(
                "invalid value '{rest}'; {metric} expects {}",
                level_list(metric)
            ));
        };
        return Ok(Limit {
            metric,
            op,
            threshold: Threshold::Level(level),
            value_text: rest.to_string(),
            unit_text: String::new(),
        });
    }
    let (number, unit) = take_while(rest, |c| c.is_ascii_digit() || matches!(c, '.' | '-' | '+'));
    let unit = unit.trim();
    if number.is_empty() {
        return Err(if unit.is_empty() {
            format!("missing value after '{symbol}'")
        } else {
            format!("invalid value '{unit}'")
        } + &expected_value(metric));
    }
    let invalid = || format!("invalid value '{number}'{}", expected_value(metric));
    let (threshold, unit_text) = if metric.is_count() {
        if !unit.is_empty() {
            return Err(format!(
                "{metric} is a count and takes no unit ('{unit}'); expected a whole number, 0 or more"
            ));
        }
        let count = number.parse::<u64>().map_err(|_| {
            if number.bytes().all(|b| b.is_ascii_digit()) {
                format!("{metric} value '{number}' is too large")
            } else {
                invalid()
            }
        })?;
        (Threshold::Count(count), String::new())
    } else {
        let (u, unit_text) = if unit.is_empty() {
            (Unit::Us, "us")
        } else {
            match Unit::from_text(unit) {
                Some(u) => (u, unit),
                None => return Err(format!("unknown unit '{unit}'; expected {UNITS}")),
            }
        };
        let ns = decimal_nanos(number, u).map_err(|e| match e {
            DecimalError::Malformed => invalid(),
            DecimalError::FinerThanNs => {
                format!("'{number}{unit_text}' is not a whole number of nanoseconds")
            }
            DecimalError::TooLarge => format!("'{number}{unit_text}' is too large"),
        })?;
        (Threshold::Time { ns, unit: u }, unit_text.to_string())
    };
    Ok(Limit {
        metric,
        op,
        threshold,
        value_text: number.strip_prefix('+').unwrap_or(number).to_string(),
        unit_text,
    })
}

fn expected_value(metric: Metric) -> String {
    if metric.is_count() {
        format!("; {metric} expects a whole number, 0 or more")
    } else {
        format!("; expected a number with an optional unit {UNITS}: 100us, 2.5ms")
    }
}

/// A latency as the limits write it, `VALUE[UNIT]` (`100us`, `1ms`,
/// `250` in us), exactly in ns (`--deadline`); the error says what is
/// wrong and what is accepted.
pub fn latency_ns(text: &str) -> Result<i64, String> {
    let text = text.trim();
    let (number, unit) = take_while(text, |c| c.is_ascii_digit() || c == '.');
    let unit = unit.trim();
    let expected =
        format!("expected a latency, a number with an optional unit {UNITS}: 100us, 1ms");
    if number.is_empty() {
        return Err(expected);
    }
    let u = if unit.is_empty() {
        Unit::Us
    } else {
        Unit::from_text(unit).ok_or_else(|| format!("unknown unit '{unit}'; {expected}"))?
    };
    decimal_nanos(number, u).map_err(|e| match e {
        DecimalError::Malformed => expected,
        DecimalError::FinerThanNs => "not a whole number of nanoseconds".to_string(),
        DecimalError::TooLarge => "too large".to_string(),
    })
}

#[derive(Debug, PartialEq, Eq)]
enum DecimalError {
    Malformed,
    FinerThanNs,
    TooLarge,
}

/// `[+-]digits[.digits]` (or `.digits`, `digits.`) in `unit`, exactly, as
/// whole nanoseconds.
fn decimal_nanos(text: &str, unit: Unit) -> Result<i64, DecimalError> {
    let (negative, body) = match text.as_bytes().first() {
        Some(b'-') => (true, &text[1..]),
        Some(b'+') => (false, &text[1..]),
        _ => (false, text),
    };
    let (int, frac) = body.split_once('.').unwrap_or((body, ""));
    let digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    if int.len() + frac.len() == 0 || !digits(int) || !digits(frac) {
        return Err(DecimalError::Malformed);
    }
    let frac = frac.trim_end_matches('0');
    if frac.len() > unit.decimals() {
        return Err(DecimalError::FinerThanNs);
    }
    let int = int.trim_start_matches('0');
    // 19 digits of ns already exceed an i64.
    if int.len() > 19 {
        return Err(DecimalError::TooLarge);
    }
    let int: i128 = if int.is_empty() {
        0
    } else {
        int.parse().unwrap_or(0)
    };
    let scale = 10i128.pow(frac.len() as u32);
    let frac: i128 = if frac.is_empty() {
        0
    } else {
        frac.parse().unwrap_or(0)
    };
    let ns = (int * scale + frac) * i128::from(unit.nanos()) / scale;
    let ns = if negative { -ns } else { ns };
    i64::try_from(ns).map_err(|_| DecimalError::TooLarge)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn one(text: &str) -> Limit {
        let limits = parse(text).unwrap_or_else(|e| panic!("{text}: {e}"));
        assert_eq!(limits.len(), 1, "{text}");
        limits.into_iter().next().unwrap()
    }

    fn error(text: &str) -> String {
        match parse(text) {
            Ok(l) => panic!("{text}: accepted as {l:?}"),
            Err(e) => e.to_string(),
        }
    }

    #[test]
    fn table_of_accepted_limits() {
        let time = |ns, unit| Threshold::Time { ns, unit };
        let cases: &[(&str, Metric, Op, Threshold, &str)] = &[
            (
                "max>100us",
                Metric::Max,
                Op::Gt,
                time(100_000, Unit::Us),
                "max > 100us",
            ),
            (
                "max>100",
                Metric::Max,
                Op::Gt,
                time(100_000, Unit::Us),
                "max > 100us",
            ),
            (
                " max > 100 us ",
                Metric::Max,
                Op::Gt,
                time(100_000, Unit::Us),
                "max > 100us",
            ),
            (
                "p99.9>=40µs",
                Metric::P99_9,
                Op::Ge,
                time(40_000, Unit::Us),
                "p99.9 >= 40µs",
            ),
            (
                "p99.9>=40μs",
                Metric::P99_9,
                Op::Ge,
                time(40_000, Unit::Us),
                "p99.9 >= 40μs",
            ),
            (
                "min<-5us",
                Metric::Min,
                Op::Lt,
                time(-5_000, Unit::Us),
                "min < -5us",
            ),
            (
                "avg<=2.5us",
                Metric::Avg,
                Op::Le,
                time(2_500, Unit::Us),
                "avg <= 2.5us",
            ),
            (
                "p50>1500ns",
                Metric::P50,
                Op::Gt,
                time(1_500, Unit::Ns),
                "p50 > 1500ns",
            ),
            (
                "p90>.5ms",
                Metric::P90,
                Op::Gt,
                time(500_000, Unit::Ms),
                "p90 > .5ms",
            ),
            (
                "p99>1.ms",
                Metric::P99,
                Op::Gt,
                time(1_000_000, Unit::Ms),
                "p99 > 1.ms",
            ),
            (
                "p99.99>0.000001s",
                Metric::P99_99,
                Op::Gt,
                time(1_000, Unit::S),
                "p99.99 > 0.000001s",
            ),
            (
                "p99.999>+2s",
                Metric::P99_999,
                Op::Gt,
                time(2_000_000_000, Unit::S),
                "p99.999 > 2s",
            ),
            (
                "p99>1.000000000000ms",
                Metric::P99,
                Op::Gt,
                time(1_000_000, Unit::Ms),
                "p99 > 1.000000000000ms",
            ),
            (
                "overruns>0",
                Metric::Overruns,
                Op::Gt,
                Threshold::Count(0),
                "overruns > 0",
            ),
            (
                "overruns >= 12",
                Metric::Overruns,
                Op::Ge,
                Threshold::Count(12),
                "overruns >= 12",
            ),
        ];
        for (text, metric, op, threshold, display) in cases {
            let l = one(text);
            assert_eq!(
                (l.metric, l.op, l.threshold),
                (*metric, *op, *threshold),
                "{text}"
            );
            assert_eq!(l.to_string(), *display, "{text}");
        }
    }

    #[test]
    fn several_limits_in_order() {
        let limits = parse("max>100us, p99.9>40us ,overruns>0").unwrap();
        let names: Vec<String> = limits.iter().map(Limit::to_string).collect();
        assert_eq!(names, ["max > 100us", "p99.9 > 40us", "overruns > 0"]);
    }

    #[test]
    fn table_of_errors() {
        let cases: &[(&str, &str)] = &[
            (
                "p95>3us",
                "--fail-if: 'p95>3us': unknown metric 'p95'; expected one of min, avg, max, p50, \
                 p90, p99, p99.9, p99.99, p99.999, overruns",
            ),
            (
                "MAX>3us",
                "--fail-if: 'MAX>3us': unknown metric 'MAX'; expected one of min,",
            ),
            (
                ">3us",
                "--fail-if: '>3us': missing metric; expected one of min,",
            ),
            (
                "max 100us",
                "--fail-if: 'max 100us': expected an operator >, >=, < or <= (the condition \
                 that fails) after 'max'",
            ),
            (
                "max=100us",
                "--fail-if: 'max=100us': unknown operator '='; expected >, >=, < or <=",
            ),
            (
                "max=>100us",
                "--fail-if: 'max=>100us': unknown operator '=>'",
            ),
            ("max!=1", "--fail-if: 'max!=1': unknown operator '!='"),
            ("max>>1", "--fail-if: 'max>>1': unknown operator '>>'"),
            (
                "max>",
                "--fail-if: 'max>': missing value after '>'; expected a number with an optional \
                 unit ns, us, µs, ms or s (us by default): 100us, 2.5ms",
            ),
            (
                "max>abc",
                "--fail-if: 'max>abc': invalid value 'abc'; expected a number",
            ),
            (
                "max>1.2.3us",
                "--fail-if: 'max>1.2.3us': invalid value '1.2.3'; expected a number",
            ),
            ("max>.us", "--fail-if: 'max>.us': invalid value '.'"),
            ("max>--1us", "--fail-if: 'max>--1us': invalid value '--1'"),
            (
                "max>100msec",
                "--fail-if: 'max>100msec': unknown unit 'msec'; expected ns, us, µs, ms or s \
                 (us by default)",
            ),
            ("max>100MS", "--fail-if: 'max>100MS': unknown unit 'MS'"),
            ("max>1e3us", "--fail-if: 'max>1e3us': unknown unit 'e3us'"),
            (
                "max>0.5ns",
                "--fail-if: 'max>0.5ns': '0.5ns' is not a whole number of nanoseconds",
            ),
            (
                "max>1.0001us",
                "--fail-if: 'max>1.0001us': '1.0001us' is not a whole number",
            ),
            (
                "max>99999999999s",
                "--fail-if: 'max>99999999999s': '99999999999s' is too large",
            ),
            (
                "overruns>5us",
                "--fail-if: 'overruns>5us': overruns is a count and takes no unit ('us'); \
                 expected a whole number, 0 or more",
            ),
            (
                "overruns>2.5",
                "--fail-if: 'overruns>2.5': invalid value '2.5'; overruns expects a whole \
                 number, 0 or more",
            ),
            (
                "overruns>-1",
                "--fail-if: 'overruns>-1': invalid value '-1'",
            ),
            (
                "overruns>99999999999999999999",
                "--fail-if: 'overruns>99999999999999999999': overruns value \
                 '99999999999999999999' is too large",
            ),
            (
                "",
                "--fail-if: no limit given; expected comma-separated METRIC OP VALUE[UNIT], \
                 e.g. 'max>100us,p99.9>40us'",
            ),
            ("  ", "--fail-if: no limit given"),
            (
                "max>1us,,p99>2us",
                "--fail-if: 'max>1us,,p99>2us': empty limit between commas; expected METRIC OP \
                 VALUE[UNIT]",
            ),
            (
                "max>1us,",
                "--fail-if: 'max>1us,': empty limit between commas",
            ),
            ("max>1us,p95>2", "--fail-if: 'p95>2': unknown metric 'p95'"),
        ];
        for (text, expected) in cases {
            let message = error(text);
            assert!(
                message.starts_with(expected),
                "{text:?}:\n got {message}\nwant {expected}"
            );
            assert!(!message.contains('\n'), "{message}");
        }
    }

    #[test]
    fn verdict_limits() {
        let required = one("verdict=trustworthy");
        assert_eq!(
            (required.metric, required.op, required.threshold),
            (
                Metric::Verdict,
                Op::Is,
                Threshold::Level(GateLevel::Verdict(Level::Trustworthy))
            )
        );
        assert_eq!(required.to_string(), "verdict = trustworthy");
        let refused = one(" verdict != untrustworthy ");
        assert_eq!(
            (refused.op, refused.threshold),
            (
                Op::IsNot,
                Threshold::Level(GateLevel::Verdict(Level::Untrustworthy))
            )
        );
        assert_eq!(parse("max>100us,verdict=caveats").unwrap().len(), 2);
        // `=` fails when the level differs, `!=` when it is the same.
        assert!(Op::Is.fails(level_rank(Level::Caveats), level_rank(Level::Trustworthy)));
        assert!(!Op::Is.fails(level_rank(Level::Caveats), level_rank(Level::Caveats)));
        assert!(Op::IsNot.fails(level_rank(Level::Caveats), level_rank(Level::Caveats)));
        for level in Level::ALL {
            assert_eq!(
                rank_level(Metric::Verdict, level_rank(level)),
                Some(GateLevel::Verdict(level))
            );
        }

        let errors = [
            (
                "verdict=maybe",
                "--fail-if: 'verdict=maybe': invalid value 'maybe'; verdict expects \
                 trustworthy, caveats or untrustworthy",
            ),
            (
                "verdict>caveats",
                "--fail-if: 'verdict>caveats': unknown operator '>'; expected = (the level \
                 required) or != (the level refused)",
            ),
            (
                "verdict trustworthy",
                "--fail-if: 'verdict trustworthy': expected an operator = (the level \
                 required) or != (the level refused) after 'verdict'",
            ),
            (
                "verdict=",
                "--fail-if: 'verdict=': invalid value ''; verdict expects",
            ),
            (
                "max=100us",
                "--fail-if: 'max=100us': unknown operator '='; expected >, >=, < or <=",
            ),
            (
                "overruns!=0",
                "--fail-if: 'overruns!=0': unknown operator '!='; expected >, >=, < or <=",
            ),
        ];
        for (text, want) in errors {
            let message = error(text);
            assert!(message.starts_with(want), "{text}: {message}");
            assert!(!message.contains('\n'));
        }
    }

    #[test]
    fn measurement_and_machine_limits() {
        let cases = [
            (
                "measurement=valid",
                Metric::Measurement,
                Op::Is,
                GateLevel::Measurement(Measurement::Valid),
                "measurement = valid",
            ),
            (
                " measurement != invalid ",
                Metric::Measurement,
                Op::IsNot,
                GateLevel::Measurement(Measurement::Invalid),
                "measurement != invalid",
            ),
            (
                "machine=ready",
                Metric::Machine,
                Op::Is,
                GateLevel::Machine(Machine::Ready),
                "machine = ready",
            ),
            (
                "machine!=not-ready",
                Metric::Machine,
                Op::IsNot,
                GateLevel::Machine(Machine::NotReady),
                "machine != not-ready",
            ),
        ];
        for (text, metric, op, level, display) in cases {
            let l = one(text);
            assert_eq!(
                (l.metric, l.op, l.threshold),
                (metric, op, Threshold::Level(level)),
                "{text}"
            );
            assert_eq!(l.to_string(), display);
            assert_eq!(parse(&l.to_string()).unwrap(), [l]);
        }
        for metric in [Metric::Verdict, Metric::Measurement, Metric::Machine] {
            for level in GateLevel::all(metric) {
                assert_eq!(rank_level(metric, level.rank()), Some(level));
            }
        }
        let errors = [
            (
                "measurement=trustworthy",
                "--fail-if: 'measurement=trustworthy': invalid value 'trustworthy'; \
                 measurement expects valid, doubtful or invalid",
            ),
            (
                "machine=not ready",
                "--fail-if: 'machine=not ready': invalid value 'not ready'; machine expects \
                 ready, caveats or not-ready",
            ),
            (
                "machine>caveats",
                "--fail-if: 'machine>caveats': unknown operator '>'; expected = (the level \
                 required) or != (the level refused)",
            ),
            (
                "measurement",
                "--fail-if: 'measurement': expected an operator = (the level required) or != \
                 (the level refused) after 'measurement'",
            ),
        ];
        for (text, want) in errors {
            let message = error(text);
            assert!(message.starts_with(want), "{text}: {message}");
            assert!(!message.contains('\n'));
        }
    }

    #[test]
    fn percentile_labels_are_the_engines() {
        let ours: Vec<&str> = Metric::ALL
            .iter()
            .filter_map(|m| m.percentile_label())
            .collect();
        let engine: Vec<&str> = rtlat_core::STANDARD_PERCENTILES
            .iter()
            .map(|(label, _)| *label)
            .collect();
        assert_eq!(ours, engine);
    }

    #[test]
    fn unit_format_trims_and_keeps_means() {
        assert_eq!(Unit::Us.format(153_200.0), "153.2");
        assert_eq!(Unit::Us.format(100_000.0), "100");
        assert_eq!(Unit::Ns.format(16_718.2), "16718.2");
        assert_eq!(Unit::Ms.format(1_234_567.0), "1.234567");
        assert_eq!(Unit::S.format(1.0), "0.000000001");
        assert_eq!(Unit::Us.format(-0.0), "0");
        assert_eq!(Unit::Us.format(-1_500.0), "-1.5");
    }

    /// The metrics compared with numbers (all but the levels).
    fn numeric_metrics() -> Vec<Metric> {
        Metric::ALL.into_iter().filter(|&m| !m.is_level()).collect()
    }

    fn spaces() -> impl Strategy<Value = String> {
        "[ \t]{0,2}"
    }

    fn time_unit() -> impl Strategy<Value = (&'static str, Unit)> {
        prop::sample::select(vec![
            ("", Unit::Us),
            ("ns", Unit::Ns),
            ("us", Unit::Us),
            ("µs", Unit::Us),
            ("ms", Unit::Ms),
            ("s", Unit::S),
        ])
    }

    proptest! {
        /// Any well-formed numeric limit, spaced any way, reads back
        /// exactly (`verdict_limits` has the levels).
        #[test]
        fn well_formed_limits_read_back(
            metric in prop::sample::select(numeric_metrics()),
            op in prop::sample::select(Op::ALL.into_iter().filter(|o| !o.is_level_test()).collect::<Vec<_>>()),
            int in 0u64..100_000,
            frac in prop::option::of(0u32..1000),
            negative: bool,
            (unit_text, unit) in time_unit(),
            s in prop::collection::vec(spaces(), 5),
        ) {
            let (value, expected) = if metric.is_count() {
                (int.to_string(), Threshold::Count(int))
            } else {
                // Three decimals at most: whole ns in every unit but ns.
                let frac = if unit == Unit::Ns { None } else { frac };
                let magnitude = int as i64 * unit.nanos()
                    + frac.map_or(0, |f| i64::from(f) * unit.nanos() / 1000);
                let sign = if negative { "-" } else { "" };
                let text = match frac {
                    Some(f) => format!("{sign}{int}.{f:03}"),
                    None => format!("{sign}{int}"),
                };
                let ns = if negative { -magnitude } else { magnitude };
                (format!("{text}{}{unit_text}", s[3]), Threshold::Time { ns, unit })
            };
            let text = format!("{}{}{}{}{}{value}{}", s[0], metric, s[1], op, s[2], s[4]);
            let limits = parse(&text).map_err(|e| TestCaseError::fail(format!("{text:?}: {e}")))?;
            prop_assert_eq!(limits.len(), 1);
            prop_assert_eq!(limits[0].metric, metric);
            prop_assert_eq!(limits[0].op, op);
            prop_assert_eq!(limits[0].threshold, expected);
            // The normalised form reads back to the same limit.
            let again = parse(&limits[0].to_string()).unwrap();
            prop_assert_eq!(&again, &limits);
        }

        /// Lists of limits keep their order and count.
        #[test]
        fn lists_keep_order(picks in prop::collection::vec(0usize..numeric_metrics().len(), 1..8)) {
            let all = numeric_metrics();
            let text = picks
                .iter()
                .map(|&i| format!("{}>1", all[i]))
                .collect::<Vec<_>>()
                .join(" , ");
            let limits = parse(&text).unwrap();
            let metrics: Vec<Metric> = limits.iter().map(|l| l.metric).collect();
            let expected: Vec<Metric> = picks.iter().map(|&i| all[i]).collect();
            prop_assert_eq!(metrics, expected);
        }

        /// Nothing panics, and every error is one line naming the option.
        #[test]
        fn any_text_is_a_result_or_one_line(text in "[a-z0-9.,<>=! µ+-]{0,24}") {
            if let Err(e) = parse(&text) {
                let message = e.to_string();
                prop_assert!(message.starts_with("--fail-if: "));
                prop_assert!(!message.contains('\n'));
            }
        }
    }
}
