//! The `install` suite: `cargo offload` as a Rust user meets it. `cargo install --path
//! src/tools/cargo-offload --root TMP` into an empty root (both binaries from the one package),
//! then, outside the repository, with `HOME` and the cache folder empty temporary folders:
//!
//! 1. `cargo offload new` and `cargo offload run` (ptxas and the nvptx sysroot made on first
//!    use, in the tool's own folder);
//! 2. a build killed (`kill -9`, the whole process group) in the middle, then a run;
//! 3. a library of the cached sysroot damaged, then a run (rebuilt, with a notice);
//! 4. two packages built at once over an empty sysroot cache;
//! 5. the checkout's `build/` and `.venv` moved away, then a run: the installed tool needs
//!    nothing of them.

use std::ffi::OsString;
use std::os::unix::process::CommandExt as _;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output};
use std::time::Duration;

use anyhow::{Context as _, Result, bail};

use crate::shell;

/// What the new package's program prints when it ran.
const RAN: &str = "saxpy of 1048576 values, 100 launches on";

/// When the interrupted build is killed: after ptxas's install, within the sysroot's build or
/// the images' (any moment must do).
const KILL_AFTER: Duration = Duration::from_secs(25);

pub fn run(root: &Path) -> Result<()> {
    // A run killed in step 5 left the checkout's folders aside: put them back first.
    MovedAway::restore_leftovers(root, &MOVED)?;
    // Outside the repository: a package under it would be taken for a member of its workspace.
    let tmp = tempfile::Builder::new().prefix("offload-install-suite").tempdir()?;
    let world = World::new(tmp.path())?;

    let mut install = Command::new("cargo");
    install
        .current_dir(root)
        .args(["install", "--quiet", "--locked", "--path", "src/tools/cargo-offload", "--root"])
        .arg(&world.root)
        // The workspace's own debug build: nothing is compiled twice.
        .args(["--debug", "--target-dir"])
        .arg(root.join("target"));
    shell::runner().run("cargo install --path src/tools/cargo-offload", &mut install)?;
    for tool in ["cargo-offload", "offload-ld"] {
        if !world.root.join("bin").join(tool).is_file() {
            bail!("cargo install of src/tools/cargo-offload did not install {tool}");
        }
    }

    // 1. A new package, run: everything the tool needs is made on first use.
    let demo = world.new_package("demo")?;
    let first = world.run(&demo)?;
    expect(first.contains("installing ptxas 11.8"), "the first run installs ptxas", &first)?;
    expect(
        first.contains("building the nvptx64 image of demo"),
        "the first run builds the NVIDIA image (ptxas and the sysroot made)",
        &first,
    )?;
    report("new, then run, with an empty HOME and cache");

    // 2. A build killed in the middle, then a run.
    let killed = world.new_package("killed")?;
    world.clear_sysroots()?;
    let mut build = world.cargo_offload(&killed, &["build"]).process_group(0).spawn()?;
    std::thread::sleep(KILL_AFTER);
    kill_group(&mut build)?;
    world.run(&killed)?;
    report("a build killed with kill -9 in the middle, then run");

    // 3. A damaged sysroot library: found, and the sysroot built again.
    let core = world.sysroot_library("libcore.rlib")?;
    let bytes = std::fs::read(&core)?;
    std::fs::write(&core, &bytes[..bytes.len() / 2])?;
    let damaged = world.run(&demo)?;
    expect(damaged.contains("is damaged"), "a damaged sysroot is said so", &damaged)?;
    report("a truncated sysroot library, then run");

    // 4. Two packages built at once over an empty sysroot cache.
    let (a, b) = (world.new_package("one")?, world.new_package("two")?);
    std::fs::remove_dir_all(world.cache.join("offload/nvptx-sysroot"))?;
    let builds = [&a, &b].map(|p| world.cargo_offload(p, &["run"]).output());
    for (package, out) in [&a, &b].into_iter().zip(builds) {
        let out = out?;
        let text = both(&out);
        expect(out.status.success() && text.contains(RAN), "both builds at once run", &text)
            .with_context(|| format!("package {}", package.display()))?;
    }
    report("two packages built at once on one cache");

    // 5. The checkout's build folder and venv away: the installed tool needs neither.
    let moved = MovedAway::new(root, &MOVED)?;
    let away = world.run(&demo);
    drop(moved);
    away?;
    report("the checkout's build/ and .venv moved away, then run");
    Ok(())
}

/// The folders the suite runs in, and the environment of a user whose home is empty.
struct World {
    dir: PathBuf,
    root: PathBuf,
    home: PathBuf,
    cache: PathBuf,
    /// rustup's and cargo's own folders, which stay the user's.
    rustup_home: OsString,
    cargo_home: OsString,
    config: OsString,
    path: OsString,
}

