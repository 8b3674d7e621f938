//! `cargo offload --dry-run`: the command lines each scenario runs, as snapshots.
//!
//! Each test makes a small package in a temporary folder, runs `cargo-offload ... --dry-run`
//! and compares the printed plan, with machine paths replaced by `$PKG`, `$OFFLOAD`,
//! `$OFFLOAD_LD` and the build stamp by `$STAMP`.

use std::path::{Path, PathBuf};
use std::process::Command;

const KERNELS: &str = "#[offload::kernel]\npub fn k(y: &mut [f32]) { let _ = y; }\n";

/// The offload library of this repository.
fn offload_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../library/offload").canonicalize().unwrap()
}

/// A package named `app` with the given extra manifest text and files.
fn package(extra_manifest: &str, files: &[(&str, &str)]) -> tempfile::TempDir {
    package_in("2024", extra_manifest, "", files)
}

/// [`package`], of `edition`, with `tail` after its `[dependencies]`.
fn package_in(
    edition: &str,
    extra_manifest: &str,
    tail: &str,
    files: &[(&str, &str)],
) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let manifest = format!(
        "[package]\nname = \"app\"\nversion = \"0.1.0\"\nedition = \"{edition}\"\n{extra_manifest}\n\
         [dependencies]\noffload = {{ path = {:?} }}\n\n[workspace]\n{tail}",
        offload_dir().display().to_string()
    );
    std::fs::write(dir.path().join("Cargo.toml"), manifest).unwrap();
    // The repository's toolchain (nightly), wherever cargo runs in the package.
    let toolchain = offload_dir().join("../../rust-toolchain.toml");
    std::fs::copy(toolchain, dir.path().join("rust-toolchain.toml")).unwrap();
    for (path, text) in files {
        let p = dir.path().join(path);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
    dir
}

fn default_package() -> tempfile::TempDir {
    package("", &[("src/main.rs", "mod kernels;\nfn main() {}\n"), ("src/kernels.rs", KERNELS)])
}

/// Runs cargo-offload in `pkg` and returns (success, normalised stdout, stderr).
fn cargo_offload(pkg: &Path, args: &[&str]) -> (bool, String, String) {
    cargo_offload_with(pkg, args, |cmd| cmd)
}

/// [`cargo_offload`], the command first changed by `adjust`.
fn cargo_offload_with(
    pkg: &Path,
    args: &[&str],
    adjust: impl FnOnce(&mut Command) -> &mut Command,
) -> (bool, String, String) {
    let (subcommand, rest) = args.split_first().unwrap();
    // The NVIDIA image is asked for where a scenario is about it; `auto` would depend on
    // whether this machine has ptxas.
    let devices: &[&str] = if rest.contains(&"--devices") { &[] } else { &["--devices", "host"] };
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_cargo-offload"));
    cmd.arg(subcommand)
        .arg("--manifest-path")
        .arg(pkg.join("Cargo.toml"))
        .args(devices)
        .args(rest)
        .env_remove("RUSTFLAGS")
        .env_remove("CARGO_ENCODED_RUSTFLAGS")
        .env_remove("CARGO_TARGET_DIR")
        .env("OFFLOAD_LD", "/opt/offload-ld")
        .env("OFFLOAD_HOME", dry_run_home())
        .env("CARGO", "cargo");
    let out = adjust(&mut cmd).output().unwrap();
    let pkg_text = pkg.canonicalize().unwrap().display().to_string();
    let home = dry_run_home().display().to_string();
    let stdout = String::from_utf8_lossy(&out.stdout)
        .replace(&pkg_text, "$PKG")
        .replace(&format!("{home}/nvptx-sysroot"), "$SYSROOTS")
        .replace(&offload_dir().display().to_string(), "$OFFLOAD")
        .replace("/opt/offload-ld", "$OFFLOAD_LD")
        .replace(env!("CARGO_BIN_EXE_cargo-offload"), "$CARGO_OFFLOAD");
    let stdout = stdout
        .lines()
        .map(|l| match l.find("offload_build=\"") {
            Some(i) => format!("{}$STAMP{}", &l[..i + 15], &l[i + 31..]),
            None => l.to_owned(),
        })
        .map(|l| match (l.find(" RUSTC="), l.find(" RUSTFLAGS=")) {
            (Some(a), Some(b)) if a < b => format!("{} RUSTC=$RUSTC{}", &l[..a], &l[b..]),
            _ => l,
        })
        .collect::<Vec<_>>()
        .join("\n");
    (out.status.success(), stdout, String::from_utf8_lossy(&out.stderr).into_owned())
}

