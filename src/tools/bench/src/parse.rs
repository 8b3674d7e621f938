//! Parsers of what the three benchmarks print: ours (`bench KIND METRIC VALUE` lines), the CUDA
//! anchor and the clang OpenMP anchor (their lines matched against the anchors' printf formats).
//!
//! Every figure the report uses must be there: a missing line is an error that names it, never a
//! zero.

use std::collections::BTreeMap;

use anyhow::{Context as _, Result, anyhow, bail};

/// What one run printed: figures by `KIND.METRIC` (`pageable.kernels_ms`, `any.preload_pair_us`),
/// the device it names, and whether its results checked out.
#[derive(Debug, Default, PartialEq)]
pub(crate) struct RunFigures {
    pub(crate) device: Option<String>,
    pub(crate) values: BTreeMap<String, f64>,
    pub(crate) pass: bool,
}

/// Host memory kinds, as figure keys name them.
pub(crate) const MEMORY_KINDS: [&str; 2] = ["pageable", "pinned"];

/// What ours prints for each host memory kind.
const OURS_PER_MEMORY: &[&str] =
    &["preloaded_total_ms", "map_in_ms", "kernels_ms", "map_out_ms", "automatic_total_ms"];

/// What ours prints once, whatever the host memory (`bench any ...`).
const OURS_ANY: &[&str] = &["empty_launch_us", "empty_launch_async_us", "preload_pair_us"];

/// Ours: `bench device NAME`, `bench KIND METRIC VALUE` (KIND: pageable, pinned or any) and
/// `bench result PASS|FAIL`; other lines are ignored. Metrics beyond the required ones are kept.
pub(crate) fn parse_ours(text: &str) -> Result<RunFigures> {
    let mut figures = RunFigures::default();
    let mut result = None;
    for line in text.lines() {
        let Some(rest) = line.strip_prefix("bench ") else { continue };
        if let Some(device) = rest.strip_prefix("device ") {
            figures.device = Some(device.trim().to_owned());
            continue;
        }
        if let Some(outcome) = rest.strip_prefix("result ") {
            result = Some(outcome.trim().to_owned());
            continue;
        }
        let fields: Vec<&str> = rest.split_whitespace().collect();
        // Other `bench` lines (`bench config n=...`) are not figures.
        if !fields.first().is_some_and(|kind| MEMORY_KINDS.contains(kind) || *kind == "any") {
            continue;
        }
        let [kind, metric, value] = fields[..] else {
            bail!("saxpy-bench line `{line}` is not `bench KIND METRIC VALUE`")
        };
        let value = number(value).with_context(|| format!("in saxpy-bench line `{line}`"))?;
        if figures.values.insert(format!("{kind}.{metric}"), value).is_some() {
            bail!("saxpy-bench printed `bench {kind} {metric}` twice");
        }
    }
    let required = MEMORY_KINDS
        .iter()
        .flat_map(|kind| OURS_PER_MEMORY.iter().map(move |metric| (*kind, *metric)))
        .chain(OURS_ANY.iter().map(|metric| ("any", *metric)));
    let missing: Vec<String> = required
        .filter(|(kind, metric)| !figures.values.contains_key(&format!("{kind}.{metric}")))
        .map(|(kind, metric)| format!("`bench {kind} {metric} VALUE` line"))
        .collect();
    if !missing.is_empty() {
        bail!("saxpy-bench printed no {}", missing.join(", no "));
    }
    if figures.device.is_none() {
        bail!("saxpy-bench printed no `bench device NAME` line");
    }
    figures.pass = match result.as_deref() {
        Some("PASS") => true,
        Some("FAIL") => false,
        Some(other) => bail!("saxpy-bench printed `bench result {other}` (PASS or FAIL expected)"),
        None => bail!("saxpy-bench printed no `bench result PASS|FAIL` line"),
    };
    Ok(figures)
}

