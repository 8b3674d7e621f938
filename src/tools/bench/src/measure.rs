//! The measurement: every program in every mode, interleaved over the repetitions so that drift
//! of the machine spreads over all of them; each run's output is kept in `logs/`, its exit status
//! and its own result check must pass, and its figures must all be there.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use anyhow::{Context as _, Result, bail};

use super::anchors::Anchor;
use super::parse::{self, RunFigures};
use super::report::{Mode, Series, Source};
use offload_bootstrap::shell;

/// The large problem: transfers dominate.
pub(crate) const LARGE: Mode = Mode { n: 64 << 20, k: 50, launches: 1000, pairs: 10000 };
/// The small problem: latencies dominate (ours and CUDA by hand only).
pub(crate) const SMALL: Mode = Mode { n: 4096, k: 50, launches: 1000, pairs: 10000 };
pub(crate) const MODES: [Mode; 2] = [LARGE, SMALL];

/// Under it the runtime fails rather than run a region on the host.
const MANDATORY: (&str, &str) = ("OMP_TARGET_OFFLOAD", "MANDATORY");

/// The programs to measure.
pub(crate) struct Programs {
    pub(crate) ours: PathBuf,
    pub(crate) cuda: Anchor,
    pub(crate) clang: Anchor,
}

/// One program run in one mode.
struct Job {
    source: Source,
    mode: Mode,
    /// Host memory of a clang anchor run, which measures one kind per run.
    pinned: Option<bool>,
    program: PathBuf,
    args: Vec<String>,
    env: Vec<(&'static str, &'static str)>,
}

impl Job {
    /// `clang OpenMP N=64M pinned`.
    fn name(&self) -> String {
        let memory = match self.pinned {
            Some(true) => " pinned",
            Some(false) => " pageable",
            None => "",
        };
        format!("{} {}{memory}", self.source.title(), self.mode.label())
    }

    /// `clang-67108864-pinned`.
    fn file_stem(&self) -> String {
        let source = match self.source {
            Source::Ours => "ours",
            Source::Cuda => "cuda",
            Source::Clang => "clang",
        };
        let memory = match self.pinned {
            Some(true) => "-pinned",
            Some(false) => "-pageable",
            None => "",
        };
        format!("{source}-{}{memory}", self.mode.n)
    }

    fn parse(&self, stdout: &str) -> Result<RunFigures> {
        match self.source {
            Source::Ours => parse::parse_ours(stdout),
            Source::Cuda => parse::parse_cuda(stdout),
            Source::Clang => parse::parse_clang(stdout, self.pinned == Some(true)),
        }
    }
}

/// One round: for each mode, ours, CUDA by hand, then clang with pageable and pinned memory.
fn jobs(programs: &Programs, modes: &[Mode]) -> Vec<Job> {
    let mut jobs = Vec::new();
    for &mode in modes {
        let (n, k, launches, pairs) = (
            mode.n.to_string(),
            mode.k.to_string(),
            mode.launches.to_string(),
            mode.pairs.to_string(),
        );
        jobs.push(Job {
            source: Source::Ours,
            mode,
            pinned: None,
            program: programs.ours.clone(),
            args: vec![n.clone(), k.clone(), launches.clone(), pairs.clone()],
            env: vec![MANDATORY],
        });
        if let Anchor::Built(program) = &programs.cuda {
            jobs.push(Job {
                source: Source::Cuda,
                mode,
                pinned: None,
                program: program.clone(),
                args: vec![n.clone(), k.clone(), launches.clone()],
                env: Vec::new(),
            });
        }
        if let Anchor::Built(program) = &programs.clang {
            for pinned in [false, true] {
                let mut env = vec![MANDATORY];
                if pinned {
                    env.push(("BENCH_PINNED", "1"));
                }
                jobs.push(Job {
                    source: Source::Clang,
                    mode,
                    pinned: Some(pinned),
                    program: program.clone(),
                    args: vec![n.clone(), k.clone(), pairs.clone(), launches.clone()],
                    env,
                });
            }
        }
    }
    jobs
}

