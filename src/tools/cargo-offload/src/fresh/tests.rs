use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use super::dep_info::dep_info_sources;
use super::{Check, Options, check_in, forget, host, record};
use crate::cargo_files::sets_key;
use crate::command::Runner;
use crate::image::{HOST_TRIPLE, Image, Made};
use crate::project::{Features, Project};

static NO_FEATURES: Features =
    Features { features: Vec::new(), all_features: false, no_default_features: false };

fn options() -> Options<'static> {
    Options { devices: "host", target_cpu: "sm_90", ptxas: None, features: &NO_FEATURES }
}

/// A package as a build leaves it: sources a minute old, an image and its dep-info, a rustc.
struct Built {
    dir: tempfile::TempDir,
    project: Project,
}

impl Built {
    fn new() -> Built {
        Built::at("")
    }

    /// The package in `folder` of a temporary folder, whose `target` is the target folder (a
    /// workspace's, for a package in a subfolder).
    fn at(folder: &str) -> Built {
        let dir = tempfile::tempdir().unwrap();
        let build_dir = dir.path().canonicalize().unwrap().join("target/offload");
        let root = dir.path().canonicalize().unwrap().join(folder);
        let project = Project {
            name: "app".into(),
            manifest: root.join("Cargo.toml"),
            kernels: root.join("src/kernels.rs"),
            offload: root.join("offload"),
            build_dir: build_dir.clone(),
            bins: vec!["app".into()],
            default_run: None,
            inputs: vec![root.join("Cargo.toml"), root.join("Cargo.lock")],
            build_scripts: Vec::new(),
            host_build_scripts: Vec::new(),
            package_dirs: vec![root.clone()],
            unbuilt: Vec::new(),
            user_rustflags: Vec::new(),
            selection: Features::default(),
            examples: Vec::new(),
            declared_features: Vec::new(),
            enabled_features: Vec::new(),
            edition: "2024".into(),
            profile: String::new(),
            kernel_dependencies: Vec::new(),
        };
        let built = Built { dir, project };
        for file in ["Cargo.toml", "Cargo.lock", "src/kernels.rs", "offload/src/lib.rs"] {
            built.write_old(file, "text");
        }
        // A rustc that names its toolchain when asked, as rustup's proxy would.
        for file in ["toolchain/bin/rustc", "toolchain/lib/librustc_driver.so"] {
            built.write_old(file, "binary");
        }
        let script = format!("#!/bin/sh\necho {}\n", root.join("toolchain").display());
        built.write_old("bin/rustc", &script);
        let rustc = built.path("bin/rustc");
        std::fs::set_permissions(&rustc, PermissionsExt::from_mode(0o755)).unwrap();
        set_age(&rustc, Duration::from_secs(60));
        set_age(&built.path("toolchain/lib"), Duration::from_secs(60));
        built.write_old("target/offload/device/libapp_image.so", "image");
        let dep_info = format!(
            "{0}/target/offload/device/libapp_image.so: {0}/src/kernels.rs {0}/offload/src/lib.rs\n",
            root.display()
        );
        built.write_old("target/offload/device/libapp_image.d", &dep_info);
        built
    }

    /// A package whose images were recorded by a build that started 10 s ago.
    fn recorded() -> Built {
        let built = Built::new();
        built.record(Duration::from_secs(10));
        built
    }

    /// The record's file.
    fn record_file(&self) -> PathBuf {
        std::fs::read_dir(self.project.build_dir.join("fresh"))
            .unwrap()
            .map(|e| e.unwrap().path())
            .find(|p| p.extension().is_some_and(|e| e == "json"))
            .unwrap()
    }

    fn path(&self, file: &str) -> PathBuf {
        self.project.manifest.parent().unwrap().join(file)
    }