/// The tool's own folder in these runs: nothing is installed there (a dry run installs
/// nothing).
fn dry_run_home() -> std::path::PathBuf {
    std::env::temp_dir().join("offload-dry-run-home")
}

const IMAGE_LINE: &str = "CARGO_TARGET_DIR=$PKG/target/offload/device RUSTC=$RUSTC RUSTFLAGS='--cfg offload_device --check-cfg=cfg(offload_device) -Clink-arg=-Wl,-z,nodelete' \
cargo build --release --target x86_64-unknown-linux-gnu --manifest-path $PKG/target/offload/images/app/x86_64/Cargo.toml --quiet";

fn host_line(verb: &str, env: &str) -> String {
    format!(
        "CARGO_TARGET_DIR=$PKG/target/offload/host RUSTFLAGS='-Clinker-plugin-lto -Clinker=$OFFLOAD_LD -Clinker-flavor=gcc \
--check-cfg=cfg(offload_device) --check-cfg=cfg(offload_build,values(any())) --cfg=offload_build=\"$STAMP\"' \
OFFLOAD_KERNELS_MODULE=kernels OFFLOAD_LD_IMAGES=x86_64-unknown-linux-gnu=$PKG/target/offload/device/x86_64-unknown-linux-gnu/release/libapp_offload_image.so \
{env} cargo {verb} --release --target x86_64-unknown-linux-gnu --manifest-path $PKG/Cargo.toml --quiet"
    )
}

#[test]
fn build_makes_the_host_image_then_links_the_program_through_offload_ld() {
    let pkg = default_package();
    let (ok, out, err) = cargo_offload(pkg.path(), &["build", "--dry-run"]);
    assert!(ok, "{err}");
    let expected = [
        IMAGE_LINE.to_owned(),
        host_line(
            "build",
            "OFFLOAD_LD_ABI=llvm19 OFFLOAD_LD_RUNTIME_DIR=/usr/lib/llvm-19/lib OFFLOAD_LD_CACHE=$PKG/target/offload/ld-cache",
        ),
    ];
    assert_eq!(out, expected.join("\n"));
}

#[test]
fn abi_and_runtime_dir_reach_the_link_stage() {
    let pkg = default_package();
    let (ok, out, err) = cargo_offload(
        pkg.path(),
        &["build", "--dry-run", "--abi", "current", "--runtime-dir", "/opt/llvm/lib"],
    );
    assert!(ok, "{err}");
    assert_eq!(
        out.lines().nth(1).unwrap(),
        host_line(
            "build",
            "OFFLOAD_LD_ABI=current OFFLOAD_LD_RUNTIME_DIR=/opt/llvm/lib OFFLOAD_LD_CACHE=$PKG/target/offload/ld-cache"
        )
    );
}

#[test]
fn save_temps_names_the_folder_for_the_lowered_ir() {
    let pkg = default_package();
    let (ok, out, err) = cargo_offload(pkg.path(), &["build", "--dry-run", "--save-temps"]);
    assert!(ok, "{err}");
    let env = "OFFLOAD_LD_ABI=llvm19 OFFLOAD_LD_RUNTIME_DIR=/usr/lib/llvm-19/lib OFFLOAD_LD_CACHE=$PKG/target/offload/ld-cache OFFLOAD_LD_SAVE_TEMPS=$PKG/target/offload/temps/app";
    assert_eq!(out.lines().nth(1).unwrap(), host_line("build", env));
}

#[test]
fn run_builds_then_runs_the_binary_with_its_arguments() {
    let pkg = default_package();
    let (ok, out, err) = cargo_offload(pkg.path(), &["run", "--dry-run", "--", "64", "x y"]);
    assert!(ok, "{err}");
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 3, "{out}");
    assert_eq!(lines[2], "$PKG/target/offload/host/x86_64-unknown-linux-gnu/release/app 64 'x y'");
}

