//! From samples to the report: medians, the rows of figures with their ratios and targets, and
//! the markdown table.

use std::collections::BTreeMap;

use serde::Serialize;

/// Who produced a figure.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Source {
    /// benches/saxpy through our offload pipeline.
    Ours,
    /// bench_cuda.cu, CUDA by hand.
    Cuda,
    /// bench.c, clang's OpenMP offload.
    Clang,
}

impl Source {
    pub(crate) fn title(self) -> &'static str {
        match self {
            Source::Ours => "ours",
            Source::Cuda => "CUDA by hand",
            Source::Clang => "clang OpenMP",
        }
    }

    /// The short name in ratio headers and targets.
    fn short(self) -> &'static str {
        match self {
            Source::Ours => "ours",
            Source::Cuda => "CUDA",
            Source::Clang => "clang",
        }
    }
}

/// One problem size and its repetition counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub(crate) struct Mode {
    /// f32 elements per array.
    pub(crate) n: u64,
    /// saxpy launches in the preloaded and automatic measurements.
    pub(crate) k: u32,
    /// Empty launches timed.
    pub(crate) launches: u32,
    /// Mapper pairs timed.
    pub(crate) pairs: u32,
}

impl Mode {
    /// `N=64M` (M = 2^20) or `N=4096`.
    pub(crate) fn label(&self) -> String {
        const MI: u64 = 1 << 20;
        if self.n >= MI && self.n.is_multiple_of(MI) {
            format!("N={}M", self.n / MI)
        } else {
            format!("N={}", self.n)
        }
    }
}

/// All samples of one program in one mode, by figure key (`pinned.kernels_ms`).
#[derive(Debug, Serialize)]
pub(crate) struct Series {
    pub(crate) source: Source,
    pub(crate) mode: Mode,
    pub(crate) samples: BTreeMap<String, Vec<f64>>,
    pub(crate) medians: BTreeMap<String, f64>,
}

impl Series {
    pub(crate) fn new(source: Source, mode: Mode) -> Self {
        Series { source, mode, samples: BTreeMap::new(), medians: BTreeMap::new() }
    }

    /// Adds one run's figures.
    pub(crate) fn add(&mut self, values: &BTreeMap<String, f64>) {
        for (key, value) in values {
            self.samples.entry(key.clone()).or_default().push(*value);
        }
    }

    /// Computes the medians once all runs are in.
    pub(crate) fn finish(&mut self) {
        self.medians = self
            .samples
            .iter()
            .filter_map(|(key, samples)| Some((key.clone(), median(samples)?)))
            .collect();
    }
}

/// The median; the mean of the middle two for an even count.
pub(crate) fn median(samples: &[f64]) -> Option<f64> {
    let mut sorted = samples.to_vec();
    sorted.sort_by(f64::total_cmp);
    let mid = sorted.len() / 2;
    match sorted.len() {
        0 => None,
        len if len % 2 == 1 => Some(sorted[mid]),
        _ => Some((sorted[mid - 1] + sorted[mid]) / 2.0),
    }
}

/// One row of the table: a figure, and the target ours must meet against one anchor.
struct RowSpec {
    /// `{k}` stands for the mode's K.
    figure: &'static str,
    key: &'static str,
    /// The anchors' figure for the same work (ours may measure it another way: `kernels_async_ms`
    /// against the anchors' `kernels_ms`).
    anchor_key: &'static str,
    anchor: Source,
    factor: f64,
}

