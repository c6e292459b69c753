//! The `--json` document as serde types: what rtlat writes (its
//! `report/json.rs` serialises these) and what readers get back.
//!
//! The document is rt-tests 2.4's (`cyclictest --json`) with rtlat's keys
//! added, never replacing any:
//!
//! - the envelope, [`Header`]: `file_version`, `"cmdline:"`,
//!   `"rt_test_version:"` (C's key names, colons included), rtlat's
//!   `rtlat_version` (absent in C's documents: that is how they are told
//!   apart), `start_time`, `end_time`, `return_code` and [`SysInfo`];
//! - `num_threads`, `resolution_in_ns` (1: C's µs figures and histogram
//!   buckets are ns) and the `thread` object, `"0": {...}` per measuring
//!   thread: cyclictest's and signaltest's are a [`CyclicThread`], the IPC
//!   tools' a `sender` and a `receiver`;
//! - rtlat's `all_threads` ([`Percentiles`] of every sample), then
//!   `environment`, `audit` and `verdict` (rtlat's own types, read back
//!   here as plain JSON).
//!
//! Reading takes any of these documents through [`ThreadResult`], which
//! holds what every tool's thread has in common and leaves the rest.

use std::collections::BTreeMap;
use std::fmt;

use serde::de::{self, MapAccess, Visitor};
use serde::ser::SerializeMap;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// The envelope every document opens with (C's keys, and rtlat's version).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Header {
    /// 1.
    pub file_version: u32,
    /// The command line of the run.
    #[serde(rename = "cmdline:")]
    pub cmdline: String,
    /// The rt-tests version the document claims: `"2.40"` in rtlat's.
    #[serde(rename = "rt_test_version:")]
    pub rt_test_version: String,
    /// rtlat's version; `None` in the C tools' documents.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rtlat_version: Option<String>,
    /// When the run started (`Sun, 22 Nov 2026 01:44:57 +0000`).
    pub start_time: String,
    /// When it ended.
    pub end_time: String,
    /// The exit status the run reported.
    pub return_code: i32,
    /// The machine.
    pub sysinfo: SysInfo,
}

/// `uname` and whether the kernel says it is real-time: the `sysinfo`
/// object, as rtlat builds it for a run and as a document holds it.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct SysInfo {
    /// `Linux`.
    pub sysname: String,
    /// The host name.
    pub nodename: String,
    /// The kernel release (`6.1.0-rt`).
    pub release: String,
    /// The kernel version string.
    pub version: String,
    /// `x86_64`.
    pub machine: String,
    /// `/sys/kernel/realtime` reads 1 (a PREEMPT_RT kernel); written 0 or
    /// 1, a number as in C (any number but 0 reads as true).
    #[serde(with = "zero_or_one")]
    pub realtime: bool,
}

/// A flag written as C writes it, the number 0 or 1.
mod zero_or_one {
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(flag: &bool, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_u8(u8::from(*flag))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<bool, D::Error> {
        Ok(u8::deserialize(d)? != 0)
    }
}

/// The keys of a [`Percentiles`] object, in the order written.
pub const PERCENTILE_KEYS: [&str; 7] = ["p50", "p90", "p99", "p99.9", "p99.99", "p99.999", "max"];

/// `{"p50": µs, "p90": .., "p99": .., "p99.9": .., "p99.99": ..,
/// "p99.999": .., "max": µs}`: µs with 3 decimals, `null` without
/// samples. Every key must be present when read.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Percentiles {
    /// The median.
    #[serde(deserialize_with = "Option::deserialize")]
    pub p50: Option<f64>,
    /// The 90th percentile.
    #[serde(deserialize_with = "Option::deserialize")]
    pub p90: Option<f64>,
    /// The 99th percentile.
    #[serde(deserialize_with = "Option::deserialize")]
    pub p99: Option<f64>,
    /// The 99.9th percentile.
    #[serde(rename = "p99.9", deserialize_with = "Option::deserialize")]
    pub p99_9: Option<f64>,
    /// The 99.99th percentile.
    #[serde(rename = "p99.99", deserialize_with = "Option::deserialize")]
    pub p99_99: Option<f64>,
    /// The 99.999th percentile.
    #[serde(rename = "p99.999", deserialize_with = "Option::deserialize")]
    pub p99_999: Option<f64>,
    /// The largest sample.
    #[serde(deserialize_with = "Option::deserialize")]
    pub max: Option<f64>,
}

