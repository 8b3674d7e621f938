//! Real builds of a small package, one after another: the second finds the device images fresh
//! and builds only the host program; an edit of the kernels, a deleted image or other options
//! build the images again, with what changed in them.
//!
//! The host program is linked by a stand-in for offload-ld that only writes its output: what is
//! tested is which images are built and what they hold, not the program.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, SystemTime};

use object::{Object as _, ObjectSymbol as _};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../..").canonicalize().unwrap()
}

/// Writes `file` under `dir`, dated a minute back: older than the builds that follow by more
/// than the record's margin.
fn write_old(dir: &Path, file: &str, text: &str) {
    let path = dir.join(file);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(&path, text).unwrap();
    let file = std::fs::File::options().append(true).open(&path).unwrap();
    file.set_modified(SystemTime::now() - Duration::from_secs(60)).unwrap();
}

fn kernels(names: &[&str]) -> String {
    names
        .iter()
        .map(|n| format!("#[offload::kernel]\npub fn {n}(y: &mut [f32]) {{ y[0] = 1.0; }}\n"))
        .collect()
}

/// Runs one build of the package in `pkg` with the stand-in linker `ld` and `extra` options;
/// returns whether it succeeded and what it printed on stderr.
fn run_build(pkg: &Path, ld: &Path, extra: &[&str]) -> (bool, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_cargo-offload"))
        .args(["build", "--manifest-path"])
        .arg(pkg.join("Cargo.toml"))
        .args(["--devices", "host"])
        .args(extra)
        .current_dir(pkg)
        .env_remove("RUSTFLAGS")
        .env_remove("CARGO_TARGET_DIR")
        .env("OFFLOAD_LD", ld)
        .output()
        .unwrap();
    (out.status.success(), String::from_utf8_lossy(&out.stderr).into_owned())
}

/// What one build printed on stderr.
fn build(pkg: &Path, ld: &Path, extra: &[&str]) -> String {
    let (ok, stderr) = run_build(pkg, ld, extra);
    assert!(ok, "the build failed:\n{stderr}");
    stderr
}

/// What a build that must fail printed on stderr.
fn failed_build(pkg: &Path, ld: &Path, extra: &[&str]) -> String {
    let (ok, stderr) = run_build(pkg, ld, extra);
    assert!(!ok, "the build did not fail:\n{stderr}");
    stderr
}

const BUILT: &str = "offload: building the host-offload image of app (x86_64)";
const FRESH: &str = "offload: the device images of app are up to date";

/// The kernels the host-offload image exports.
fn image_kernels(pkg: &Path) -> Vec<String> {
    let image =
        pkg.join("target/offload/device/x86_64-unknown-linux-gnu/release/libapp_offload_image.so");
    let bytes = std::fs::read(image).unwrap();
    let file = object::File::parse(&*bytes).unwrap();
    let mut names: Vec<String> = file
        .dynamic_symbols()
        .filter_map(|s| Some(s.name().ok()?.strip_prefix("__offload_kernel.")?.to_owned()))
        .collect();
    names.sort();
    names
}

/// A package `app` in `pkg` with the extra manifest text and kernels, dated a minute back, with
/// its lockfile; returns the stand-in linker.
fn package(pkg: &Path, extra_manifest: &str, kernels: &str) -> PathBuf {
    let manifest = format!(
        "[package]\nname = \"app\"\nversion = \"0.1.0\"\nedition = \"2024\"\n{extra_manifest}\n\
         [dependencies]\noffload = {{ path = {:?} }}\n\n[workspace]\n",
        repo().join("library/offload").display().to_string()
    );
    write_old(pkg, "Cargo.toml", &manifest);
    write_old(
        pkg,
        "rust-toolchain.toml",
        &std::fs::read_to_string(repo().join("rust-toolchain.toml")).unwrap(),
    );
    write_old(pkg, "src/main.rs", "mod kernels;\nfn main() {}\n");
    write_old(pkg, "src/kernels.rs", kernels);
    // The lockfile, made now: one that the first build wrote would be newer than its start,
    // and the second build would check the images again.
    let lock = Command::new("cargo").arg("generate-lockfile").current_dir(pkg).status().unwrap();
    assert!(lock.success());
    let lock = std::fs::read_to_string(pkg.join("Cargo.lock")).unwrap();
    write_old(pkg, "Cargo.lock", &lock);
    // The stand-in linker: writes the file named after -o.
    let ld = pkg.join("ld.sh");
    std::fs::write(&ld, "#!/bin/sh\nwhile [ $# -gt 0 ]; do\n  if [ \"$1\" = -o ]; then : > \"$2\"; fi\n  shift\ndone\n").unwrap();
    Command::new("chmod").arg("+x").arg(&ld).status().unwrap();
    ld
}