    /// Writes `file` with a time a minute back: older than any build of the test.
    fn write_old(&self, file: &str, text: &str) {
        let path = self.path(file);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, text).unwrap();
        set_age(&path, Duration::from_secs(60));
    }

    fn images(&self) -> Vec<Image> {
        let made = Made {
            dep_info: self.path("target/offload/device/libapp_image.d"),
            tools: vec![self.path("bin/rustc")],
            outputs: Vec::new(),
        };
        vec![Image {
            triple: HOST_TRIPLE,
            path: self.path("target/offload/device/libapp_image.so"),
            made,
        }]
    }

    /// Records the images as built by a build that started `ago`.
    fn record(&self, ago: Duration) {
        self.try_record(ago).unwrap();
    }

    fn try_record(&self, ago: Duration) -> anyhow::Result<()> {
        let started = SystemTime::now() - ago;
        let runner = Runner::default();
        record(&runner, &self.project, &self.images(), &options(), &self.path("bin/rustc"), started)
    }

    fn check(&self, options: &Options<'_>) -> Check {
        check_in(Some(&self.project.manifest), options, None)
    }

    /// Why the record does not hold, or `None` where it does (then with this package's images).
    fn stale(&self) -> Option<String> {
        match self.check(&options()) {
            Check::Fresh(project, images, _) => {
                assert_eq!(project.manifest, self.project.manifest);
                assert_eq!(project.build_dir, self.project.build_dir);
                let paths: Vec<_> = images.iter().map(|i| (i.triple, i.path.clone())).collect();
                let expected: Vec<_> =
                    self.images().into_iter().map(|i| (i.triple, i.path)).collect();
                assert_eq!(paths, expected);
                None
            }
            Check::Stale(why) => Some(why),
        }
    }
}

fn set_age(path: &Path, age: Duration) {
    // Read-only: a folder opens only so (its owner may still set its times).
    let file = std::fs::File::open(path).unwrap();
    file.set_modified(SystemTime::now() - age).unwrap();
}

#[test]
fn a_recorded_build_is_fresh_until_a_source_changes() {
    let built = Built::new();
    assert_eq!(built.stale().unwrap(), "no record of an earlier build");
    built.record(Duration::from_secs(10));
    assert_eq!(built.stale(), None);
    // A change that keeps the size, with a time still older than the build: still seen.
    built.write_old("offload/src/lib.rs", "TEXT");
    let why = built.stale().unwrap();
    assert!(why.ends_with("offload/src/lib.rs changed"), "{why}");
}

#[test]
fn every_kind_of_input_counts() {
    for file in ["src/kernels.rs", "Cargo.toml", "Cargo.lock", "bin/rustc", "toolchain/bin/rustc"] {
        let built = Built::recorded();
        assert_eq!(built.stale(), None);
        built.write_old(file, "other text");
        let why = built.stale().unwrap();
        assert!(why.ends_with(&format!("{file} changed")), "{file}: {why}");
    }
}

#[test]
fn a_deleted_or_replaced_image_is_stale() {
    let built = Built::recorded();
    let image = built.path("target/offload/device/libapp_image.so");
    std::fs::remove_file(&image).unwrap();
    assert!(built.stale().unwrap().ends_with("libapp_image.so changed"));
    built.write_old("target/offload/device/libapp_image.so", "image");
    assert!(built.stale().unwrap().ends_with("libapp_image.so changed"));
}

#[test]
fn a_configuration_file_that_appears_counts() {
    let built = Built::recorded();
    built.write_old(".cargo/config.toml", "[build]\nrustflags = [\"-Copt-level=0\"]\n");
    let why = built.stale().unwrap();
    assert!(why.ends_with(".cargo/config.toml changed"), "{why}");
    let built = Built::recorded();
    built.write_old("rust-toolchain.toml", "[toolchain]\nchannel = \"nightly-2026-01-01\"\n");
    assert!(built.stale().unwrap().ends_with("rust-toolchain.toml changed"));
}

#[test]
fn a_source_saved_while_the_images_built_is_not_trusted() {
    let built = Built::new();
    // Saved a second before the build started: within the margin of a coarse clock.
    set_age(&built.path("src/kernels.rs"), Duration::from_secs(11));
    built.record(Duration::from_secs(10));
    let why = built.stale().unwrap();
    assert!(why.ends_with("src/kernels.rs changed while the images built"), "{why}");
    // What the build writes in the target folder is newer than its start by nature.
    let built = Built::new();
    built.write_old("target/offload/device/libapp_image.so", "image");
    set_age(&built.path("target/offload/device/libapp_image.so"), Duration::ZERO);
    built.record(Duration::from_secs(10));
    assert_eq!(built.stale(), None);
}

