//! A kernel thread that overflows its stack in the host-offload image ends the program with a
//! message naming the stack's size and `OFFLOAD_HOST_STACK`, not a bare segmentation fault; and
//! `OFFLOAD_HOST_STACK` gives kernel threads more. The program runs itself as a child on the
//! host-offload device (the last one, also where a GPU is the default), each thread of a grid
//! making nested calls of 1 KiB of stack each:
//! - 64 deep, in a grid whose threads run in turn and in one whose threads wait at a barrier
//!   (each then a coroutine of its own): both fit in 1 MiB;
//! - 2048 deep in every block but the first, both ways: the child aborts with the message. Block
//!   0 runs alone on the launching thread, the others on the library's system threads, to which
//!   the image's copy of std gives no alternate signal stack (the library gives them one);
//! - 2048 deep in block 0, on a launching thread whose alternate signal stack is turned off
//!   first, as in a C program: the same message;
//! - 2048 deep with `OFFLOAD_HOST_STACK=8M`, both ways: it fits;
//! - once the handler is in, other faults go on as before: a read of address 8 in the
//!   program's own code ends it with SIGSEGV, and an overflow of the main thread's stack with
//!   Rust's own report (its handler, which the library's hands the fault to).
//@ run: => h2d=0 d2h=0
//@ host-offload

use std::os::unix::process::ExitStatusExt;
use std::process::Command;

#[allow(dead_code)]
#[path = "../kernels.rs"]
mod kernels;

/// A grid that runs its blocks after the first on the library's system threads, with or
/// without a barrier.
const MANY: (u32, u32) = (256, 128);
/// A grid that runs on the launching thread alone.
const FEW: (u32, u32) = (2, 32);

const MESSAGE: &str =
    "offload: error: a kernel thread overflowed its stack of 1024 KiB in the host-offload image";

/// One case: the grid, the depth of its blocks (of block 0 apart), whether its threads wait,
/// whether the launching thread's alternate signal stack is turned off, `OFFLOAD_HOST_STACK`.
struct Case {
    grid: (u32, u32),
    depth: u32,
    first: u32,
    wait: u32,
    no_altstack: bool,
    stack: Option<&'static str>,
}

fn child(args: &[String]) -> Result<(), offload::Error> {
    let n = |i: usize| args[i].parse::<u32>().unwrap();
    let (blocks, threads, depth, first, wait) = (n(0), n(1), n(2), n(3), n(4));
    // SAFETY: sets this process's limit of core files, and turns this thread's alternate
    // signal stack off (std's, still mapped, is unmapped at exit by std).
    unsafe {
        let none = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
        libc::setrlimit(libc::RLIMIT_CORE, &none);
        if args[5] == "no-altstack" {
            let off = libc::stack_t {
                ss_sp: std::ptr::null_mut(),
                ss_flags: libc::SS_DISABLE,
                ss_size: 0,
            };
            assert_eq!(libc::sigaltstack(&off, std::ptr::null_mut()), 0);
        }
    }
    let device = offload::Device::get(offload::Device::count() - 1)?;
    assert!(device.memory().is_none(), "the last device is not the host-offload one");
    let mut out = vec![0u32; (blocks * threads) as usize];
    offload::launch!(on device, kernels::stack_depth, blocks, threads, (depth, first, wait, &mut out[..]))?;
    let expected = |i: usize| if i < threads as usize { first } else { depth } + i as u32;
    let wrong = out.iter().enumerate().filter(|&(i, &v)| v != expected(i)).count();
    assert_eq!(wrong, 0, "{wrong} threads wrote a wrong value");
    println!("fits: {depth} deep, wait {wait}");
    Ok(())
}

/// Runs this program as a child: its status, stdout and stderr.
fn run_child(case: &Case) -> (std::process::ExitStatus, String, String) {
    let mut cmd = Command::new(std::env::current_exe().unwrap());
    let numbers = [case.grid.0, case.grid.1, case.depth, case.first, case.wait];
    cmd.arg("child").args(numbers.map(|n| n.to_string()));
    cmd.arg(if case.no_altstack { "no-altstack" } else { "altstack" });
    match case.stack {
        Some(size) => cmd.env("OFFLOAD_HOST_STACK", size),
        None => cmd.env_remove("OFFLOAD_HOST_STACK"),
    };
    let output = cmd.output().unwrap();
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    (output.status, text(&output.stdout), text(&output.stderr))
}