impl Percentiles {
    /// `value` read as percentiles, every key present; `None` when absent
    /// or `null`.
    pub fn read(value: Option<&serde_json::Value>) -> Result<Option<Percentiles>, String> {
        match value {
            None | Some(serde_json::Value::Null) => Ok(None),
            Some(v) => Percentiles::deserialize(v)
                .map(Some)
                .map_err(|e| e.to_string()),
        }
    }

    /// The value under `key` (one of [`PERCENTILE_KEYS`]); `None` for
    /// another key.
    pub fn get(&self, key: &str) -> Option<Option<f64>> {
        self.slot(key).copied()
    }

    /// Sets the value under `key`; false (and nothing set) when `key` is
    /// not one of [`PERCENTILE_KEYS`].
    pub fn set(&mut self, key: &str, value: Option<f64>) -> bool {
        match self.slot_mut(key) {
            Some(slot) => {
                *slot = value;
                true
            }
            None => false,
        }
    }

    fn slot(&self, key: &str) -> Option<&Option<f64>> {
        Some(match key {
            "p50" => &self.p50,
            "p90" => &self.p90,
            "p99" => &self.p99,
            "p99.9" => &self.p99_9,
            "p99.99" => &self.p99_99,
            "p99.999" => &self.p99_999,
            "max" => &self.max,
            _ => return None,
        })
    }

    fn slot_mut(&mut self, key: &str) -> Option<&mut Option<f64>> {
        Some(match key {
            "p50" => &mut self.p50,
            "p90" => &mut self.p90,
            "p99" => &mut self.p99,
            "p99.9" => &mut self.p99_9,
            "p99.99" => &mut self.p99_99,
            "p99.999" => &mut self.p99_999,
            "max" => &mut self.max,
            _ => return None,
        })
    }
}

/// rtlat's full distribution of a thread's samples: `{"unit": "us",
/// "buckets": [[from, to, count], ...]}`, the non-empty buckets lowest
/// first, each holding the samples `from <= v < to` (µs, 3 decimals):
/// 1 µs wide at first, log-linear in the tail.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Distribution {
    /// Always `us`.
    pub unit: String,
    /// `(from, to, count)`.
    pub buckets: Vec<(f64, f64, u64)>,
}

impl Distribution {
    /// The unit rtlat writes, and the only one read.
    pub const UNIT: &str = "us";

    /// `buckets` (µs) as a distribution.
    pub fn of_buckets(buckets: Vec<(f64, f64, u64)>) -> Distribution {
        Distribution {
            unit: Distribution::UNIT.to_string(),
            buckets,
        }
    }

    /// Checks what serde cannot: the unit is `us` and every bucket is
    /// finite with `from < to`. The problem, one line, otherwise.
    pub fn check(&self) -> Result<(), String> {
        Distribution::check_parts(&self.unit, &self.buckets)
    }

    /// [`Distribution::check`] of a distribution's `unit` and `buckets`.
    pub fn check_parts(unit: &str, buckets: &[(f64, f64, u64)]) -> Result<(), String> {
        if unit != Distribution::UNIT {
            return Err(format!("unit '{unit}', expected 'us'"));
        }
        match buckets
            .iter()
            .find(|(from, to, _)| !(from < to && from.is_finite() && to.is_finite()))
        {
            Some((from, to, count)) => Err(format!(
                "bucket [{from},{to},{count}] is not [from, to, count] with from < to"
            )),
            None => Ok(()),
        }
    }
}

/// cyclictest's per-thread `histogram`: `{"<bucket>": count, ...}`, the
/// non-zero buckets in bucket order (1 µs each, 1 ns with
/// `resolution_in_ns: 1`); `{}` without `-h`. How its keys were written
/// is kept: C oslat's figures are ns where they have decimals.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Histogram(pub BTreeMap<i64, u64>, pub BucketLabels);