impl World {
    fn new(dir: &Path) -> Result<World> {
        let (root, home, cache) = (dir.join("root"), dir.join("home"), dir.join("cache"));
        for d in [&home, &cache] {
            std::fs::create_dir_all(d)?;
        }
        let user_home = std::env::var_os("HOME").context("HOME is not set")?;
        let under_home = |name: &str, var: &str| {
            std::env::var_os(var).unwrap_or_else(|| Path::new(&user_home).join(name).into())
        };
        let path = std::env::join_paths(
            std::iter::once(root.join("bin"))
                .chain(std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())),
        )?;
        Ok(World {
            dir: dir.to_owned(),
            rustup_home: under_home(".rustup", "RUSTUP_HOME"),
            cargo_home: under_home(".cargo", "CARGO_HOME"),
            config: under_home(".config", "XDG_CONFIG_HOME"),
            root,
            home,
            cache,
            path,
        })
    }

    /// `cargo offload ARGS` in `package`, as the user whose home and cache are empty.
    fn cargo_offload(&self, package: &Path, args: &[&str]) -> Command {
        let mut cmd = Command::new("cargo");
        cmd.current_dir(package)
            .arg("offload")
            .args(args)
            .env("PATH", &self.path)
            .env("HOME", &self.home)
            .env("XDG_CACHE_HOME", &self.cache)
            // The user's configuration (a pip mirror) stays theirs.
            .env("XDG_CONFIG_HOME", &self.config)
            .env("RUSTUP_HOME", &self.rustup_home)
            .env("CARGO_HOME", &self.cargo_home)
            .env_remove("OFFLOAD_HOME")
            .env_remove("OFFLOAD_PTXAS")
            .env_remove("CARGO_TARGET_DIR");
        cmd
    }

    fn new_package(&self, name: &str) -> Result<PathBuf> {
        let package = self.dir.join(name);
        let out = self.cargo_offload(&self.dir, &["new", name]).output()?;
        if !out.status.success() {
            bail!("cargo offload new {name} failed:\n{}", both(&out));
        }
        Ok(package)
    }

    /// `cargo offload run` of `package`, which must print what its program prints; its output.
    fn run(&self, package: &Path) -> Result<String> {
        let out = self.cargo_offload(package, &["run"]).output()?;
        let text = both(&out);
        expect(out.status.success() && text.contains(RAN), "cargo offload run runs", &text)?;
        Ok(text)
    }

    /// The cached sysroots, not ptxas: what is fetched from the network is fetched once.
    fn clear_sysroots(&self) -> Result<()> {
        std::fs::remove_dir_all(self.cache.join("offload/nvptx-sysroot"))?;
        Ok(())
    }

    /// A library of the one nvptx sysroot in the cache.
    fn sysroot_library(&self, name: &str) -> Result<PathBuf> {
        let cache = self.cache.join("offload/nvptx-sysroot");
        std::fs::read_dir(&cache)?
            .flatten()
            .map(|e| e.path().join("sysroot/lib/rustlib/nvptx64-nvidia-cuda/lib").join(name))
            .find(|p| p.is_file())
            .with_context(|| format!("no {name} in a sysroot of {}", cache.display()))
    }
}

/// The checkout's folders the installed tool must not need.
const MOVED: [&str; 2] = ["build", ".venv"];

/// Folders of the checkout renamed aside while alive, and back when dropped.
struct MovedAway {
    moved: Vec<(PathBuf, PathBuf)>,
}

impl MovedAway {
    fn aside(root: &Path, name: &str) -> PathBuf {
        root.join(format!("{name}.moved-by-install-suite"))
    }

    /// Puts back what a killed run left aside.
    fn restore_leftovers(root: &Path, names: &[&str]) -> Result<()> {
        for name in names {
            let (home, aside) = (root.join(name), Self::aside(root, name));
            if !aside.exists() {
                continue;
            }
            if home.exists() {
                bail!(
                    "{} and {} both exist (an install suite was killed while it had moved the \
                     first aside): keep the one you need and remove the other",
                    home.display(),
                    aside.display()
                );
            }
            std::fs::rename(&aside, &home)
                .with_context(|| format!("moving {} back", aside.display()))?;
        }
        Ok(())
    }

    fn new(root: &Path, names: &[&str]) -> Result<MovedAway> {
        let mut moved = MovedAway { moved: Vec::new() };
        for name in names {
            let (from, to) = (root.join(name), Self::aside(root, name));
            if from.exists() {
                std::fs::rename(&from, &to)
                    .with_context(|| format!("moving {} aside", from.display()))?;
                moved.moved.push((from, to));
            }
        }
        Ok(moved)
    }
}

impl Drop for MovedAway {
    fn drop(&mut self) {
        for (from, to) in &self.moved {
            if let Err(e) = std::fs::rename(to, from) {
                eprintln!(
                    "install: could not move {} back to {}: {e}",
                    to.display(),
                    from.display()
                );
            }
        }
    }
}

/// Kills `child`'s whole process group (cargo, rustc, pip under it) as `kill -9` would.
fn kill_group(child: &mut Child) -> Result<()> {
    let group = format!("-{}", child.id());
    shell::runner().run("kill -9", Command::new("kill").args(["-9", "--", &group]))?;
    child.wait()?;
    Ok(())
}

fn both(out: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr))
}

fn expect(holds: bool, what: &str, output: &str) -> Result<()> {
    if !holds {
        bail!("{what}: not so, the output was:\n{output}");
    }
    Ok(())
}

fn report(what: &str) {
    println!("install: {what} ... ok");
}