/// A launch that fits (the handler is installed with the first stack), then `fault`: a read of
/// address 8, or a recursion without end on the main thread.
fn faulting_child(fault: &str) -> Result<(), offload::Error> {
    // SAFETY: sets this process's limit of core files.
    unsafe { libc::setrlimit(libc::RLIMIT_CORE, &libc::rlimit { rlim_cur: 0, rlim_max: 0 }) };
    let device = offload::Device::get(offload::Device::count() - 1)?;
    let mut out = vec![0u32; 64];
    offload::launch!(on device, kernels::stack_depth, 2, 32, (4u32, 4u32, 1u32, &mut out[..]))?;
    println!("launched");
    if fault == "null" {
        // SAFETY: none: the read faults, which is what is tested.
        let byte = unsafe { std::ptr::read_volatile(8 as *const u8) };
        println!("read {byte}");
    } else {
        println!("{}", endless(1));
    }
    Ok(())
}

/// Calls itself for ever, 4 KiB of stack a call.
#[allow(unconditional_recursion)]
fn endless(n: u64) -> u64 {
    let frame = std::hint::black_box([n; 512]);
    endless(frame[(n % 512) as usize] + 1) + frame[0]
}

fn main() -> Result<(), offload::Error> {
    let args: Vec<String> = std::env::args().collect();
    match args.get(1).map(String::as_str) {
        Some("child") => return child(&args[2..]),
        Some("fault") => return faulting_child(&args[2]),
        _ => {}
    }
    for (fault, signal, said) in [
        ("null", libc::SIGSEGV, None),
        ("recursion", libc::SIGABRT, Some("has overflowed its stack")),
    ] {
        let output = Command::new(std::env::current_exe().unwrap())
            .args(["fault", fault])
            .env_remove("OFFLOAD_HOST_STACK")
            .output()
            .unwrap();
        let (out, err) =
            (String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr));
        let context = format!("{fault}: {}\n--- stdout\n{out}--- stderr\n{err}", output.status);
        assert!(out.contains("launched"), "{context}");
        assert_eq!(output.status.signal(), Some(signal), "{context}");
        assert!(!err.contains("offload: error"), "{context}");
        if let Some(said) = said {
            assert!(err.contains(said), "{context}");
        }
    }
    let case = |grid, depth, first, wait| Case {
        grid,
        depth,
        first,
        wait,
        no_altstack: false,
        stack: None,
    };
    let fits = [
        case(MANY, 64, 64, 0),
        case(FEW, 64, 64, 1),
        Case { stack: Some("8M"), ..case(MANY, 2048, 2048, 0) },
        Case { stack: Some("8M"), ..case(FEW, 2048, 2048, 1) },
    ];
    let overflows = [
        case(MANY, 2048, 64, 0),
        case(MANY, 2048, 64, 1),
        Case { no_altstack: true, ..case(FEW, 64, 2048, 0) },
        Case { no_altstack: true, ..case(FEW, 64, 2048, 1) },
    ];
    for case in &fits {
        let (status, out, err) = run_child(case);
        let context = format!(
            "{} deep, wait {}, stack {:?}: {status}\n--- stdout\n{out}--- stderr\n{err}",
            case.depth, case.wait, case.stack
        );
        assert!(status.success(), "{context}");
        assert!(out.contains(&format!("fits: {} deep", case.depth)), "{context}");
    }
    for case in &overflows {
        let (status, out, err) = run_child(case);
        let context = format!(
            "{} deep (block 0: {}), wait {}, alternate stack turned off: {}: {status}\n--- stdout\n{out}--- stderr\n{err}",
            case.depth, case.first, case.wait, case.no_altstack
        );
        assert_eq!(status.signal(), Some(libc::SIGABRT), "the child must abort: {context}");
        assert!(!out.contains("fits"), "{context}");
        assert!(err.contains(MESSAGE), "{context}");
        assert!(err.contains("OFFLOAD_HOST_STACK=8M"), "{context}");
    }
    println!(
        "ok: {} grids fit, {} overflows reported (on the library's threads and on a thread without an alternate signal stack), other faults as before",
        fits.len(),
        overflows.len()
    );
    Ok(())
}