/// What the runs gave.
pub(crate) struct Measured {
    /// One per program and mode, medians computed.
    pub(crate) series: Vec<Series>,
    /// As ours names it, else as the CUDA anchor does.
    pub(crate) device: Option<String>,
}

/// Runs every job in every mode `reps` times, round after round; the first failing run ends it.
pub(crate) fn measure(
    programs: &Programs,
    modes: &[Mode],
    reps: usize,
    logs: &Path,
) -> Result<Measured> {
    std::fs::create_dir_all(logs).with_context(|| format!("creating {}", logs.display()))?;
    let jobs = jobs(programs, modes);
    let mut series: Vec<Series> = Vec::new();
    let (mut ours_device, mut cuda_device) = (None, None);
    for rep in 1..=reps {
        for job in &jobs {
            let figures = run(job, rep, reps, logs)?;
            let device =
                if job.source == Source::Ours { &mut ours_device } else { &mut cuda_device };
            if device.is_none() {
                *device = figures.device.clone();
            }
            let index =
                match series.iter().position(|s| s.source == job.source && s.mode == job.mode) {
                    Some(index) => index,
                    None => {
                        series.push(Series::new(job.source, job.mode));
                        series.len() - 1
                    }
                };
            series[index].add(&figures.values);
        }
    }
    for s in &mut series {
        s.finish();
    }
    Ok(Measured { series, device: ours_device.or(cuda_device) })
}