#[test]
fn fresh_images_are_reused_and_changed_ones_rebuilt() {
    let dir = tempfile::tempdir().unwrap();
    let pkg = dir.path().canonicalize().unwrap();
    let ld = package(&pkg, "", &kernels(&["first"]));

    let first = build(&pkg, &ld, &[]);
    assert!(first.contains(BUILT) && !first.contains(FRESH), "{first}");
    assert_eq!(image_kernels(&pkg), ["first"]);
    let again = build(&pkg, &ld, &["--verbose"]);
    assert!(again.contains(FRESH) && !again.contains(BUILT), "{again}");

    // An edit of the kernels (dated now: cargo rebuilds only what is newer than its output):
    // the image holds the new kernel.
    std::fs::write(pkg.join("src/kernels.rs"), kernels(&["first", "second"])).unwrap();
    let edited = build(&pkg, &ld, &["--verbose"]);
    assert!(edited.contains("src/kernels.rs changed") && edited.contains(BUILT), "{edited}");
    assert_eq!(image_kernels(&pkg), ["first", "second"]);
    // Saved just before that build began, within the record's margin: the next build may
    // check the images again (cargo finds them fresh), the one after trusts the record.
    build(&pkg, &ld, &[]);
    assert!(build(&pkg, &ld, &[]).contains(FRESH));

    // A deleted image is built again.
    let image =
        pkg.join("target/offload/device/x86_64-unknown-linux-gnu/release/libapp_offload_image.so");
    std::fs::remove_file(&image).unwrap();
    let deleted = build(&pkg, &ld, &[]);
    assert!(deleted.contains(BUILT), "{deleted}");
    assert_eq!(image_kernels(&pkg), ["first", "second"]);

    // Other options are not the record's.
    let other = build(&pkg, &ld, &["--verbose", "--target-cpu", "sm_80"]);
    assert!(other.contains("the options") && other.contains(BUILT), "{other}");

    // A dry run neither uses nor writes the record: it prints the plan.
    let dry = Command::new(env!("CARGO_BIN_EXE_cargo-offload"))
        .args(["build", "--dry-run", "--devices", "host", "--manifest-path"])
        .arg(pkg.join("Cargo.toml"))
        .env("OFFLOAD_LD", &ld)
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&dry.stdout).contains("cargo build --release --target x86_64"));
}

const HOST_BUILT: &str = "offload: building the host program of app";
const HOST_FRESH: &str = "offload: the host program of app is up to date";