#[test]
fn run_under_a_runner_puts_its_words_first() {
    let pkg = default_package();
    let (ok, out, err) =
        cargo_offload(pkg.path(), &["run", "--dry-run", "--runner", " mpirun  -np 2", "--", "64"]);
    assert!(ok, "{err}");
    let last = out.lines().last().unwrap();
    assert_eq!(
        last,
        "mpirun -np 2 $PKG/target/offload/host/x86_64-unknown-linux-gnu/release/app 64"
    );
}

#[test]
fn test_runs_cargo_test_through_the_same_link_stage() {
    let pkg = default_package();
    let (ok, out, err) = cargo_offload(pkg.path(), &["test", "--dry-run"]);
    assert!(ok, "{err}");
    let test = host_line(
        "test",
        "OFFLOAD_LD_ABI=llvm19 OFFLOAD_LD_RUNTIME_DIR=/usr/lib/llvm-19/lib OFFLOAD_LD_CACHE=$PKG/target/offload/ld-cache",
    );
    // Linked first (while the device images are held), then run.
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines[1..], [format!("{test} --no-run"), test]);
}

#[test]
fn kernels_file_can_be_named_in_the_manifest_and_roots_the_image_crate() {
    let pkg = package(
        "\n[package.metadata.offload]\nkernels = \"src/gpu/k.rs\"\n",
        &[
            ("src/main.rs", "#[path = \"gpu/k.rs\"] mod kernels;\nfn main() {}\n"),
            ("src/gpu/k.rs", KERNELS),
        ],
    );
    let (ok, out, err) = cargo_offload(pkg.path(), &["build", "--dry-run"]);
    assert!(ok, "{err}");
    assert_eq!(out.lines().next().unwrap(), IMAGE_LINE);
    let root = std::fs::read_to_string(pkg.path().join("target/offload/images/app/x86_64/lib.rs"))
        .unwrap();
    // The file is module `k` of a module at its folder: its own submodules resolve under
    // src/gpu/k/, as in the package.
    let folder = pkg.path().canonicalize().unwrap().join("src/gpu");
    let expected = format!(
        "#[path = {:?}]\nmod __offload_src {{\n    pub mod k;\n}}\npub use __offload_src::k as kernels;\n\
         pub use __offload_src::k;\n",
        folder.display().to_string()
    );
    assert!(root.ends_with(&expected), "{root}");
}

#[test]
fn a_kernels_folder_is_found_as_the_module_kernels() {
    let pkg = package(
        "",
        &[("src/main.rs", "mod kernels;\nfn main() {}\n"), ("src/kernels/mod.rs", KERNELS)],
    );
    let (ok, out, err) = cargo_offload(pkg.path(), &["build", "--dry-run"]);
    assert!(ok, "{err}");
    assert_eq!(out.lines().next().unwrap(), IMAGE_LINE);
    let root = std::fs::read_to_string(pkg.path().join("target/offload/images/app/x86_64/lib.rs"))
        .unwrap();
    assert!(root.ends_with("pub use __offload_src::kernels as kernels;\n"), "{root}");
}

#[test]
fn a_package_without_kernels_is_told_where_to_put_them() {
    let pkg = package("", &[("src/main.rs", "fn main() {}\n")]);
    let (ok, _, err) = cargo_offload(pkg.path(), &["build", "--dry-run"]);
    assert!(!ok);
    assert!(err.starts_with("offload: error: no kernels file at "), "{err}");
    assert!(err.contains("put the #[offload::kernel] functions in src/kernels.rs"), "{err}");
}

#[test]
fn a_package_with_several_binaries_must_name_one_to_run() {
    let pkg = package(
        "",
        &[
            ("src/kernels.rs", KERNELS),
            ("src/bin/a.rs", "fn main() {}\n"),
            ("src/bin/b.rs", "fn main() {}\n"),
        ],
    );
    let (ok, _, err) = cargo_offload(pkg.path(), &["run", "--dry-run"]);
    assert!(!ok);
    assert!(err.contains("app has several binaries: pass --bin (one of a, b)"), "{err}");
}