const ROWS: &[RowSpec] = &[
    RowSpec {
        figure: "preloaded total, pageable",
        key: "pageable.preloaded_total_ms",
        anchor_key: "pageable.preloaded_total_ms",
        anchor: Source::Cuda,
        factor: 1.05,
    },
    RowSpec {
        figure: "preloaded total, pinned",
        key: "pinned.preloaded_total_ms",
        anchor_key: "pinned.preloaded_total_ms",
        anchor: Source::Cuda,
        factor: 1.05,
    },
    RowSpec {
        figure: "preloaded total async, pageable",
        key: "pageable.preloaded_total_async_ms",
        anchor_key: "pageable.preloaded_total_ms",
        anchor: Source::Cuda,
        factor: 1.05,
    },
    RowSpec {
        figure: "preloaded total async, pinned",
        key: "pinned.preloaded_total_async_ms",
        anchor_key: "pinned.preloaded_total_ms",
        anchor: Source::Cuda,
        factor: 1.05,
    },
    RowSpec {
        figure: "{k} kernels, pageable",
        key: "pageable.kernels_ms",
        anchor_key: "pageable.kernels_ms",
        anchor: Source::Cuda,
        factor: 1.05,
    },
    RowSpec {
        figure: "{k} kernels, pinned",
        key: "pinned.kernels_ms",
        anchor_key: "pinned.kernels_ms",
        anchor: Source::Cuda,
        factor: 1.05,
    },
    RowSpec {
        figure: "{k} kernels async, pageable",
        key: "pageable.kernels_async_ms",
        anchor_key: "pageable.kernels_ms",
        anchor: Source::Cuda,
        factor: 1.05,
    },
    RowSpec {
        figure: "{k} kernels async, pinned",
        key: "pinned.kernels_async_ms",
        anchor_key: "pinned.kernels_ms",
        anchor: Source::Cuda,
        factor: 1.05,
    },
    RowSpec {
        figure: "automatic total, pageable",
        key: "pageable.automatic_total_ms",
        anchor_key: "pageable.automatic_total_ms",
        anchor: Source::Clang,
        factor: 1.05,
    },
    RowSpec {
        figure: "automatic total, pinned",
        key: "pinned.automatic_total_ms",
        anchor_key: "pinned.automatic_total_ms",
        anchor: Source::Clang,
        factor: 1.05,
    },
    RowSpec {
        figure: "preload pair, data present",
        key: "any.preload_pair_us",
        anchor_key: "any.mapper_pair_us",
        anchor: Source::Clang,
        factor: 1.05,
    },
    RowSpec {
        figure: "empty synchronous launch",
        key: "any.empty_launch_us",
        anchor_key: "any.empty_launch_us",
        anchor: Source::Cuda,
        factor: 2.0,
    },
    RowSpec {
        figure: "empty launch, back to back (async)",
        key: "any.empty_launch_async_us",
        anchor_key: "any.empty_launch_async_us",
        anchor: Source::Cuda,
        factor: 2.0,
    },
];

/// Whether ours meets a target.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub(crate) enum Status {
    #[serde(rename = "met")]
    Met,
    #[serde(rename = "not met")]
    NotMet,
    /// Ours or the anchor was not measured.
    #[serde(rename = "n/a")]
    NotApplicable,
}

impl Status {
    pub(crate) fn text(self) -> &'static str {
        match self {
            Status::Met => "met",
            Status::NotMet => "not met",
            Status::NotApplicable => "n/a",
        }
    }
}

/// `ours <= factor * anchor`, where both were measured.
pub(crate) fn evaluate(ours: Option<f64>, anchor: Option<f64>, factor: f64) -> Status {
    match (ours, anchor) {
        (Some(ours), Some(anchor)) if ours <= factor * anchor => Status::Met,
        (Some(_), Some(_)) => Status::NotMet,
        _ => Status::NotApplicable,
    }
}

/// One figure in one mode, medians side by side.
#[derive(Clone, Debug, Serialize)]
pub(crate) struct Row {
    pub(crate) figure: String,
    pub(crate) mode: String,
    pub(crate) key: &'static str,
    pub(crate) unit: &'static str,
    pub(crate) ours: Option<f64>,
    pub(crate) cuda: Option<f64>,
    pub(crate) clang: Option<f64>,
    pub(crate) ours_over_cuda: Option<f64>,
    pub(crate) ours_over_clang: Option<f64>,
    pub(crate) target_anchor: Source,
    pub(crate) target_factor: f64,
    pub(crate) target: String,
    pub(crate) status: Status,
}