// The CUDA anchor's lines (bench_cuda.cu), format strings copied byte for byte.
const CUDA_DEVICE: &str = "device: %s, %d SMs, cc %d.%d; N=%ld (%.1f MB/array) K=%d";
const CUDA_PRELOADED: &str = "[%s] preloaded by hand : total %.3f ms = in %.3f ms (%.2f GB/s) + %d kernels %.3f ms (%.3f ms/kernel, %.1f GB/s DRAM) + out %.3f ms (%.2f GB/s), errors=%ld";
const CUDA_PER_ITERATION: &str = "[%s] per-iter copy      : total %.3f ms, %.3f ms/iter, %.2f GB/s effective, %.1fx preloaded, errors=%ld";
const CUDA_EMPTY_KERNEL: &str =
    "empty kernel: %.3f us/launch with sync each, %.3f us/launch back-to-back async (%d launches)";
const RESULT: &str = "RESULT: %s";

/// The CUDA anchor, which measures both host memory kinds in one run (`[pageable]`, `[pinned  ]`).
pub(crate) fn parse_cuda(text: &str) -> Result<RunFigures> {
    const PROGRAM: &str = "bench_cuda";
    let mut figures = RunFigures::default();
    let device = find_line(PROGRAM, text, CUDA_DEVICE)?;
    figures.device = Some(device[0].trim().to_owned());
    for kind in MEMORY_KINDS {
        // The tag is printed padded to eight characters: `[pinned  ]`.
        let tagged = |format: &str| find_tagged(PROGRAM, text, format, kind);
        let preloaded = tagged(CUDA_PRELOADED)?;
        let per_iteration = tagged(CUDA_PER_ITERATION)?;
        let what = format!("{PROGRAM}'s [{kind}] lines");
        for (metric, value) in [
            ("preloaded_total_ms", preloaded[1]),
            ("map_in_ms", preloaded[2]),
            ("kernels_ms", preloaded[5]),
            ("map_out_ms", preloaded[8]),
            ("automatic_total_ms", per_iteration[1]),
        ] {
            figures
                .values
                .insert(format!("{kind}.{metric}"), number(value).with_context(|| what.clone())?);
        }
    }
    let empty = find_line(PROGRAM, text, CUDA_EMPTY_KERNEL)?;
    figures.values.insert(
        "any.empty_launch_us".into(),
        number(empty[0]).context("in bench_cuda's empty kernel line")?,
    );
    figures.values.insert(
        "any.empty_launch_async_us".into(),
        number(empty[1]).context("in bench_cuda's empty kernel line")?,
    );
    figures.pass = find_line(PROGRAM, text, RESULT)?[0].trim() == "PASS";
    Ok(figures)
}

// The clang OpenMP anchor's lines (bench.c), format strings copied byte for byte.
const CLANG_HOST_MEMORY: &str = "host memory: %s (x=%p)";
const CLANG_AUTOMATIC: &str =
    "(a) auto      : total %.3f ms, %.3f ms/iter, moved %.2f GB -> %.2f GB/s effective, errors=%ld";
const CLANG_PRELOADED: &str = "(b) preloaded : total %.3f ms = map-in %.3f ms (%.2f GB/s) + %d kernels %.3f ms (%.3f ms/kernel, %.1f GB/s DRAM) + map-out %.3f ms (%.2f GB/s), errors=%ld";
const CLANG_PAIR: &str = "(c) enter/exit data pair on present data: %.3f us/pair (%d pairs); empty 'target data' with 2 present maps: %.3f us";
const CLANG_LAUNCH: &str = "(d) empty 'target' launch: %.3f us/launch; tiny 'target teams distribute parallel for' (32 iters): %.3f us/launch (%d launches)";