#[test]
fn other_options_are_stale() {
    let built = Built::recorded();
    let sm_80 = Options { target_cpu: "sm_80", ..options() };
    let all = Options { devices: "all", ..options() };
    let ptxas = Options { ptxas: Some(Path::new("/opt/ptxas")), ..options() };
    for options in [sm_80, all, ptxas] {
        match built.check(&options) {
            Check::Stale(why) => assert!(why.contains("the options"), "{why}"),
            Check::Fresh(..) => panic!("fresh under other options"),
        }
    }
}

#[test]
fn a_forgotten_record_is_no_record() {
    let built = Built::recorded();
    forget(&built.project).unwrap();
    assert_eq!(built.stale().unwrap(), "no record of an earlier build");
    forget(&built.project).unwrap();
}

#[test]
fn a_record_in_another_target_folder_is_not_found() {
    let built = Built::recorded();
    let elsewhere = built.dir.path().join("elsewhere");
    match check_in(Some(&built.project.manifest), &options(), Some(&elsewhere)) {
        Check::Stale(why) => assert_eq!(why, "no record of an earlier build"),
        Check::Fresh(..) => panic!("found under another CARGO_TARGET_DIR"),
    }
    // A record damaged or of another version is not used.
    std::fs::write(built.record_file(), "{\"format\": 0}").unwrap();
    assert!(built.stale().unwrap().contains("is not a record of this version"));
}

#[test]
fn the_toolchain_behind_rustc_counts() {
    // A new library in the toolchain (what `rustup update` does).
    let built = Built::recorded();
    built.write_old("toolchain/lib/librustc_driver-new.so", "binary");
    let why = built.stale().unwrap();
    assert!(why.ends_with("toolchain/lib changed"), "{why}");
    // nvptx64 libraries that appear in it (`rustup target add`): the nvptx image would use them.
    let built = Built::recorded();
    built.write_old("toolchain/lib/rustlib/nvptx64-nvidia-cuda/lib/libcore.rlib", "rlib");
    let why = built.stale().unwrap();
    assert!(why.contains("toolchain/lib"), "{why}");
}

#[test]
fn binaries_that_appear_or_go_count() {
    let built = Built::recorded();
    built.write_old("src/main.rs", "fn main() {}");
    assert!(built.stale().unwrap().ends_with("src/main.rs appeared"));
    built.record(Duration::from_secs(10));
    assert_eq!(built.stale(), None);
    // An edit of main.rs is host code: the images stay fresh.
    built.write_old("src/main.rs", "fn main() { println!(); }");
    assert_eq!(built.stale(), None);
    built.write_old("src/bin/other.rs", "fn main() {}");
    let why = built.stale().unwrap();
    assert!(why.ends_with("src/bin changed"), "{why}");
    std::fs::remove_file(built.path("src/main.rs")).unwrap();
    assert!(built.stale().unwrap().ends_with("src/main.rs was removed"));
    // An example that appears: the package's list of examples is read again.
    built.write_old("src/main.rs", "fn main() {}");
    built.record(Duration::from_secs(10));
    built.write_old("examples/demo.rs", "fn main() {}");
    let why = built.stale().unwrap();
    assert!(why.ends_with("examples changed"), "{why}");
    // A build script cargo would find by itself.
    built.record(Duration::from_secs(10));
    built.write_old("build.rs", "fn main() {}");
    assert!(built.stale().unwrap().ends_with("build.rs appeared"));
}

#[test]
fn what_the_record_cannot_see_is_not_recorded() {
    let built = Built::new();
    let mut project = built.project.clone();
    project.build_scripts = vec!["helper".into()];
    let started = SystemTime::now() - Duration::from_secs(10);
    let runner = Runner::default();
    let err =
        record(&runner, &project, &built.images(), &options(), &built.path("bin/rustc"), started);
    assert!(format!("{:#}", err.unwrap_err()).contains("`helper`"));
    // A dep-info source that does not exist: a name the parser misread.
    let root = built.path("");
    let dep_info = format!("{0}/lib.so: {0}/src/kernels.rs {0}/src/gone.rs\n", root.display());
    built.write_old("target/offload/device/libapp_image.d", &dep_info);
    let err = built.try_record(Duration::from_secs(10)).unwrap_err();
    assert!(format!("{err:#}").contains("gone.rs, which does not exist"), "{err:#}");
    // A cargo configuration that includes others.
    let built = Built::new();
    built.write_old(".cargo/config.toml", "include = [\"more.toml\"]\n");
    let err = built.try_record(Duration::from_secs(10)).unwrap_err();
    assert!(format!("{err:#}").contains("includes other files"), "{err:#}");
    assert_eq!(built.stale().unwrap(), "no record of an earlier build");
}