/// A build after another with nothing changed does not start cargo for the host program; a
/// changed source, a deleted program, other options, a new example, a warning cargo would show
/// again or a build script make cargo build it.
#[test]
fn an_unchanged_host_program_is_not_built_again() {
    let dir = tempfile::tempdir().unwrap();
    let pkg = dir.path().canonicalize().unwrap();
    let ld = package(&pkg, "", &kernels(&["first"]));
    assert!(build(&pkg, &ld, &[]).contains(HOST_BUILT));
    // The first build made `target` in the package's folder, within the record's margin.
    settled_build(&pkg, &ld);
    let fresh = build(&pkg, &ld, &[]);
    assert!(fresh.contains(FRESH) && fresh.contains(HOST_FRESH), "{fresh}");
    assert!(!fresh.contains(HOST_BUILT), "{fresh}");
    let program = pkg.join("target/offload/host/x86_64-unknown-linux-gnu/release/app");
    assert!(program.is_file());

    // An edit of the program's source (dated now, as cargo needs to see it).
    std::fs::write(pkg.join("src/main.rs"), "mod kernels;\nfn main() { println!(); }\n").unwrap();
    let edited = build(&pkg, &ld, &["--verbose"]);
    assert!(edited.contains("src/main.rs changed") && edited.contains(HOST_BUILT), "{edited}");
    // Saved within the record's margin of that build (unit-tested in fresh/tests.rs): trusted
    // once a build started later.
    settled_build(&pkg, &ld);
    assert!(build(&pkg, &ld, &[]).contains(HOST_FRESH));

    // The program deleted: built again, and recorded.
    std::fs::remove_file(&program).unwrap();
    let deleted = build(&pkg, &ld, &["--verbose"]);
    assert!(deleted.contains("changed") && deleted.contains(HOST_BUILT), "{deleted}");
    assert!(program.is_file());
    assert!(build(&pkg, &ld, &[]).contains(HOST_FRESH));

    // An example that appears, and another cargo command (the example asked for, then not).
    write_old(&pkg, "examples/demo.rs", "fn main() {}\n");
    // (The folders `examples` and the package's changed now: only a later build is trusted.)
    std::thread::sleep(Duration::from_millis(2100));
    let appeared = build(&pkg, &ld, &["--verbose"]);
    assert!(appeared.contains("examples changed") && appeared.contains(HOST_BUILT), "{appeared}");
    let example = build(&pkg, &ld, &["--verbose", "--example", "demo"]);
    assert!(example.contains("command changed") && example.contains(HOST_BUILT), "{example}");
    assert!(program.with_file_name("examples").join("demo").is_file());
    assert!(build(&pkg, &ld, &["--example", "demo"]).contains(HOST_FRESH));
    let back = build(&pkg, &ld, &["--verbose"]);
    assert!(back.contains("command changed") && back.contains(HOST_BUILT), "{back}");

    // A warning, which cargo shows again on every build: not recorded, so shown every time.
    std::fs::write(pkg.join("src/main.rs"), "mod kernels;\nfn main() { let unused = 1; }\n")
        .unwrap();
    settled_build(&pkg, &ld);
    for _ in 0..2 {
        let warned = build(&pkg, &ld, &[]);
        assert!(warned.contains("unused variable") && warned.contains(HOST_BUILT), "{warned}");
    }
    let warned = build(&pkg, &ld, &["--verbose"]);
    assert!(warned.contains("unused variable") && warned.contains("compiler messages"), "{warned}");
    std::fs::write(pkg.join("src/main.rs"), "mod kernels;\nfn main() {}\n").unwrap();
    settled_build(&pkg, &ld);
    assert!(build(&pkg, &ld, &[]).contains(HOST_FRESH));

    // A build script, found by cargo (the images' record sees it appear and the package is read
    // again) or named in the manifest: cargo alone knows what it reads.
    write_old(&pkg, "build.rs", "fn main() {}\n");
    let appeared = build(&pkg, &ld, &["--verbose"]);
    assert!(appeared.contains("build.rs appeared") && appeared.contains(BUILT), "{appeared}");
    settled_build(&pkg, &ld);
    let script = build(&pkg, &ld, &["--verbose"]);
    assert!(script.contains("has a build script") && script.contains(HOST_BUILT), "{script}");
    std::fs::remove_file(pkg.join("build.rs")).unwrap();
    let manifest = std::fs::read_to_string(pkg.join("Cargo.toml")).unwrap();
    write_old(&pkg, "Cargo.toml", &manifest.replace("edition", "build = \"gen.rs\"\nedition"));
    write_old(&pkg, "gen.rs", "fn main() {}\n");
    settled_build(&pkg, &ld);
    let script = build(&pkg, &ld, &["--verbose"]);
    assert!(script.contains("has a build script") && script.contains(HOST_BUILT), "{script}");
}

/// A build that starts past the record's margin (2 s) after what was saved before it.
fn settled_build(pkg: &Path, ld: &Path) {
    std::thread::sleep(Duration::from_millis(2100));
    build(pkg, ld, &[]);
}

/// The kernels are compiled with the package's features, as cargo resolves them for the
/// program: a type or a kernel that a feature selects is the same on both sides.
#[test]
fn the_images_see_the_features_of_the_build() {
    let dir = tempfile::tempdir().unwrap();
    let pkg = dir.path().canonicalize().unwrap();
    let ld = package(
        &pkg,
        "\n[features]\ndefault = [\"wide\"]\nwide = []\n\"extra-kernel\" = [\"more\"]\nmore = []\n",
        "#[cfg(feature = \"wide\")]\n#[offload::kernel]\npub fn wide(y: &mut [f64]) { y[0] = 1.0; }\n\
         #[cfg(not(feature = \"wide\"))]\n#[offload::kernel]\npub fn narrow(y: &mut [f32]) { y[0] = 1.0; }\n\
         #[cfg(feature = \"more\")]\n#[offload::kernel]\npub fn more(y: &mut [f32]) { y[0] = 1.0; }\n",
    );
    let default = build(&pkg, &ld, &[]);
    assert!(!default.contains("unexpected"), "{default}");
    assert_eq!(image_kernels(&pkg), ["wide"]);
    // Another selection is not the record's; a feature enabling another enables it here too.
    let other = build(&pkg, &ld, &["--verbose", "--no-default-features", "-F", "extra-kernel"]);
    assert!(other.contains("the options") && other.contains(BUILT), "{other}");
    assert_eq!(image_kernels(&pkg), ["more", "narrow"]);
    build(&pkg, &ld, &["--all-features"]);
    assert_eq!(image_kernels(&pkg), ["more", "wide"]);
    // An unknown feature is cargo's error, before anything is built.
    let stderr = failed_build(&pkg, &ld, &["--features", "nope"]);
    assert!(stderr.contains("nope"), "{stderr}");
}