#[test]
fn default_run_picks_the_binary_as_cargo_run_does() {
    let pkg = package(
        "default-run = \"b\"",
        &[
            ("src/kernels.rs", KERNELS),
            ("src/bin/a.rs", "fn main() {}\n"),
            ("src/bin/b.rs", "fn main() {}\n"),
        ],
    );
    let (ok, out, err) = cargo_offload(pkg.path(), &["run", "--dry-run"]);
    assert!(ok, "{err}");
    let last = out.lines().last().unwrap();
    assert_eq!(last, "$PKG/target/offload/host/x86_64-unknown-linux-gnu/release/b");
}

const NVPTX_DIR: &str = "$PKG/target/offload/images/app/nvptx64";

/// The NVIDIA image's build: rustc to bitcode, the device stage to PTX (a dry run knows no
/// kernels to name), ptxas.
fn nvptx_lines(cpu: &str) -> [String; 3] {
    let sysroot = nvptx_sysroot::entry_name("<toolchain>", cpu);
    [
        format!(
            "CARGO_TARGET_DIR=$PKG/target/offload/device-nvptx RUSTC=$RUSTC RUSTFLAGS='--sysroot=$SYSROOTS/{sysroot}/sysroot \
--cfg offload_device --check-cfg=cfg(offload_device) -Ctarget-cpu={cpu}' CARGO_OFFLOAD_AS_NVPTX_LINKER=1 cargo rustc --release \
--target nvptx64-nvidia-cuda --lib --manifest-path {NVPTX_DIR}/Cargo.toml --quiet -- --emit=llvm-bc={NVPTX_DIR}/app_offload_image.bc,link \
-Clinker=$CARGO_OFFLOAD"
        ),
        format!(
            "$OFFLOAD_LD nvptx {NVPTX_DIR}/app_offload_image.bc -o {NVPTX_DIR}/app_offload_image.ptx --cpu={cpu}"
        ),
        format!(
            "/opt/ptxas -arch={cpu} -o {NVPTX_DIR}/app_offload_image.cubin {NVPTX_DIR}/app_offload_image.ptx"
        ),
    ]
}

#[test]
fn all_devices_embed_the_cubin_first_then_the_host_image() {
    let pkg = default_package();
    let (ok, out, err) = cargo_offload(
        pkg.path(),
        &[
            "build",
            "--dry-run",
            "--devices",
            "all",
            "--ptxas",
            "/opt/ptxas",
            "--target-cpu",
            "sm_80",
        ],
    );
    assert!(ok, "{err}");
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 5, "{out}");
    assert_eq!(lines[0], IMAGE_LINE);
    assert_eq!(lines[1..4], nvptx_lines("sm_80"));
    // The PTX beside the cubin goes to the link stage too, for the library's own CUDA module.
    let host = host_line(
        "build",
        &format!("OFFLOAD_LD_ABI=llvm19 OFFLOAD_LD_RUNTIME_DIR=/usr/lib/llvm-19/lib OFFLOAD_LD_CACHE=$PKG/target/offload/ld-cache OFFLOAD_LD_CUDA_PTX={NVPTX_DIR}/app_offload_image.ptx"),
    )
    .replace(
        "OFFLOAD_LD_IMAGES=x86_64",
        &format!(
            "OFFLOAD_LD_IMAGES='nvptx64-nvidia-cuda={NVPTX_DIR}/app_offload_image.cubin;x86_64"
        ),
    );
    assert_eq!(lines[4], host.replace(".so OFFLOAD_LD_ABI", ".so' OFFLOAD_LD_ABI"));
}

#[test]
fn cuda_only_embeds_the_cubin_alone() {
    let pkg = default_package();
    let (ok, out, err) = cargo_offload(
        pkg.path(),
        &["build", "--dry-run", "--devices", "cuda", "--ptxas", "/opt/ptxas"],
    );
    assert!(ok, "{err}");
    let host = out.lines().nth(4).unwrap();
    assert!(host.contains(&format!(" OFFLOAD_LD_IMAGES=nvptx64-nvidia-cuda={NVPTX_DIR}/app_offload_image.cubin OFFLOAD_LD_ABI=")), "{host}");
    assert!(
        host.contains(&format!(" OFFLOAD_LD_CUDA_PTX={NVPTX_DIR}/app_offload_image.ptx ")),
        "{host}"
    );
}