/// How a histogram's keys are written.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum BucketLabels {
    /// Whole numbers: buckets (cyclictest) or whole µs (oslat).
    #[default]
    Whole,
    /// Some key with decimals: oslat's `-W` below 1 µs or not in whole
    /// µs (rt-tests 2.5 on), each key its bucket's upper edge.
    Fractional,
}

impl Serialize for Histogram {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(Some(self.0.len()))?;
        for (bucket, count) in &self.0 {
            // serde_json writes integer map keys as strings.
            map.serialize_entry(bucket, count)?;
        }
        map.end()
    }
}

impl<'de> Deserialize<'de> for Histogram {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Histogram, D::Error> {
        d.deserialize_map(HistogramVisitor)
    }
}

struct HistogramVisitor;

impl<'de> Visitor<'de> for HistogramVisitor {
    type Value = Histogram;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an object of \"<bucket>\": count")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Histogram, A::Error> {
        let mut buckets = BTreeMap::new();
        let mut labels = BucketLabels::Whole;
        while let Some(key) = map.next_key::<String>()? {
            if key.contains('.') {
                labels = BucketLabels::Fractional;
            }
            let bucket = bucket_of(key.trim())
                .ok_or_else(|| de::Error::custom(format!("bucket '{key}' is not a number")))?;
            let count: serde_json::Value = map.next_value()?;
            let count = count.as_u64().ok_or_else(|| {
                de::Error::custom(format!("bucket '{key}' has count {count}, not a count"))
            })?;
            // A bucket named twice: its counts added, never wrapped.
            let total: &mut u64 = buckets.entry(bucket).or_insert(0);
            *total = total.checked_add(count).ok_or_else(|| {
                de::Error::custom(format!(
                    "bucket '{key}': the counts add up to more than {} (2^64 - 1)",
                    u64::MAX
                ))
            })?;
        }
        Ok(Histogram(buckets, labels))
    }
}

/// A bucket's key: a whole number, or oslat's fractional label (`-W`
/// below 1 µs, `"0.250"`: the bucket's upper edge) rounded up to the
/// whole µs bucket that holds it, its counts added to that bucket's.
fn bucket_of(key: &str) -> Option<i64> {
    if let Ok(whole) = key.parse::<i64>() {
        return Some(whole);
    }
    let (int, frac) = key.split_once('.')?;
    if int.is_empty()
        || frac.is_empty()
        || !(int.bytes().chain(frac.bytes())).all(|b| b.is_ascii_digit())
    {
        return None;
    }
    let whole: i64 = int.parse().ok()?;
    Some(if frac.bytes().all(|b| b == b'0') {
        whole
    } else {
        whole.checked_add(1)?
    })
}

/// A measuring thread's `"disturbances"` object, counted between its first
/// and last sample.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Disturbances {
    /// Times it was switched out against its will.
    pub involuntary_switches: u64,
    /// Moves to another CPU; `null` where the kernel does not count them.
    pub migrations: Option<u64>,
    /// Minor page faults.
    pub minor_faults: u64,
    /// Major page faults.
    pub major_faults: u64,
}

/// A thread's wake-ups as `--explain` followed them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Wakeups {
    /// Wake-ups whose switch into the thread was traced.
    pub switch_traced: u64,
    /// Those whose switch was not.
    pub switch_not_traced: u64,
}