/// Writes the path dependency `shapes` under `pkg`: a no_std library with plain data, a function
/// and a constant that a feature selects, dated a minute back.
fn shapes_crate(pkg: &Path, scale: &str) {
    write_old(
        pkg,
        "shapes/Cargo.toml",
        &format!(
            "[package]\nname = \"shapes\"\nversion = \"0.1.0\"\nedition = \"2024\"\n\n\
             [dependencies]\noffload = {{ path = {:?} }}\n\n[features]\nwide = []\nextra = []\n",
            repo().join("library/offload").display().to_string()
        ),
    );
    write_old(
        pkg,
        "shapes/src/lib.rs",
        &format!(
            "#![no_std]\n\
             #[derive(Clone, Copy, offload::DeviceCopy)]\n#[repr(C)]\npub struct Point {{ pub x: f32, pub y: f32 }}\n\
             pub fn scale(p: &Point) -> f32 {{ {scale} * (p.x + p.y) }}\n\
             #[cfg(feature = \"wide\")]\npub const WIDTH: f32 = 64.0;\n"
        ),
    );
}

/// The kernels use the package's dependencies that the manifest names for them: the images
/// depend on each, as resolved for the program (its path, a rename, the features of the
/// program's build: not those a dev-dependency adds), and an edit of one builds the images
/// again.
#[test]
fn the_kernels_use_the_dependencies_named_for_them() {
    let dir = tempfile::tempdir().unwrap();
    let pkg = dir.path().canonicalize().unwrap();
    shapes_crate(&pkg, "2.0");
    let ld = package(
        &pkg,
        "\n[package.metadata.offload]\nkernel-dependencies = [\"geometry\"]\n\n\
         [dependencies.geometry]\npackage = \"shapes\"\npath = \"shapes\"\nfeatures = [\"wide\"]\n\n\
         [dev-dependencies.geometry]\npackage = \"shapes\"\npath = \"shapes\"\nfeatures = [\"extra\"]\n",
        "#[offload::kernel]\n\
         pub fn scaled(points: &[geometry::Point], y: &mut [f32]) {\n\
         \x20   y[0] = geometry::scale(&points[0]) + geometry::WIDTH;\n}\n",
    );
    let first = build(&pkg, &ld, &[]);
    assert!(first.contains(BUILT), "{first}");
    assert_eq!(image_kernels(&pkg), ["scaled"]);
    let manifest =
        std::fs::read_to_string(pkg.join("target/offload/images/app/x86_64/Cargo.toml")).unwrap();
    let line = format!(
        "geometry = {{ package = \"shapes\", path = {:?}, default-features = false, features = [\"wide\"] }}",
        pkg.join("shapes").display().to_string()
    );
    assert!(manifest.contains(&line), "{manifest}");
    let again = build(&pkg, &ld, &[]);
    assert!(again.contains(FRESH), "{again}");
    // An edit of the dependency's source is an edit of the kernels.
    std::thread::sleep(Duration::from_millis(10));
    std::fs::write(
        pkg.join("shapes/src/lib.rs"),
        std::fs::read_to_string(pkg.join("shapes/src/lib.rs")).unwrap().replace("2.0", "3.0"),
    )
    .unwrap();
    let edited = build(&pkg, &ld, &["--verbose"]);
    assert!(edited.contains(BUILT), "{edited}");
}

/// A name in kernel-dependencies that is not one of the package's dependencies is refused
/// before anything is built, saying what the kernels can use.
#[test]
fn a_kernel_dependency_the_package_lacks_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let pkg = dir.path().canonicalize().unwrap();
    let ld = package(
        &pkg,
        "\n[package.metadata.offload]\nkernel-dependencies = [\"shapes\"]\n",
        &kernels(&["k"]),
    );
    let stderr = failed_build(&pkg, &ld, &[]);
    assert!(
        stderr.contains(
            "kernel-dependencies names `shapes`, which is not one of app's [dependencies]"
        ),
        "{stderr}"
    );
    assert!(!pkg.join("target/offload/images").exists());
}

