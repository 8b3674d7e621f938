//! How bootstrap runs external programs: through `offload_support::command`, each shown on
//! stderr first (`x: ...`) where `X_VERBOSE` is set.

use std::process::Command;

use offload_support::command::Runner;

/// The runner of every command bootstrap runs.
pub fn runner() -> Runner {
    let show: fn(&Command) = |cmd| eprintln!("x: {cmd:?}");
    Runner { echo: std::env::var_os("X_VERBOSE").is_some().then_some(show) }
}