/// Writes the package's `.cargo/config.toml`.
fn write_config(pkg: &Path, config: &str) {
    std::fs::create_dir_all(pkg.join(".cargo")).unwrap();
    std::fs::write(pkg.join(".cargo/config.toml"), config).unwrap();
}

/// Runs a dry build in the package's folder, where cargo reads its configuration, with `env`.
fn dry_build_in(pkg: &Path, env: &[(&str, &str)]) -> (bool, String, String) {
    cargo_offload_with(pkg, &["build", "--dry-run"], |c| {
        c.current_dir(pkg).envs(env.iter().copied())
    })
}

/// The host program's and the host-offload image's lines, with the user's flags in front.
fn lines_with_user_flags(flags: &str) -> [String; 2] {
    let ours_image =
        "--cfg offload_device --check-cfg=cfg(offload_device) -Clink-arg=-Wl,-z,nodelete";
    let image = IMAGE_LINE.replace(
        &format!("RUSTFLAGS='{ours_image}'"),
        &format!("RUSTFLAGS='{flags} {ours_image}'"),
    );
    let host = host_line(
        "build",
        "OFFLOAD_LD_ABI=llvm19 OFFLOAD_LD_RUNTIME_DIR=/usr/lib/llvm-19/lib OFFLOAD_LD_CACHE=$PKG/target/offload/ld-cache",
    )
    .replace("RUSTFLAGS='-Clinker-plugin-lto", &format!("RUSTFLAGS='{flags} -Clinker-plugin-lto"));
    [image, host]
}

#[test]
fn rustflags_of_cargo_configuration_come_before_ours() {
    let pkg = default_package();
    let config = "[build]\nrustflags = [\"-Ctarget-cpu=native\", \"--cfg\", \"fast\"]\n";
    write_config(pkg.path(), config);
    // cargo reads its configuration from the working folder.
    let (ok, out, err) = dry_build_in(pkg.path(), &[]);
    assert!(ok, "{err}");
    assert_eq!(out, lines_with_user_flags("-Ctarget-cpu=native --cfg fast").join("\n"));
    // RUSTFLAGS comes first for cargo, and so for cargo offload.
    let (ok, out, err) = dry_build_in(pkg.path(), &[("RUSTFLAGS", "-Copt-level=2")]);
    assert!(ok, "{err}");
    assert_eq!(out, lines_with_user_flags("-Copt-level=2").join("\n"));
}

#[test]
fn a_flag_with_spaces_goes_in_the_encoded_variable() {
    let pkg = default_package();
    let (ok, out, err) =
        dry_build_in(pkg.path(), &[("CARGO_ENCODED_RUSTFLAGS", "-Clink-arg=-L/opt/my libs\x1f-g")]);
    assert!(ok, "{err}");
    let host = out.lines().nth(1).unwrap();
    assert!(
        host.contains(
            "CARGO_ENCODED_RUSTFLAGS='-Clink-arg=-L/opt/my libs\\x1f-g\\x1f-Clinker-plugin-lto\\x1f"
        ),
        "{host}"
    );
    assert!(!host.contains(" RUSTFLAGS="), "{host}");
}

#[test]
fn cfg_targets_that_hold_take_the_place_of_build() {
    let pkg = default_package();
    let config = "[build]\nrustflags = [\"-g\"]\n[target.'cfg(unix)']\nrustflags = [\"-Cdebuginfo=1\"]\n\
                  [target.'cfg(windows)']\nrustflags = [\"-Cwin\"]\n";
    write_config(pkg.path(), config);
    let (ok, out, err) = dry_build_in(pkg.path(), &[]);
    assert!(ok, "{err}");
    assert_eq!(out, lines_with_user_flags("-Cdebuginfo=1").join("\n"));
    // What only cargo knows (a feature) is named, not guessed.
    let config =
        "[build]\nrustflags = [\"-g\"]\n[target.'cfg(feature = \"x\")']\nrustflags = [\"-Cx\"]\n";
    write_config(pkg.path(), config);
    let (ok, out, err) = dry_build_in(pkg.path(), &[]);
    assert!(ok, "{err}");
    assert_eq!(out, lines_with_user_flags("-g").join("\n"));
    assert!(
        err.contains("the rustflags of [target.'cfg(feature = \"x\")'] are not applied"),
        "{err}"
    );
}