#[test]
fn dep_info_lists_sources_with_escaped_spaces() {
    let text = "/t/lib.so: /a/k.rs /b/my\\ dir/m.rs /c/back\\slash.rs\n\n# env-dep:X=1\n/a/k.rs:\n";
    let sources = dep_info_sources(text).unwrap();
    let expected: Vec<PathBuf> =
        ["/a/k.rs", "/b/my dir/m.rs", "/c/back\\slash.rs"].iter().map(PathBuf::from).collect();
    assert_eq!(sources, expected);
    let relative = dep_info_sources("lib.so: src/k.rs\n").unwrap_err();
    assert!(format!("{relative:#}").contains("src/k.rs relative to a folder"));
}

#[test]
fn a_member_finds_its_workspace_record_past_an_old_one_of_its_own() {
    let built = Built::at("app");
    built.record(Duration::from_secs(10));
    assert_eq!(built.stale(), None);
    // A record from when the package was built on its own, in its own target folder, which is
    // looked at first: it does not hold, and the workspace's does.
    let record = built.record_file();
    let old = built.path("target/offload/fresh").join(record.file_name().unwrap());
    std::fs::create_dir_all(old.parent().unwrap()).unwrap();
    std::fs::write(&old, "{\"format\": 0}").unwrap();
    assert_eq!(built.stale(), None);
    std::fs::remove_file(&record).unwrap();
    assert!(built.stale().unwrap().contains("is not a record of this version"));
}

#[test]
fn only_an_include_key_is_an_include() {
    assert!(sets_key("include = [\"more.toml\"]\n", "include"));
    assert!(sets_key("[build]\njobs = 2\n  include= \"x.toml\"\n", "include"));
    assert!(!sets_key("[env]\nCPATH = \"/usr/include\"\n", "include"));
    assert!(!sets_key("[build]\nrustflags = [\"-L/usr/include\"]\n# include\n", "include"));
}

/// A package whose images were recorded, with the program `app` and its dep-info listing
/// `src/main.rs`, as its host build leaves them.
fn with_program() -> Built {
    let built = Built::recorded();
    built.write_old("src/main.rs", "fn main() {}");
    built.record(Duration::from_secs(10));
    let release = "target/offload/host/x86_64-unknown-linux-gnu/release";
    built.write_old(&format!("{release}/app"), "program");
    let main = built.path("src/main.rs");
    let program = built.path(&format!("{release}/app"));
    built.write_old(
        &format!("{release}/app.d"),
        &format!("{}: {}\n", program.display(), main.display()),
    );
    // The package's folders, inputs too, as old as their files.
    for dir in ["", "src"] {
        set_age(&built.path(dir), Duration::from_secs(60));
    }
    built
}

impl Built {
    fn program(&self) -> PathBuf {
        self.path("target/offload/host/x86_64-unknown-linux-gnu/release/app")
    }

    /// Records the host program as built by cargo as `command`, from `ago`.
    fn record_host(&self, command: &str, ago: Duration) -> anyhow::Result<()> {
        host::record(&self.project, command, &[self.program()], SystemTime::now() - ago)
    }
}