/// A dependency whose library is named otherwise than its package is found; one for some
/// targets only is refused, saying why.
#[test]
fn kernel_dependencies_by_library_name_and_for_every_target() {
    let dir = tempfile::tempdir().unwrap();
    let pkg = dir.path().canonicalize().unwrap();
    shapes_crate(&pkg, "2.0");
    let shapes = pkg.join("shapes/Cargo.toml");
    let manifest = std::fs::read_to_string(&shapes).unwrap();
    write_old(
        &pkg,
        "shapes/Cargo.toml",
        &manifest.replace("[dependencies]", "[lib]\nname = \"geo\"\n\n[dependencies]"),
    );
    let ld = package(
        &pkg,
        "\n[package.metadata.offload]\nkernel-dependencies = [\"shapes\"]\n\n\
         [dependencies.shapes]\npath = \"shapes\"\nfeatures = [\"wide\"]\n",
        "#[offload::kernel]\npub fn scaled(points: &[geo::Point], y: &mut [f32]) {\n\
         \x20   y[0] = geo::scale(&points[0]) + geo::WIDTH;\n}\n",
    );
    let built = build(&pkg, &ld, &[]);
    assert!(built.contains(BUILT), "{built}");
    assert_eq!(image_kernels(&pkg), ["scaled"]);

    let manifest = std::fs::read_to_string(pkg.join("Cargo.toml")).unwrap();
    let manifest =
        manifest.replace("[dependencies.shapes]", "[target.'cfg(windows)'.dependencies.shapes]");
    std::fs::write(pkg.join("Cargo.toml"), manifest).unwrap();
    let stderr = failed_build(&pkg, &ld, &[]);
    assert!(stderr.contains("a dependency of app for `cfg(windows)` only"), "{stderr}");
}

/// A proc-macro crate can be a kernel dependency (its unit is the build machine's), and a
/// dependency that is not renamed is the one the kernels name, not a renamed copy of the same
/// package at another version.
#[test]
fn kernel_dependencies_proc_macros_and_two_versions() {
    // The dependencies beside the package, not in it (path dependencies inside a workspace
    // join it, and two packages of one name cannot).
    let dir = tempfile::tempdir().unwrap();
    let deps = dir.path().canonicalize().unwrap();
    let pkg = deps.join("app");
    write_old(
        &deps,
        "pmac/Cargo.toml",
        "[package]\nname = \"pmac\"\nversion = \"0.1.0\"\nedition = \"2024\"\n\n[lib]\nproc-macro = true\n",
    );
    write_old(
        &deps,
        "pmac/src/lib.rs",
        "use proc_macro::TokenStream;\n#[proc_macro]\npub fn four(_: TokenStream) -> TokenStream {\n    \"4.0f32\".parse().unwrap()\n}\n",
    );
    for (dir, version, item) in [("shapes", "0.1.0", "V1"), ("shapes2", "0.2.0", "V2")] {
        write_old(
            &deps,
            &format!("{dir}/Cargo.toml"),
            &format!("[package]\nname = \"shapes\"\nversion = \"{version}\"\nedition = \"2024\"\n"),
        );
        write_old(
            &deps,
            &format!("{dir}/src/lib.rs"),
            &format!("#![no_std]\npub const {item}: f32 = 2.0;\n"),
        );
    }
    let ld = package(
        &pkg,
        "\n[package.metadata.offload]\nkernel-dependencies = [\"pmac\", \"shapes\"]\n\n\
         [dependencies.pmac]\npath = \"../pmac\"\n\n\
         [dependencies.shapes]\npath = \"../shapes2\"\n\n\
         [dependencies.old]\npackage = \"shapes\"\npath = \"../shapes\"\n",
        "#[offload::kernel]\npub fn four(y: &mut [f32]) {\n    y[0] = pmac::four!() * shapes::V2;\n}\n",
    );
    let built = build(&pkg, &ld, &[]);
    assert!(built.contains(BUILT), "{built}");
    assert_eq!(image_kernels(&pkg), ["four"]);
    let manifest =
        std::fs::read_to_string(pkg.join("target/offload/images/app/x86_64/Cargo.toml")).unwrap();
    assert!(
        manifest.contains(&format!("path = {:?}", deps.join("shapes2").display().to_string())),
        "{manifest}"
    );
}