#[test]
fn environment_configuration_counts() {
    let pkg = default_package();
    let config = "[build]\nrustflags = [\"--cfg=file\"]\n";
    write_config(pkg.path(), config);
    let (ok, out, err) = dry_build_in(pkg.path(), &[("CARGO_BUILD_RUSTFLAGS", "--cfg=env")]);
    assert!(ok, "{err}");
    assert_eq!(out, lines_with_user_flags("--cfg=file --cfg=env").join("\n"));
}

#[test]
fn test_selection_reaches_cargo_and_test_arguments_the_test_binaries() {
    let pkg = default_package();
    let (ok, out, err) = cargo_offload(
        pkg.path(),
        &["test", "--dry-run", "--bin", "app", "--no-fail-fast", "--", "scale", "--nocapture"],
    );
    assert!(ok, "{err}");
    let test = host_line(
        "test",
        "OFFLOAD_LD_ABI=llvm19 OFFLOAD_LD_RUNTIME_DIR=/usr/lib/llvm-19/lib OFFLOAD_LD_CACHE=$PKG/target/offload/ld-cache",
    );
    let test = format!("{test} --bin=app --no-fail-fast");
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines[1..], [format!("{test} --no-run"), format!("{test} -- scale --nocapture")]);
}

#[test]
fn features_reach_the_program_and_the_kernels() {
    let pkg = package(
        "\n[features]\ndefault = [\"wide\"]\nwide = []\nhalf = []\n",
        &[("src/main.rs", "mod kernels;\nfn main() {}\n"), ("src/kernels.rs", KERNELS)],
    );
    let env = "OFFLOAD_LD_ABI=llvm19 OFFLOAD_LD_RUNTIME_DIR=/usr/lib/llvm-19/lib OFFLOAD_LD_CACHE=$PKG/target/offload/ld-cache";
    // The default: the images enable what cargo resolves for the package; the program's own
    // build needs no option.
    let (ok, out, err) = cargo_offload(pkg.path(), &["build", "--dry-run"]);
    assert!(ok, "{err}");
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines[0], format!("{IMAGE_LINE} --no-default-features --features=default,wide"));
    assert_eq!(lines[1], host_line("build", env));
    // A selection: passed on to the program's build as it was given.
    let (ok, out, err) = cargo_offload(
        pkg.path(),
        &["build", "--dry-run", "--no-default-features", "--features", "half wide"],
    );
    assert!(ok, "{err}");
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines[0], format!("{IMAGE_LINE} --no-default-features --features=half,wide"));
    assert_eq!(
        lines[1],
        format!("{} --features=half,wide --no-default-features", host_line("build", env))
    );
    // The image crate declares the package's features, each empty.
    let manifest =
        std::fs::read_to_string(pkg.path().join("target/offload/images/app/x86_64/Cargo.toml"))
            .unwrap();
    assert!(
        manifest.contains("[features]\n\"default\" = []\n\"half\" = []\n\"wide\" = []\n"),
        "{manifest}"
    );
}

#[test]
fn the_image_crates_take_the_edition_and_the_checks_of_the_package() {
    let pkg = package_in(
        "2021",
        "",
        "\n[profile.release]\noverflow-checks = true\ndebug-assertions = true\nlto = true\n\
         [profile.release.package.app]\ndebug-assertions = false\n\
         [profile.release.package.other]\noverflow-checks = false\n",
        &[("src/main.rs", "mod kernels;\nfn main() {}\n"), ("src/kernels.rs", KERNELS)],
    );
    let (ok, _, err) = cargo_offload(pkg.path(), &["build", "--dry-run"]);
    assert!(ok, "{err}");
    let manifest =
        std::fs::read_to_string(pkg.path().join("target/offload/images/app/x86_64/Cargo.toml"))
            .unwrap();
    assert!(manifest.contains("edition = \"2021\""), "{manifest}");
    // What the kernels compute and check follows the program's profile, the package's own
    // override first; how the images are optimised and linked stays the images' own.
    assert!(
        manifest.contains(
            "[profile.release]\npanic = \"abort\"\ncodegen-units = 1\n\
             overflow-checks = true\ndebug-assertions = false\n"
        ),
        "{manifest}"
    );
    assert!(!manifest.contains("lto = true"), "{manifest}");
}