/// One run: its output saved, its exit status and result check required, its figures parsed.
fn run(job: &Job, rep: usize, reps: usize, logs: &Path) -> Result<RunFigures> {
    let what = format!("{} (run {rep} of {reps})", job.name());
    let started = Instant::now();
    let out = shell::runner()
        .capture(Command::new(&job.program).args(&job.args).envs(job.env.iter().copied()))?;
    let seconds = started.elapsed().as_secs_f64();
    let (stdout, stderr) =
        (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    let log = logs.join(format!("{}-{rep}.log", job.file_stem()));
    let env: Vec<String> = job.env.iter().map(|(k, v)| format!("{k}={v} ")).collect();
    std::fs::write(
        &log,
        format!(
            "$ {}{} {}\n# {}, {seconds:.1} s\n--- stdout\n{stdout}--- stderr\n{stderr}",
            env.concat(),
            job.program.display(),
            job.args.join(" "),
            out.status
        ),
    )
    .with_context(|| format!("writing {}", log.display()))?;
    if !out.status.success() {
        let last: Vec<&str> =
            stderr.lines().rev().take(5).collect::<Vec<_>>().into_iter().rev().collect();
        bail!(
            "{what} failed ({}): {}\n(its output is in {})",
            out.status,
            last.join("\n"),
            log.display()
        );
    }
    let figures = job
        .parse(&stdout)
        .with_context(|| format!("{what}, whose output is in {}", log.display()))?;
    if !figures.pass {
        bail!("{what} failed its own result check (its output is in {})", log.display());
    }
    eprintln!("x: bench: {what} ... {seconds:.1} s");
    Ok(figures)
}

#[cfg(test)]
mod tests {
    use super::super::parse::tests::{CUDA, OURS, clang};
    use super::*;

    /// A shell script that logs its arguments and environment, then prints `text`.
    fn stub(dir: &Path, name: &str, text: &str) -> PathBuf {
        let output = dir.join(format!("{name}.txt"));
        std::fs::write(&output, text).unwrap();
        let script = dir.join(name);
        let body = format!(
            "#!/bin/sh\necho \"{name} $* pinned=${{BENCH_PINNED:-0}} ${{OMP_TARGET_OFFLOAD:-}}\" >> {}\ncat {}\n",
            dir.join("calls").display(),
            output.display()
        );
        std::fs::write(&script, body).unwrap();
        std::process::Command::new("chmod").arg("+x").arg(&script).status().unwrap();
        script
    }

    #[test]
    fn runs_are_interleaved_and_pooled() {
        let dir = tempfile::tempdir().unwrap();
        // One clang stub serves both memory kinds: its host-memory line follows BENCH_PINNED.
        let clang_script = dir.path().join("clang");
        std::fs::write(dir.path().join("pageable.txt"), clang(false)).unwrap();
        std::fs::write(dir.path().join("pinned.txt"), clang(true)).unwrap();
        std::fs::write(
            &clang_script,
            format!(
                "#!/bin/sh\necho \"clang $* pinned=${{BENCH_PINNED:-0}} $OMP_TARGET_OFFLOAD\" >> {calls}\n\
                 if [ \"$BENCH_PINNED\" = 1 ]; then cat {d}/pinned.txt; else cat {d}/pageable.txt; fi\n",
                calls = dir.path().join("calls").display(),
                d = dir.path().display()
            ),
        )
        .unwrap();
        std::process::Command::new("chmod").arg("+x").arg(&clang_script).status().unwrap();
        let programs = Programs {
            ours: stub(dir.path(), "ours", OURS),
            cuda: Anchor::Built(stub(dir.path(), "cuda", CUDA)),
            clang: Anchor::Built(clang_script),
        };
        let logs = dir.path().join("logs");
        let measured = measure(&programs, &MODES, 2, &logs).unwrap();
        let calls = std::fs::read_to_string(dir.path().join("calls")).unwrap();
        let round = "ours 67108864 50 1000 10000 pinned=0 MANDATORY\n\
                     cuda 67108864 50 1000 pinned=0 \n\
                     clang 67108864 50 10000 1000 pinned=0 MANDATORY\n\
                     clang 67108864 50 10000 1000 pinned=1 MANDATORY\n\
                     ours 4096 50 1000 10000 pinned=0 MANDATORY\n\
                     cuda 4096 50 1000 pinned=0 \n\
                     clang 4096 50 10000 1000 pinned=0 MANDATORY\n\
                     clang 4096 50 10000 1000 pinned=1 MANDATORY\n";
        assert_eq!(calls, format!("{round}{round}"));
        assert_eq!(measured.device.as_deref(), Some("NVIDIA H200 (CUDA)"));
        assert_eq!(measured.series.len(), 6);
        let clang_large = measured.series.iter().find(|s| s.source == Source::Clang).unwrap();
        // Latencies from both memory kinds' runs, transfers from their own kind's.
        assert_eq!(clang_large.samples["any.mapper_pair_us"].len(), 4);
        assert_eq!(clang_large.samples["pinned.kernels_ms"].len(), 2);
        assert_eq!(clang_large.medians["pageable.automatic_total_ms"], 4350.0);
        assert!(logs.join("clang-67108864-pinned-2.log").is_file());
        assert!(
            std::fs::read_to_string(logs.join("ours-4096-1.log"))
                .unwrap()
                .contains("bench result PASS")
        );
    }

    #[test]
    fn failing_runs_stop_the_measurement() {
        let dir = tempfile::tempdir().unwrap();
        let logs = dir.path().join("logs");
        let failing = Programs {
            ours: stub(dir.path(), "ours", &OURS.replace("result PASS", "result FAIL")),
            cuda: Anchor::NotBuilt("no nvcc".into()),
            clang: Anchor::NotBuilt("no clang-19".into()),
        };
        let error = format!("{:#}", measure(&failing, &MODES, 1, &logs).err().unwrap());
        assert!(error.contains("ours N=64M (run 1 of 1) failed its own result check"), "{error}");
        let truncated = Programs {
            ours: stub(dir.path(), "ours2", &OURS.replace("bench any empty_launch_us 27.1\n", "")),
            ..failing
        };
        let error = format!("{:#}", measure(&truncated, &MODES, 1, &logs).err().unwrap());
        assert!(error.contains("no `bench any empty_launch_us VALUE` line"), "{error}");
    }
}