impl Row {
    pub(crate) fn value(&self, source: Source) -> Option<f64> {
        match source {
            Source::Ours => self.ours,
            Source::Cuda => self.cuda,
            Source::Clang => self.clang,
        }
    }
}

/// The rows for every mode, skipping figures no program measured in that mode.
pub(crate) fn rows(modes: &[Mode], series: &[Series]) -> Vec<Row> {
    let mut rows = Vec::new();
    for mode in modes {
        let median = |source: Source, key: &str| {
            series
                .iter()
                .find(|s| s.source == source && s.mode == *mode)
                .and_then(|s| s.medians.get(key).copied())
        };
        for spec in ROWS {
            let (ours, cuda, clang) = (
                median(Source::Ours, spec.key),
                median(Source::Cuda, spec.anchor_key),
                median(Source::Clang, spec.anchor_key),
            );
            if ours.is_none() && cuda.is_none() && clang.is_none() {
                continue;
            }
            let anchor = match spec.anchor {
                Source::Cuda => cuda,
                Source::Clang => clang,
                Source::Ours => unreachable!("targets are against an anchor"),
            };
            rows.push(Row {
                figure: spec.figure.replace("{k}", &mode.k.to_string()),
                mode: mode.label(),
                key: spec.key,
                unit: if spec.key.ends_with("_us") { "us" } else { "ms" },
                ours,
                cuda,
                clang,
                ours_over_cuda: ratio(ours, cuda),
                ours_over_clang: ratio(ours, clang),
                target_anchor: spec.anchor,
                target_factor: spec.factor,
                target: format!("<= {}x {}", spec.factor, spec.anchor.short()),
                status: evaluate(ours, anchor, spec.factor),
            });
        }
    }
    rows
}

fn ratio(numerator: Option<f64>, denominator: Option<f64>) -> Option<f64> {
    Some(numerator? / denominator.filter(|d| *d > 0.0)?)
}

/// The rows as a markdown table.
pub(crate) fn table(rows: &[Row]) -> String {
    let mut out = String::from(
        "| figure | N | ours | CUDA by hand | clang OpenMP | ours/CUDA | ours/clang | target | |\n\
         |---|---|---:|---:|---:|---:|---:|---|---|\n",
    );
    for row in rows {
        let show = |value: Option<f64>| {
            value.map_or("n/a".to_owned(), |v| format!("{} {}", number(v), row.unit))
        };
        let times = |value: Option<f64>| value.map_or("n/a".to_owned(), |v| format!("{v:.2}x"));
        out += &format!(
            "| {} | {} | {} | {} | {} | {} | {} | {} | {} |\n",
            row.figure,
            row.mode.trim_start_matches("N="),
            show(row.ours),
            show(row.cuda),
            show(row.clang),
            times(row.ours_over_cuda),
            times(row.ours_over_clang),
            row.target,
            row.status.text()
        );
    }
    out
}

