//! Running commands: every external program bootstrap starts goes through here.

use std::process::{Command, Output};

use anyhow::{Context as _, Result, bail};

/// Runs `cmd`, inheriting the terminal; an error names `what` when it fails.
pub(crate) fn run(what: &str, cmd: &mut Command) -> Result<()> {
    if std::env::var_os("X_VERBOSE").is_some() {
        eprintln!("x: {cmd:?}");
    }
    let status = cmd.status().with_context(|| format!("starting {what}"))?;
    if !status.success() {
        bail!("{what} failed ({status})");
    }
    Ok(())
}

/// Runs `cmd` and captures its output, whatever its exit status.
pub(crate) fn capture(what: &str, cmd: &mut Command) -> Result<Output> {
    if std::env::var_os("X_VERBOSE").is_some() {
        eprintln!("x: {cmd:?}");
    }
    cmd.output().with_context(|| format!("starting {what}"))
}

/// [`capture`] with a time limit: a program still running after `limit` is killed, and the
/// second value is `true`. What it printed until then is kept.
pub(crate) fn capture_within(
    what: &str,
    cmd: &mut Command,
    limit: std::time::Duration,
) -> Result<(Output, bool)> {
    use std::io::Read as _;
    use std::process::Stdio;

    if std::env::var_os("X_VERBOSE").is_some() {
        eprintln!("x: {cmd:?}");
    }
    let mut child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .with_context(|| format!("starting {what}"))?;
    // Each pipe drained on its own thread, so that a program filling one does not block.
    let drain = |pipe: Option<Box<dyn std::io::Read + Send>>| {
        std::thread::spawn(move || {
            let mut bytes = Vec::new();
            if let Some(mut pipe) = pipe {
                let _ = pipe.read_to_end(&mut bytes);
            }
            bytes
        })
    };
    let stdout = drain(child.stdout.take().map(|p| Box::new(p) as _));
    let stderr = drain(child.stderr.take().map(|p| Box::new(p) as _));
    let deadline = std::time::Instant::now() + limit;
    let (status, timed_out) = loop {
        if let Some(status) = child.try_wait().with_context(|| format!("waiting for {what}"))? {
            break (status, false);
        }
        if std::time::Instant::now() >= deadline {
            let _ = child.kill();
            break (child.wait().with_context(|| format!("waiting for {what}"))?, true);
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    let output = Output {
        status,
        stdout: stdout.join().unwrap_or_default(),
        stderr: stderr.join().unwrap_or_default(),
    };
    Ok((output, timed_out))
}

#[cfg(test)]
mod tests {
    use std::process::Command;
    use std::time::Duration;

    use super::capture_within;

    #[test]
    fn a_program_past_its_limit_is_killed() {
        let (out, timed_out) =
            capture_within("sleep", Command::new("sleep").arg("30"), Duration::from_millis(200))
                .unwrap();
        assert!(timed_out && !out.status.success());
        let (out, timed_out) =
            capture_within("echo", Command::new("echo").arg("hi"), Duration::from_secs(30))
                .unwrap();
        assert!(!timed_out && out.status.success());
        assert_eq!(out.stdout, b"hi\n");
    }
}