/// The clang OpenMP anchor, one host memory kind per run (`BENCH_PINNED=1` for pinned): its
/// transfer figures go under that kind, its latencies under `any`.
pub(crate) fn parse_clang(text: &str, pinned: bool) -> Result<RunFigures> {
    const PROGRAM: &str = "bench_omp";
    let kind = if pinned { "pinned" } else { "pageable" };
    let memory = find_line(PROGRAM, text, CLANG_HOST_MEMORY)?;
    if memory[0].starts_with("PINNED") != pinned {
        bail!("bench_omp ran with host memory `{}`, expected {kind}", memory[0]);
    }
    let automatic = find_line(PROGRAM, text, CLANG_AUTOMATIC)?;
    let preloaded = find_line(PROGRAM, text, CLANG_PRELOADED)?;
    let pair = find_line(PROGRAM, text, CLANG_PAIR)?;
    let launch = find_line(PROGRAM, text, CLANG_LAUNCH)?;
    let mut figures = RunFigures::default();
    for (key, value) in [
        (format!("{kind}.automatic_total_ms"), automatic[0]),
        (format!("{kind}.preloaded_total_ms"), preloaded[0]),
        (format!("{kind}.map_in_ms"), preloaded[1]),
        (format!("{kind}.kernels_ms"), preloaded[4]),
        (format!("{kind}.map_out_ms"), preloaded[7]),
        ("any.mapper_pair_us".into(), pair[0]),
        ("any.target_data_us".into(), pair[2]),
        ("any.empty_launch_us".into(), launch[0]),
        ("any.tiny_launch_us".into(), launch[1]),
    ] {
        let value = number(value).with_context(|| format!("bench_omp's figure {key}"))?;
        figures.values.insert(key, value);
    }
    figures.pass = find_line(PROGRAM, text, RESULT)?[0].trim() == "PASS";
    Ok(figures)
}

/// The first line that matches `format`, as the text of each conversion.
fn find_line<'a>(program: &str, text: &'a str, format: &str) -> Result<Vec<&'a str>> {
    text.lines()
        .find_map(|line| scan(format, line))
        .ok_or_else(|| anyhow!("{program} printed no line `{format}`"))
}

/// The first line that matches `format` whose leading `[%s]` tag is `kind`.
fn find_tagged<'a>(program: &str, text: &'a str, format: &str, kind: &str) -> Result<Vec<&'a str>> {
    text.lines()
        .filter_map(|line| scan(format, line))
        .find(|fields| fields[0].trim() == kind)
        .ok_or_else(|| {
            anyhow!(
                "{program} printed no line `{}`",
                format.replacen("%s", &format!("{kind:<8}"), 1)
            )
        })
}

/// Matches `line` against a printf format whose conversions (`%d`, `%ld`, `%.3f`, `%s`, `%p`)
/// each stand for the text up to the literal after them; returns that text, one per conversion,
/// or `None` where the literal text differs.
fn scan<'a>(format: &str, line: &'a str) -> Option<Vec<&'a str>> {
    let pieces = split_format(format);
    let mut rest = line.trim_end();
    let mut fields = Vec::new();
    for (i, piece) in pieces.iter().enumerate() {
        match piece {
            Piece::Literal(text) => rest = rest.strip_prefix(text.as_str())?,
            Piece::Conversion => {
                let end = match pieces.get(i + 1) {
                    Some(Piece::Literal(next)) => rest.find(next.as_str())?,
                    _ => rest.len(),
                };
                let (field, after) = rest.split_at(end);
                if field.is_empty() {
                    return None;
                }
                fields.push(field);
                rest = after;
            }
        }
    }
    rest.is_empty().then_some(fields)
}

#[derive(Debug, PartialEq)]
enum Piece {
    Literal(String),
    Conversion,
}