/// Four significant digits or so: `4400.2`, `26.31`, `1.260`.
pub(crate) fn number(value: f64) -> String {
    if value.abs() >= 100.0 {
        format!("{value:.1}")
    } else if value.abs() >= 10.0 {
        format!("{value:.2}")
    } else {
        format!("{value:.3}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LARGE: Mode = Mode { n: 64 << 20, k: 50, launches: 1000, pairs: 10000 };
    const SMALL: Mode = Mode { n: 4096, k: 50, launches: 1000, pairs: 10000 };

    fn series(source: Source, mode: Mode, figures: &[(&str, f64)]) -> Series {
        let mut series = Series::new(source, mode);
        series.add(&figures.iter().map(|(k, v)| (k.to_string(), *v)).collect());
        series.finish();
        series
    }

    #[test]
    fn medians() {
        assert_eq!(median(&[]), None);
        assert_eq!(median(&[3.0]), Some(3.0));
        assert_eq!(median(&[5.0, 1.0, 3.0]), Some(3.0));
        assert_eq!(median(&[4.0, 1.0, 3.0, 2.0]), Some(2.5));
        assert_eq!(median(&[10.0, 1.0, 1000.0, 2.0, 3.0]), Some(3.0));
    }

    #[test]
    fn series_medians_over_runs() {
        let mut s = Series::new(Source::Ours, LARGE);
        for v in [3.0, 1.0, 2.0] {
            s.add(&BTreeMap::from([("any.empty_launch_us".to_owned(), v)]));
        }
        s.finish();
        assert_eq!(s.samples["any.empty_launch_us"], [3.0, 1.0, 2.0]);
        assert_eq!(s.medians["any.empty_launch_us"], 2.0);
    }

    #[test]
    fn targets() {
        assert_eq!(evaluate(Some(105.0), Some(100.0), 1.05), Status::Met);
        assert_eq!(evaluate(Some(105.1), Some(100.0), 1.05), Status::NotMet);
        assert_eq!(evaluate(Some(17.0), Some(8.8), 2.0), Status::Met);
        assert_eq!(evaluate(Some(18.0), Some(8.8), 2.0), Status::NotMet);
        assert_eq!(evaluate(None, Some(8.8), 2.0), Status::NotApplicable);
        assert_eq!(evaluate(Some(1.0), None, 1.05), Status::NotApplicable);
    }

    #[test]
    fn rows_compare_with_the_target_anchor() {
        let all = [
            series(
                Source::Ours,
                LARGE,
                &[
                    ("pinned.preloaded_total_ms", 27.0),
                    ("pinned.preloaded_total_async_ms", 28.0),
                    ("pageable.automatic_total_ms", 4400.0),
                    ("any.preload_pair_us", 1.5),
                ],
            ),
            series(
                Source::Cuda,
                LARGE,
                &[("pinned.preloaded_total_ms", 26.3), ("pageable.automatic_total_ms", 4000.0)],
            ),
            series(
                Source::Clang,
                LARGE,
                &[("pageable.automatic_total_ms", 4300.0), ("any.mapper_pair_us", 1.3)],
            ),
            series(Source::Ours, SMALL, &[("any.preload_pair_us", 1.2)]),
        ];
        let rows = rows(&[LARGE, SMALL], &all);
        let find = |figure: &str, mode: &str| {
            rows.iter().find(|r| r.figure == figure && r.mode == mode).unwrap()
        };
        let pinned = find("preloaded total, pinned", "N=64M");
        assert_eq!(pinned.status, Status::Met);
        assert!((pinned.ours_over_cuda.unwrap() - 27.0 / 26.3).abs() < 1e-12);
        assert_eq!(pinned.ours_over_clang, None);
        // The asynchronous total against the anchors' one total.
        let pinned_async = find("preloaded total async, pinned", "N=64M");
        assert_eq!(pinned_async.status, Status::NotMet);
        assert_eq!(pinned_async.cuda, Some(26.3));
        // Against clang, whatever CUDA's figure.
        let automatic = find("automatic total, pageable", "N=64M");
        assert_eq!((automatic.status, automatic.target.as_str()), (Status::Met, "<= 1.05x clang"));
        let pair = find("preload pair, data present", "N=64M");
        assert_eq!(pair.status, Status::NotMet);
        assert_eq!(pair.unit, "us");
        assert_eq!(find("preload pair, data present", "N=4096").status, Status::NotApplicable);
        // Figures nobody measured are left out.
        assert!(!rows.iter().any(|r| r.figure == "50 kernels, pinned"));
        assert_eq!(rows.len(), 5);
        let table = table(&rows);
        assert!(table.contains("| preloaded total, pinned | 64M | 27.00 ms | 26.30 ms | n/a | 1.03x | n/a | <= 1.05x CUDA | met |"), "{table}");
        assert!(table.contains("| preload pair, data present | 4096 | 1.200 us | n/a | n/a | n/a | n/a | <= 1.05x clang | n/a |"), "{table}");
    }

    #[test]
    fn mode_labels() {
        assert_eq!(LARGE.label(), "N=64M");
        assert_eq!(SMALL.label(), "N=4096");
    }
}