#[test]
fn release_is_accepted_out_of_habit() {
    let pkg = default_package();
    let (ok, plain, err) = cargo_offload(pkg.path(), &["build", "--dry-run"]);
    assert!(ok, "{err}");
    let (ok, release, err) = cargo_offload(pkg.path(), &["build", "--dry-run", "--release"]);
    assert!(ok, "{err}");
    assert_eq!(plain, release);
}

#[test]
fn a_workspace_manifest_is_told_apart_from_a_package() {
    // The package, a member of a workspace whose manifest is virtual.
    let ws = default_package();
    let member = ws.path().join("app");
    std::fs::create_dir_all(&member).unwrap();
    for file in ["Cargo.toml", "src"] {
        std::fs::rename(ws.path().join(file), member.join(file)).unwrap();
    }
    let manifest = std::fs::read_to_string(member.join("Cargo.toml")).unwrap();
    std::fs::write(member.join("Cargo.toml"), manifest.replace("[workspace]\n", "")).unwrap();
    std::fs::write(ws.path().join("Cargo.toml"), "[workspace]\nmembers = [\"app\"]\n").unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_cargo-offload"))
        .args(["build", "--dry-run", "--manifest-path"])
        .arg(ws.path().join("Cargo.toml"))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(err.contains("is a workspace's manifest, not a package's"), "{err}");
}

#[test]
fn an_optional_offload_left_out_by_the_features_is_named() {
    let pkg = default_package();
    let manifest = std::fs::read_to_string(pkg.path().join("Cargo.toml")).unwrap();
    let manifest = manifest.replace(" }\n\n[workspace]", ", optional = true }\n\n[workspace]");
    assert!(manifest.contains("optional = true"), "{manifest}");
    std::fs::write(pkg.path().join("Cargo.toml"), manifest).unwrap();
    let (ok, _, err) = cargo_offload(pkg.path(), &["build", "--dry-run"]);
    assert!(!ok);
    assert!(
        err.contains("through an optional dependency that the selected features leave out"),
        "{err}"
    );
}

#[test]
fn run_builds_and_runs_an_example() {
    let pkg = package(
        "",
        &[
            ("src/main.rs", "mod kernels;\nfn main() {}\n"),
            ("src/kernels.rs", KERNELS),
            ("examples/demo.rs", "#[path = \"../src/kernels.rs\"] mod kernels;\nfn main() {}\n"),
        ],
    );
    let (ok, out, err) =
        cargo_offload(pkg.path(), &["run", "--dry-run", "--example", "demo", "--", "7"]);
    assert!(ok, "{err}");
    let env = "OFFLOAD_LD_ABI=llvm19 OFFLOAD_LD_RUNTIME_DIR=/usr/lib/llvm-19/lib OFFLOAD_LD_CACHE=$PKG/target/offload/ld-cache";
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines[1], format!("{} --example=demo", host_line("build", env)));
    assert_eq!(
        lines[2],
        "$PKG/target/offload/host/x86_64-unknown-linux-gnu/release/examples/demo 7"
    );
    // Another name, two examples, or an example with a binary: refused, saying why.
    let (ok, _, err) = cargo_offload(pkg.path(), &["run", "--dry-run", "--example", "nope"]);
    assert!(!ok && err.contains("has no example `nope` (it has: demo)"), "{err}");
    let (ok, _, err) =
        cargo_offload(pkg.path(), &["run", "--dry-run", "--example", "demo", "--example", "demo"]);
    assert!(!ok && err.contains("runs one program"), "{err}");
    let (ok, _, err) =
        cargo_offload(pkg.path(), &["run", "--dry-run", "--example", "demo", "--bin", "app"]);
    assert!(!ok && err.contains("cannot be used with"), "{err}");
    // A build takes them too.
    let (ok, out, err) = cargo_offload(pkg.path(), &["build", "--dry-run", "--examples"]);
    assert!(ok, "{err}");
    assert_eq!(out.lines().nth(1).unwrap(), format!("{} --examples", host_line("build", env)));
}