/// `"total %.3f ms"` -> `[Literal("total "), Conversion, Literal(" ms")]`.
fn split_format(format: &str) -> Vec<Piece> {
    let mut pieces = Vec::new();
    let mut literal = String::new();
    let mut chars = format.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '%' {
            literal.push(c);
            continue;
        }
        if chars.peek() == Some(&'%') {
            chars.next();
            literal.push('%');
            continue;
        }
        // Flags, width, precision and length modifiers, then the conversion letter.
        while chars
            .next_if(|c| c.is_ascii_digit() || matches!(c, '.' | '-' | '+' | ' ' | 'l' | 'z'))
            .is_some()
        {}
        chars.next();
        if !literal.is_empty() {
            pieces.push(Piece::Literal(std::mem::take(&mut literal)));
        }
        pieces.push(Piece::Conversion);
    }
    if !literal.is_empty() {
        pieces.push(Piece::Literal(literal));
    }
    pieces
}

/// A finite number; anything else is an error naming the text.
fn number(text: &str) -> Result<f64> {
    let value: f64 = text.trim().parse().map_err(|_| anyhow!("`{text}` is not a number"))?;
    if !value.is_finite() {
        bail!("`{text}` is not a finite number");
    }
    Ok(value)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// What saxpy-bench prints, with lines it may add around the figures.
    pub(crate) const OURS: &str = "\
saxpy-bench: N=67108864 K=50
bench device NVIDIA H200 (CUDA)
bench config n=67108864 k=50 launches=1000 pairs=10000
bench pageable preloaded_total_ms 95.125
bench pageable map_in_ms 60.5
bench pageable map_out_ms 22.4
bench pageable kernels_ms 12.2
bench pageable automatic_total_ms 4400.2
bench pinned preloaded_total_ms 27.0
bench pinned map_in_ms 2.5
bench pinned kernels_ms 11.9
bench pinned map_out_ms 1.2
bench pinned automatic_total_ms 760.5
bench any empty_launch_us 27.1
bench any empty_launch_async_us 4.2
bench any preload_pair_us 1.4
note: all good
bench result PASS
";

    /// bench_cuda.cu's printf formats filled in.
    pub(crate) const CUDA: &str = "\
CUDA context init: 180.311 ms
device: NVIDIA H200, 132 SMs, cc 9.0; N=67108864 (268.4 MB/array) K=50
[pageable] preloaded by hand : total 100.512 ms = in 63.201 ms (8.49 GB/s) + 50 kernels 11.900 ms (0.238 ms/kernel, 3383.2 GB/s DRAM) + out 25.411 ms (10.56 GB/s), errors=0
[pageable] per-iter copy      : total 4215.110 ms, 84.302 ms/iter, 9.55 GB/s effective, 41.9x preloaded, errors=0
[pageable] per-iter copy+alloc: total 4620.001 ms, 92.400 ms/iter, 8.71 GB/s effective, errors=0
[pageable] cudaMemcpy 268.4 MB   : H2D 31.002 ms = 8.66 GB/s, D2H 16.800 ms = 15.98 GB/s
[pinned  ] preloaded by hand : total 26.310 ms = in 9.760 ms (55.00 GB/s) + 50 kernels 11.700 ms (0.234 ms/kernel, 3441.2 GB/s DRAM) + out 4.850 ms (55.34 GB/s), errors=0
[pinned  ] per-iter copy      : total 740.220 ms, 14.804 ms/iter, 54.40 GB/s effective, 28.1x preloaded, errors=0
[pinned  ] per-iter copy+alloc: total 912.000 ms, 18.240 ms/iter, 44.15 GB/s effective, errors=0
[pinned  ] cudaMemcpy 268.4 MB   : H2D 4.880 ms = 55.00 GB/s, D2H 4.870 ms = 55.11 GB/s
empty kernel: 8.800 us/launch with sync each, 2.100 us/launch back-to-back async (1000 launches)
RESULT: PASS
";

    /// bench.c's printf formats filled in, for one host memory kind.
    pub(crate) fn clang(pinned: bool) -> String {
        let memory = if pinned {
            "PINNED via omp_alloc(llvm_omp_target_host_mem_alloc)"
        } else {
            "pageable malloc"
        };
        format!(
            "\
N=67108864 floats (268.4 MB/array) K=50 num_devices=1 default_device=0 initial_device=1
host memory: {memory} (x=0x7f0000000000)
first target region (device init + image load): 250.100 ms, ran on device
(a) auto      : total 4350.000 ms, 87.000 ms/iter, moved 40.27 GB -> 9.26 GB/s effective, errors=0
    host x=0x7f0000000000, device x=0x7e0000000000 (separate device copy)
(b) preloaded : total 120.000 ms = map-in 60.000 ms (8.95 GB/s) + 50 kernels 38.500 ms (0.770 ms/kernel, 1045.8 GB/s DRAM) + map-out 21.500 ms (12.48 GB/s), errors=0
    auto/preloaded speedup: 36.3x
(e) target update (pageable): H2D 31.000 ms = 8.66 GB/s, D2H 16.000 ms = 16.78 GB/s (268.4 MB each)
(c) enter/exit data pair on present data: 1.350 us/pair (10000 pairs); empty 'target data' with 2 present maps: 2.100 us
(d) empty 'target' launch: 30.000 us/launch; tiny 'target teams distribute parallel for' (32 iters): 35.000 us/launch (1000 launches)
RESULT: PASS
"
        )
    }

    #[test]
    fn ours_parses() {
        let figures = parse_ours(OURS).unwrap();
        assert_eq!(figures.device.as_deref(), Some("NVIDIA H200 (CUDA)"));
        assert!(figures.pass);
        assert_eq!(figures.values["pageable.preloaded_total_ms"], 95.125);
        assert_eq!(figures.values["pinned.automatic_total_ms"], 760.5);
        assert_eq!(figures.values["any.preload_pair_us"], 1.4);
        assert_eq!(figures.values["any.empty_launch_async_us"], 4.2);
        assert_eq!(figures.values.len(), 13);
        assert!(!parse_ours(&OURS.replace("result PASS", "result FAIL")).unwrap().pass);
    }

    #[test]
    fn ours_missing_lines_are_named() {
        let text = OURS
            .replace("bench pinned kernels_ms 11.9\n", "")
            .replace("bench any preload_pair_us 1.4\n", "");
        let error = parse_ours(&text).unwrap_err().to_string();
        assert_eq!(
            error,
            "saxpy-bench printed no `bench pinned kernels_ms VALUE` line, no `bench any preload_pair_us VALUE` line"
        );
        let error = parse_ours(&OURS.replace("bench result PASS\n", "")).unwrap_err().to_string();
        assert!(error.contains("no `bench result PASS|FAIL` line"), "{error}");
        let error = parse_ours(&OURS.replace("bench device NVIDIA H200 (CUDA)\n", ""))
            .unwrap_err()
            .to_string();
        assert!(error.contains("no `bench device NAME` line"), "{error}");
    }

    #[test]
    fn ours_malformed_lines_are_errors() {
        assert!(parse_ours(&OURS.replace("kernels_ms 12.2", "kernels_ms fast")).is_err());
        assert!(parse_ours(&OURS.replace("kernels_ms 12.2", "kernels_ms NaN")).is_err());
        assert!(parse_ours(&OURS.replace("kernels_ms 12.2", "kernels_ms 12.2 ms")).is_err());
        assert!(parse_ours(&format!("{OURS}bench any preload_pair_us 1.5\n")).is_err());
        assert!(parse_ours(&OURS.replace("result PASS", "result MAYBE")).is_err());
    }

    #[test]
    fn cuda_parses() {
        let figures = parse_cuda(CUDA).unwrap();
        assert_eq!(figures.device.as_deref(), Some("NVIDIA H200"));
        assert!(figures.pass);
        let expected = [
            ("pageable.preloaded_total_ms", 100.512),
            ("pageable.map_in_ms", 63.201),
            ("pageable.kernels_ms", 11.9),
            ("pageable.map_out_ms", 25.411),
            ("pageable.automatic_total_ms", 4215.11),
            ("pinned.preloaded_total_ms", 26.31),
            ("pinned.map_in_ms", 9.76),
            ("pinned.kernels_ms", 11.7),
            ("pinned.map_out_ms", 4.85),
            ("pinned.automatic_total_ms", 740.22),
            ("any.empty_launch_us", 8.8),
            ("any.empty_launch_async_us", 2.1),
        ];
        for (key, value) in expected {
            assert_eq!(figures.values[key], value, "{key}");
        }
        assert_eq!(figures.values.len(), expected.len());
        assert!(!parse_cuda(&CUDA.replace("RESULT: PASS", "RESULT: FAIL")).unwrap().pass);
    }

    #[test]
    fn cuda_missing_lines_are_named() {
        let text: String = CUDA
            .lines()
            .filter(|l| !l.starts_with("[pinned  ] preloaded"))
            .map(|l| format!("{l}\n"))
            .collect();
        let error = parse_cuda(&text).unwrap_err().to_string();
        assert!(
            error.starts_with(
                "bench_cuda printed no line `[pinned  ] preloaded by hand : total %.3f ms"
            ),
            "{error}"
        );
        let error =
            parse_cuda(&CUDA.replace("empty kernel:", "empty kernels:")).unwrap_err().to_string();
        assert!(
            error.starts_with("bench_cuda printed no line `empty kernel: %.3f us/launch"),
            "{error}"
        );
        assert!(
            parse_cuda(&CUDA.replace("RESULT: PASS\n", ""))
                .unwrap_err()
                .to_string()
                .contains("`RESULT: %s`")
        );
        assert!(parse_cuda(&CUDA.replace("total 26.310 ms", "total -nan ms")).is_err());
    }

    #[test]
    fn clang_parses() {
        let figures = parse_clang(&clang(true), true).unwrap();
        assert!(figures.pass);
        assert_eq!(figures.values["pinned.automatic_total_ms"], 4350.0);
        assert_eq!(figures.values["pinned.preloaded_total_ms"], 120.0);
        assert_eq!(figures.values["pinned.map_in_ms"], 60.0);
        assert_eq!(figures.values["pinned.kernels_ms"], 38.5);
        assert_eq!(figures.values["pinned.map_out_ms"], 21.5);
        assert_eq!(figures.values["any.mapper_pair_us"], 1.35);
        assert_eq!(figures.values["any.empty_launch_us"], 30.0);
        assert!(!figures.values.contains_key("pageable.kernels_ms"));
        let pageable = parse_clang(&clang(false), false).unwrap();
        assert_eq!(pageable.values["pageable.kernels_ms"], 38.5);
        let on_host = clang(false).replace("RESULT: PASS", "RESULT: RAN ON HOST");
        assert!(!parse_clang(&on_host, false).unwrap().pass);
    }

    #[test]
    fn clang_checks_the_host_memory_and_names_missing_lines() {
        let error = parse_clang(&clang(false), true).unwrap_err().to_string();
        assert_eq!(error, "bench_omp ran with host memory `pageable malloc`, expected pinned");
        let text = clang(false).replace("(c) enter/exit", "(c) enter/leave");
        let error = parse_clang(&text, false).unwrap_err().to_string();
        assert!(
            error.starts_with(
                "bench_omp printed no line `(c) enter/exit data pair on present data: %.3f us/pair"
            ),
            "{error}"
        );
    }

    #[test]
    fn formats_split_into_literals_and_conversions() {
        use Piece::*;
        assert_eq!(
            split_format("[%s] total %.3f ms, %ld%% x%d"),
            [
                Literal("[".into()),
                Conversion,
                Literal("] total ".into()),
                Conversion,
                Literal(" ms, ".into()),
                Conversion,
                Literal("% x".into()),
                Conversion
            ]
        );
        assert_eq!(scan("a %d b %s", "a 12 b rest of it"), Some(vec!["12", "rest of it"]));
        assert_eq!(scan("a %d b", "a 12 c"), None);
        assert_eq!(scan("a %d b", "a  b"), None);
        assert_eq!(scan("a %d", "a "), None);
    }
}