/// One thread of `rtlat cyclictest --json` (and `rtlat latency`'s): C's
/// keys first, in C's order, then rtlat's.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct CyclicThread {
    /// The non-zero buckets of `-h`; `{}` without it, absent in rt-tests
    /// 2.7 and later's documents (`--rt-tests=2.10`) without it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub histogram: Option<Histogram>,
    /// Samples taken.
    pub cycles: u64,
    /// The smallest, as C shows it (µs, ns with `-N`).
    pub min: i64,
    /// The largest, as C shows it.
    pub max: i64,
    /// `%.2f` of the exact average; `null` without samples (C: `-nan`).
    pub avg: Option<f64>,
    /// -1 when not pinned.
    pub cpu: i64,
    /// -1 when unknown.
    pub node: i64,
    /// Periods missed.
    pub overruns: u64,
    /// The smallest, ns.
    pub min_ns: Option<i64>,
    /// The largest, ns.
    pub max_ns: Option<i64>,
    /// The mean, ns (1 decimal).
    pub mean_ns: Option<f64>,
    /// Sample standard deviation in µs (3 decimals) of the ns samples;
    /// `null` without samples, left out without a sum of squares (both read
    /// back as `None`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stddev: Option<Option<f64>>,
    /// The thread's id.
    pub tid: i32,
    /// Its real-time priority.
    pub priority: u8,
    /// Its period, µs.
    pub interval_us: i64,
    /// `--smi`: SMIs counted on its CPU.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub smi_count: Option<u64>,
    /// What disturbed it (real runs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub disturbances: Option<Disturbances>,
    /// Its percentiles.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub percentiles: Option<Percentiles>,
    /// Every sample.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub distribution: Option<Distribution>,
    /// `--explain`: programmed expiry to the timer's handler.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub irq_latency: Option<Percentiles>,
    /// `--explain`: wake-up to the switch into the thread.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thread_latency: Option<Percentiles>,
    /// `--explain`: the wake-ups in those.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wakeups: Option<Wakeups>,
    /// When its largest sample (`max_ns`) was taken: Unix seconds, 6
    /// decimals; `null` without samples. Written always, read as `None`
    /// from documents written before it.
    #[serde(default)]
    pub max_time: Option<f64>,
    /// Its run as blocks of equal length (what the projection and
    /// `rtlat compare` work on).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub blocks: Option<crate::blocks::BlocksDoc>,
}

/// What a reader takes of any tool's thread: cyclictest's and
/// signaltest's (rtlat's or C's), or an IPC pair's (whose latencies are
/// its `receiver`'s, counted in `samples`). Keys it does not name are
/// left alone.
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
pub struct ThreadResult {
    /// Samples taken (cyclictest, signaltest).
    pub cycles: Option<u64>,
    /// Samples taken (an IPC receiver).
    pub samples: Option<u64>,
    /// The smallest, as C shows it (µs, ns with `resolution_in_ns: 1`).
    pub min: Option<f64>,
    /// The largest, as C shows it.
    pub max: Option<f64>,
    /// The CPU; -1 when not pinned.
    pub cpu: Option<i64>,
    /// rtlat: the smallest, ns.
    pub min_ns: Option<i64>,
    /// rtlat: the largest, ns.
    pub max_ns: Option<i64>,
    /// The `-h` buckets.
    pub histogram: Option<Histogram>,
    /// rtlat: its percentiles, read as [`Percentiles`] by
    /// [`ThreadResult::percentiles`] only (a reader that does not need them
    /// does not refuse a file for them).
    pub percentiles: Option<serde_json::Value>,
    /// rtlat: every sample.
    pub distribution: Option<Distribution>,
    /// An IPC pair's receiving side, which holds its latencies.
    pub receiver: Option<Box<ThreadResult>>,
    /// rtlat: its run as blocks of equal length, read as a series by
    /// [`crate::blocks::BlocksDoc::to_series`].
    pub blocks: Option<crate::blocks::BlocksDoc>,
}

impl ThreadResult {
    /// The side that holds the latencies: an IPC pair's receiver, or the
    /// thread itself.
    pub fn latencies(&self) -> &ThreadResult {
        self.receiver.as_deref().unwrap_or(self)
    }

    /// [`ThreadResult::latencies`], taking the thread.
    pub fn into_latencies(self) -> ThreadResult {
        match self.receiver {
            Some(receiver) => *receiver,
            None => self,
        }
    }

    /// Samples taken (`cycles`, or an IPC receiver's `samples`, or, for
    /// C oslat's threads, which have neither, their histogram's counts:
    /// every gap is in a bucket).
    pub fn sample_count(&self) -> Option<u64> {
        self.cycles.or(self.samples).or_else(|| {
            let h = self.histogram.as_ref()?;
            (self.min.is_some() && self.max.is_some()).then(|| h.0.values().sum())
        })
    }

    /// Its `percentiles`, every key present (a number or `null`); `None`
    /// when it has none.
    pub fn percentiles(&self) -> Result<Option<Percentiles>, String> {
        Percentiles::read(self.percentiles.as_ref())
    }
}
