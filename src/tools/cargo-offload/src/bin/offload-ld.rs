//! `offload-ld`, the link stage `cargo offload` runs (see the `offload_ld` crate): a binary of
//! this package, so that `cargo install` of it installs both.

fn main() -> std::process::ExitCode {
    offload_ld::main()
}
