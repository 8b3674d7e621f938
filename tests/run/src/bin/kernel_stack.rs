//! A kernel thread that overflows its stack in the host-offload image ends the program with a
//! message naming the stack's size and `OFFLOAD_HOST_STACK`, not a bare segmentation fault; and
//! `OFFLOAD_HOST_STACK` gives kernel threads more. The program runs itself as a child on the
//! host-offload device (the last one, also where a GPU is the default), each thread of a grid
//! making nested calls of 1 KiB of stack each:
//! - 64 deep, in a grid that runs on the library's system threads (threads in turn) and in one
//!   whose threads wait at a barrier (each a coroutine of its own): both fit in 1 MiB;
//! - 2048 deep, both ways: the child aborts with the message;
//! - 2048 deep with `OFFLOAD_HOST_STACK=8M`, both ways: it fits.
//@ run: => h2d=0 d2h=0
//@ host-offload

use std::os::unix::process::ExitStatusExt;
use std::process::Command;

#[allow(dead_code)]
#[path = "../kernels.rs"]
mod kernels;

/// A grid whose threads do not wait runs on the library's system threads from this size on.
const MANY: (u32, u32) = (256, 128);
/// A grid whose threads wait: each of a block's threads has a stack of its own.
const FEW: (u32, u32) = (2, 32);

fn child(depth: u32, wait: u32) -> Result<(), offload::Error> {
    let device = offload::Device::get(offload::Device::count() - 1)?;
    assert!(device.memory().is_none(), "the last device is not the host-offload one");
    let (blocks, threads) = if wait == 0 { MANY } else { FEW };
    let mut out = vec![0u32; (blocks * threads) as usize];
    offload::launch!(on device, kernels::stack_depth, blocks, threads, (depth, wait, &mut out[..]))?;
    let wrong = out.iter().enumerate().filter(|&(i, &v)| v != depth + i as u32).count();
    assert_eq!(wrong, 0, "{wrong} threads wrote a wrong value");
    println!("fits: {depth} deep, wait {wait}");
    Ok(())
}

/// Runs this program as a child: its status, stdout and stderr.
fn run_child(
    depth: u32,
    wait: u32,
    stack: Option<&str>,
) -> (std::process::ExitStatus, String, String) {
    let mut cmd = Command::new(std::env::current_exe().unwrap());
    cmd.args(["child", &depth.to_string(), &wait.to_string()]);
    match stack {
        Some(size) => cmd.env("OFFLOAD_HOST_STACK", size),
        None => cmd.env_remove("OFFLOAD_HOST_STACK"),
    };
    let output = cmd.output().unwrap();
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    (output.status, text(&output.stdout), text(&output.stderr))
}

fn main() -> Result<(), offload::Error> {
    let args: Vec<String> = std::env::args().collect();
    if args.get(1).map(String::as_str) == Some("child") {
        return child(args[2].parse().unwrap(), args[3].parse().unwrap());
    }
    for wait in [0, 1] {
        for (depth, stack) in [(64, None), (2048, Some("8M"))] {
            let (status, out, err) = run_child(depth, wait, stack);
            let context = format!(
                "{depth} deep, wait {wait}, stack {stack:?}: {status}\n--- stdout\n{out}--- stderr\n{err}"
            );
            assert!(status.success(), "{context}");
            assert!(out.contains(&format!("fits: {depth} deep")), "{context}");
        }
        let (status, out, err) = run_child(2048, wait, None);
        let context =
            format!("2048 deep, wait {wait}: {status}\n--- stdout\n{out}--- stderr\n{err}");
        assert_eq!(status.signal(), Some(libc::SIGABRT), "the child must abort: {context}");
        assert!(!out.contains("fits"), "{context}");
        let expected = "offload: error: a kernel thread overflowed its stack of 1024 KiB in the host-offload image";
        assert!(err.contains(expected), "{context}");
        assert!(err.contains("OFFLOAD_HOST_STACK=8M"), "{context}");
        println!("wait {wait}: 64 deep fits, 2048 deep aborts with the message, and fits with 8M");
    }
    Ok(())
}