#[test]
fn target_dir_places_every_build() {
    let pkg = default_package();
    let out_dir = tempfile::tempdir().unwrap();
    let target = out_dir.path().join("t");
    let (ok, out, err) = cargo_offload(
        pkg.path(),
        &["build", "--dry-run", "--target-dir", target.to_str().unwrap()],
    );
    assert!(ok, "{err}");
    let target = target.display().to_string();
    let lines: Vec<&str> = out.lines().collect();
    assert!(lines[0].starts_with(&format!("CARGO_TARGET_DIR={target}/offload/device ")), "{out}");
    assert!(lines[1].starts_with(&format!("CARGO_TARGET_DIR={target}/offload/host ")), "{out}");
    assert!(!out.contains("$PKG/target"), "{out}");
}

/// A `rustc` that says it is stable (to `-V`; cargo's questions go to the real one), and a
/// `rustup` that has no nightly, in `dir`; the PATH that finds that `rustup` first.
fn stable_without_nightly(dir: &Path) -> (PathBuf, std::ffi::OsString) {
    use std::os::unix::fs::PermissionsExt as _;
    let script = |name: &str, body: &str| {
        let path = dir.join(name);
        std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        path
    };
    let sysroot = Command::new("rustc").args(["--print", "sysroot"]).output().unwrap().stdout;
    let real = Path::new(String::from_utf8(sysroot).unwrap().trim()).join("bin/rustc");
    let rustc = script(
        "rustc",
        &format!(
            "if [ \"$1\" = -V ]; then echo 'rustc 1.95.0 (59807616e 2026-04-14)'; else exec {} \"$@\"; fi",
            real.display()
        ),
    );
    script("rustup", "echo 'error: toolchain nightly is not installed' >&2; exit 1");
    script("ptxas", "exit 0");
    let path = std::env::join_paths(
        std::iter::once(dir.to_path_buf())
            .chain(std::env::split_paths(&std::env::var_os("PATH").unwrap())),
    )
    .unwrap();
    (rustc, path)
}

#[test]
fn without_a_nightly_auto_builds_the_host_image_and_cuda_says_what_to_install() {
    let pkg = default_package();
    let tools = tempfile::tempdir().unwrap();
    let (rustc, path) = stable_without_nightly(tools.path());
    let ptxas = tools.path().join("ptxas");
    let ptxas = ptxas.to_str().unwrap();
    fn with_stable<'c>(
        cmd: &'c mut Command,
        rustc: &Path,
        path: &std::ffi::OsStr,
    ) -> &'c mut Command {
        cmd.env("RUSTC", rustc).env("PATH", path)
    }
    let (ok, out, err) = cargo_offload_with(
        pkg.path(),
        &["build", "--dry-run", "--devices", "auto", "--ptxas", ptxas],
        |cmd| with_stable(cmd, &rustc, &path),
    );
    assert!(ok, "{err}");
    assert!(!out.contains("nvptx64"), "{out}");
    assert!(
        err.contains("offload: warning: building for the host-offload device only (the NVIDIA image cannot be built: the NVIDIA image needs a nightly Rust toolchain: the package's rustc is rustc 1.95.0"),
        "{err}"
    );
    assert!(err.contains("rustup toolchain install nightly --component rust-src"), "{err}");
    let (ok, _, err) = cargo_offload_with(
        pkg.path(),
        &["build", "--dry-run", "--devices", "cuda", "--ptxas", ptxas],
        |cmd| with_stable(cmd, &rustc, &path),
    );
    assert!(!ok);
    assert!(
        err.starts_with("offload: error: the NVIDIA image needs a nightly Rust toolchain"),
        "{err}"
    );
}