#[test]
fn a_recorded_host_program_is_fresh_until_its_sources_or_command_change() {
    let built = with_program();
    assert!(host::stale(&built.project, "c").unwrap().starts_with("no record"));
    built.record_host("c", Duration::from_secs(10)).unwrap();
    assert_eq!(host::stale(&built.project, "c"), None);
    assert!(host::stale(&built.project, "other").unwrap().contains("command changed"));
    // A source saved within the margin before the build started (1 s) is not trusted.
    built.record_host("c", Duration::from_secs(59)).unwrap();
    let why = host::stale(&built.project, "c").unwrap();
    assert!(why.contains("changed while the host program built"), "{why}");
    built.record_host("c", Duration::from_secs(10)).unwrap();
    built.write_old("src/main.rs", "fn main() { println!(); }");
    assert!(host::stale(&built.project, "c").unwrap().ends_with("src/main.rs changed"));
    built.record_host("c", Duration::from_secs(10)).unwrap();
    // The images recorded again: not the program's.
    built.record(Duration::from_secs(5));
    let why = host::stale(&built.project, "c").unwrap();
    assert!(why.contains("images were recorded again"), "{why}");
    built.record_host("c", Duration::from_secs(5)).unwrap();
    // The program replaced, or a build script that appears.
    built.write_old("target/offload/host/x86_64-unknown-linux-gnu/release/app", "other program");
    assert!(host::stale(&built.project, "c").unwrap().ends_with("release/app changed"));
    built.record_host("c", Duration::from_secs(5)).unwrap();
    built.write_old("build.rs", "fn main() {}");
    assert!(host::stale(&built.project, "c").is_some());
    let e = built.record_host("c", Duration::from_secs(5)).unwrap_err().to_string();
    assert!(e.contains("is a build script"), "{e}");
}

#[test]
fn files_the_dependencies_build_scripts_watch_are_inputs() {
    let built = with_program();
    let watched = built.path("outside/input.txt");
    built.write_old("outside/input.txt", "1");
    let output = format!(
        "cargo:rerun-if-changed=build.rs\ncargo::rerun-if-changed={}\ncargo:rustc-cfg=x\n",
        watched.display()
    );
    built.write_old(
        "target/offload/host/x86_64-unknown-linux-gnu/release/build/dep-1/output",
        &output,
    );
    set_age(&built.path(""), Duration::from_secs(60));
    built.record_host("c", Duration::from_secs(10)).unwrap();
    assert_eq!(host::stale(&built.project, "c"), None);
    built.write_old("outside/input.txt", "22");
    assert!(host::stale(&built.project, "c").unwrap().ends_with("outside/input.txt changed"));
    // A watched folder: cargo looks at every file in it, the record would not.
    let output = format!("cargo:rerun-if-changed={}\n", built.path("outside").display());
    built.write_old("target/offload/host/release/build/dep-2/output", &output);
    let e = built.record_host("c", Duration::from_secs(10)).unwrap_err().to_string();
    assert!(e.contains("watches the folder"), "{e}");
}

#[test]
fn messages_cargo_shows_again_leave_the_host_program_unrecorded() {
    let built = with_program();
    // A proc-macro's warning, among the units built for the host.
    let unit = "target/offload/host/release/.fingerprint/pm-1";
    built.write_old(&format!("{unit}/lib-pm"), "fingerprint");
    built.write_old(&format!("{unit}/output-lib-pm"), "{\"message\":\"warning\"}");
    let e = built.record_host("c", Duration::from_secs(10)).unwrap_err().to_string();
    assert!(e.contains("compiler messages") && e.contains("output-lib-pm"), "{e}");
    // The same unit built since with other flags, without a warning: the old one's messages
    // are not shown again.
    let newer = "target/offload/host/release/.fingerprint/pm-2/lib-pm";
    built.write_old(newer, "fingerprint");
    set_age(&built.path(newer), Duration::from_secs(30));
    built.record_host("c", Duration::from_secs(10)).unwrap();
}

#[test]
fn programs_cargo_leaves_out_are_not_the_records() {
    let mut built = Built::new();
    built.project.bins = vec!["app".into(), "extra".into()];
    built.project.examples = vec!["demo".into(), "gated".into()];
    // `extra` and `gated` need features the build does not enable.
    built.project.unbuilt = vec!["extra".into(), "gated".into()];
    let names = |programs: Vec<PathBuf>| -> Vec<String> {
        programs.iter().map(|p| p.file_name().unwrap().to_string_lossy().into_owned()).collect()
    };
    assert_eq!(names(crate::host::programs(&built.project, &[], false)), ["app"]);
    assert_eq!(names(crate::host::programs(&built.project, &[], true)), ["app", "demo"]);
    let asked = ["gated".to_owned(), "demo".to_owned()];
    assert_eq!(names(crate::host::programs(&built.project, &asked, false)), ["app", "demo"]);
}
