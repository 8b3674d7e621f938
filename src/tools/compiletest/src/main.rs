//! `compiletest`: runs the codegen and ui suites of the offload project on compiletest_rs.
//!
//! ```text
//! compiletest tests/codegen --mode codegen      # rustc --emit=llvm-ir, offload lowering, FileCheck
//! compiletest tests/ui --mode ui [--bless]      # compile-fail: exact .stderr and //~ annotations
//! compiletest tests/codegen preload_slice       # only the tests whose name contains the filter
//! compiletest tests/ptx --ptx IMAGE.ptx         # FileCheck of an NVIDIA image's PTX (ptx.rs)
//! ```
//! Prints compiletest's report, then `N passed, M failed` alone on the last line, and exits
//! non-zero when a test failed.

mod lower;
mod ptx;
mod suite;
mod toolchain;

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Result;
use clap::Parser;

use crate::suite::{Options, Outcome, Suite};
use crate::toolchain::Toolchain;

#[derive(Parser)]
#[command(name = "compiletest", about = "Run the offload codegen, ui or ptx test suite")]
struct Args {
    /// The suite's directory, e.g. `tests/codegen` or `tests/ui`.
    suite: PathBuf,
    /// The PTX the ptx suite's scenarios check (the suite's NVIDIA image, built by `x.py`).
    #[arg(long, value_name = "PTX")]
    ptx: Option<PathBuf>,
    /// The same suite's image built for sm_90a, which the scenarios' SM90A lines check.
    #[arg(long, value_name = "PTX")]
    ptx_sm90a: Option<PathBuf>,
    #[command(flatten)]
    options: Options,
}

fn main() -> ExitCode {
    // A failing test panics with what failed; the runner's backtrace would only bury it.
    std::panic::set_hook(Box::new(|info| eprintln!("{info}")));
    match run(Args::parse()) {
        Ok(outcome) => {
            println!("{} passed, {} failed", outcome.passed, outcome.failed);
            if outcome.failed == 0 { ExitCode::SUCCESS } else { ExitCode::FAILURE }
        }
        Err(e) => {
            eprintln!("offload: error: {e:#}");
            ExitCode::from(2)
        }
    }
}

fn run(args: Args) -> Result<Outcome> {
    if let Some(ptx) = &args.ptx {
        return ptx::run(
            &args.suite,
            ptx,
            args.ptx_sm90a.as_deref(),
            args.options.filter.as_deref(),
        );
    }
    // 1. the rustc, the offload rlib and (for codegen) FileCheck the tests are checked with
    let toolchain = Toolchain::locate()?;
    // 2. the suite, resolved against the workspace root the tests are compiled from
    let suite = Suite::open(&toolchain, &args.suite, args.options)?;
    // 3. compile and check every test
    suite.run()
}
