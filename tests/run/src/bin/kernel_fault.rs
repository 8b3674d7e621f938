//! A kernel that faults (here an index past the end of its slice: the bounds check panics,
//! which traps on a GPU) leaves nothing hanging and nothing silent. The program runs itself
//! again as a child, once launching preloaded data and once plain `&mut [u32]` (mapped around
//! the launch); the child makes a good launch and then the faulting one. Checked:
//! - on a GPU: the faulting `launch!` returns `Error::Cuda`, and so do the later calls
//!   (`synchronize`, `try_preload`: the driver keeps the error); with preloaded data, the
//!   `PreloadMut`'s drop, which cannot copy the data back, ends the process with the driver's
//!   message, non-zero; with plain data the program ends normally but non-zero at exit (a
//!   GPU's error nothing can clear);
//! - on the host-offload plugin (the kernel runs inside the process): the process ends at the
//!   launch with the panic's message, non-zero.
//!
//! Either way the child ends within the time limit. Under compute-sanitizer (`x.py test gpu
//! --sanitize`) this process alone is checked: the children's faults are the point.
//@ run: => h2d=0 d2h=0
//@ children-fault

use std::io::Read;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

#[allow(dead_code)]
#[path = "../kernels.rs"]
mod kernels;

const LIMIT: Duration = Duration::from_secs(120);

fn child(plain: bool) {
    let mut ys = vec![0u32; 1024];
    let zs = [0u32; 16];
    if plain {
        offload::launch!(kernels::increment, 8, 128, (&mut ys[..],)).expect("a good launch");
        println!("good launch: ok");
        let e = offload::launch!(kernels::write_at, 1, 32, (&mut ys[..], 5000u32));
        println!("faulting launch: {e:?}");
        println!("synchronize: {:?}", offload::synchronize());
        println!("try_preload: {:?}", offload::try_preload(&zs[..]).map(|_| ()));
        println!("main returns");
        return;
    }
    let mut y = offload::preload_mut(&mut ys[..]);
    offload::launch!(kernels::increment, 8, 128, (&mut y,)).expect("a good launch");
    println!("good launch: ok");
    let e = offload::launch!(kernels::write_at, 1, 32, (&mut y, 5000u32));
    println!("faulting launch: {e:?}");
    println!("synchronize: {:?}", offload::synchronize());
    println!("try_preload: {:?}", offload::try_preload(&zs[..]).map(|_| ()));
    drop(y);
    println!("unreachable: the drop returned");
}

fn main() {
    match std::env::args().nth(1).as_deref() {
        Some("present") => return child(false),
        Some("plain") => return child(true),
        _ => {}
    }
    let gpu = offload::Device::default_device().expect("a device").memory().is_some();
    let mut said = Vec::new();
    for mode in ["present", "plain"] {
        let (status, out, err) = run_child(mode);
        let context = format!("{mode}: status {status}\n--- stdout\n{out}--- stderr\n{err}");
        assert!(!status.success(), "the child must end non-zero: {context}");
        assert!(out.contains("good launch: ok"), "{context}");
        assert!(!out.contains("unreachable"), "{context}");
        if gpu {
            for line in
                ["faulting launch: Err(Cuda", "synchronize: Err(Cuda", "try_preload: Err(Cuda"]
            {
                assert!(out.contains(line), "no `{line}`: {context}");
            }
            assert!(err.contains("offload: error:"), "{context}");
            if mode == "plain" {
                assert!(out.contains("main returns"), "{context}");
            }
        } else {
            assert!(!out.contains("faulting launch"), "{context}");
            assert!(err.contains("index out of bounds"), "{context}");
        }
        let line = err
            .lines()
            .find(|l| l.contains("offload: error") || l.contains("index out of bounds"))
            .unwrap_or("")
            .trim()
            .to_owned();
        said.push(format!("{mode}: {status} ({line})"));
    }
    println!("ok: {}", said.join("; "));
}

/// Runs this program as a child in `mode`, within the time limit.
fn run_child(mode: &str) -> (std::process::ExitStatus, String, String) {
    let mut child = Command::new(std::env::current_exe().unwrap())
        .arg(mode)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if started.elapsed() > LIMIT {
            child.kill().unwrap();
            panic!("the {mode} child hung for {LIMIT:?} after the faulting launch");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let (mut out, mut err) = (String::new(), String::new());
    child.stdout.take().unwrap().read_to_string(&mut out).unwrap();
    child.stderr.take().unwrap().read_to_string(&mut err).unwrap();
    (status, out, err)
}
