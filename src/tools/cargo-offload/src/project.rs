//! The user's package: where its kernels are, where `offload` comes from, where to build.
//!
//! Convention: a package's kernels live in `src/kernels.rs` (or the file named by
//! `[package.metadata.offload] kernels = "..."`), declared in the program as `mod kernels;`.
//! That file, and the modules it declares, may use `offload`, `core` and the package's
//! dependencies named in `[package.metadata.offload] kernel-dependencies = [...]`: it is
//! compiled for the device images as the root of its own crate, which depends on those.

use std::path::{Path, PathBuf};

use anyhow::{Context as _, Result, anyhow, bail};
use cargo_metadata::{CargoOpt, DependencyKind, Metadata, MetadataCommand, Package};
use serde::{Deserialize, Serialize};

use crate::command::Runner;

/// Cargo's feature selection for the package: passed to the build of the host program, and
/// applied to the kernels in the device images, which see the same `cfg(feature = "..")`.
#[derive(clap::Args, Clone, Debug, Default, Hash, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Features {
    /// Features of the package to enable (separated by commas or spaces; may be repeated).
    #[arg(short = 'F', long = "features", value_name = "FEATURES")]
    pub(crate) features: Vec<String>,
    /// Enable all the package's features.
    #[arg(long)]
    pub(crate) all_features: bool,
    /// Do not enable the package's `default` feature.
    #[arg(long)]
    pub(crate) no_default_features: bool,
}

impl Features {
    /// The features named, one by one.
    pub(crate) fn named(&self) -> Vec<String> {
        self.features
            .iter()
            .flat_map(|f| f.split(|c: char| c == ',' || c.is_whitespace()))
            .filter(|f| !f.is_empty())
            .map(str::to_owned)
            .collect()
    }

    /// The selection as cargo's options.
    pub(crate) fn cargo_args(&self) -> Vec<String> {
        let mut args = Vec::new();
        let named = self.named();
        if !named.is_empty() {
            args.push(format!("--features={}", named.join(",")));
        }
        if self.all_features {
            args.push("--all-features".into());
        }
        if self.no_default_features {
            args.push("--no-default-features".into());
        }
        args
    }
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub(crate) struct Project {
    pub(crate) name: String,
    pub(crate) manifest: PathBuf,
    pub(crate) kernels: PathBuf,
    /// The `offload` package the program depends on.
    pub(crate) offload: PathBuf,
    /// `<target dir>/offload`: everything this tool builds.
    pub(crate) build_dir: PathBuf,
    /// Binaries of the package.
    pub(crate) bins: Vec<String>,
    /// Examples of the package that are programs.
    pub(crate) examples: Vec<String>,
    /// The one `cargo run` runs where there are several (`default-run`).
    pub(crate) default_run: Option<String>,
    /// The manifests of the package and of its path dependencies, every `Cargo.toml` above
    /// them (a workspace they inherit from, or one that appears), and the lockfile: what
    /// `cargo metadata` read.
    pub(crate) inputs: Vec<PathBuf>,
    /// The path dependencies (not the package itself) that have a build script.
    pub(crate) build_scripts: Vec<String>,
    /// The package and the path packages of its whole graph that have a build script: the host
    /// program's build is not recorded where there is one (fresh/host.rs).
    pub(crate) host_build_scripts: Vec<String>,
    /// The folders of the package and of the path packages of its graph, where a `build.rs`
    /// that appears is a build script cargo finds without a change of manifest.
    pub(crate) package_dirs: Vec<PathBuf>,
    /// The binaries and examples cargo leaves out of a build: their `required-features` are not
    /// all enabled.
    pub(crate) unbuilt: Vec<String>,
    /// The user's rustflags for the host target, which ours follow (flags.rs); set after
    /// loading.
    pub(crate) user_rustflags: Vec<String>,
    /// The feature selection asked for.
    pub(crate) selection: Features,
    /// Every feature the package declares (its own, and those its optional dependencies
    /// make), and those the selection enables, as cargo resolved them.
    pub(crate) declared_features: Vec<String>,
    pub(crate) enabled_features: Vec<String>,
    /// The package's edition, which its kernels are written in.
    pub(crate) edition: String,
    /// The settings of the workspace's `[profile.release]` that change what code computes or
    /// checks (`overflow-checks`, `debug-assertions`), as lines of the image crates' profile.
    pub(crate) profile: String,
    /// The package's dependencies its kernels use, which the image crates depend on too.
    pub(crate) kernel_dependencies: Vec<KernelDependency>,
}

/// A dependency of the package that its kernels use (`[package.metadata.offload]
/// kernel-dependencies`), as the image crates declare it: the same package, at the version
/// cargo resolved for the program, with the features cargo resolved for it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct KernelDependency {
    /// The name the kernels use: the key in the package's `[dependencies]` (a rename, if any).
    pub(crate) key: String,
    /// The dependency's package name.
    pub(crate) package: String,
    /// Whether the package renames it (`key = { package = "..." }`): the kernels then name it
    /// by the key, else by its library's own name.
    pub(crate) renamed: bool,
    /// Where it comes from, as keys of a TOML dependency (`path = ..`, `version = "=.."`, or
    /// `git = .., rev = ..`).
    pub(crate) source: String,
    /// Its features as resolved for the program's build.
    pub(crate) features: Vec<String>,
}

impl KernelDependency {
    /// The image crate's `[dependencies]` line.
    pub(crate) fn manifest_line(&self) -> String {
        let package =
            if self.renamed { format!("package = {:?}, ", self.package) } else { String::new() };
        format!(
            "{} = {{ {package}{}, default-features = false, features = {:?} }}\n",
            self.key, self.source, self.features
        )
    }
}

impl Project {
    /// The package of `manifest` (else of the working folder), with the features of
    /// `selection`; what only a build would tell is asked through `runner`'s queries.
    pub(crate) fn load(
        runner: &Runner,
        manifest: Option<&Path>,
        selection: &Features,
    ) -> Result<Self> {
        let mut cmd = MetadataCommand::new();
        if let Some(m) = manifest {
            cmd.manifest_path(m);
        }
        let named = selection.named();
        if !named.is_empty() {
            cmd.features(CargoOpt::SomeFeatures(named));
        }
        if selection.all_features {
            cmd.features(CargoOpt::AllFeatures);
        }
        if selection.no_default_features {
            cmd.features(CargoOpt::NoDefaultFeatures);
        }
        // Run as the other queries are (shown under --verbose); cargo_metadata reads the JSON.
        let stdout = runner
            .queries()
            .stdout(&mut cmd.cargo_command())
            .context("reading the package with `cargo metadata`")?;
        let json = stdout
            .lines()
            .find(|line| line.starts_with('{'))
            .context("`cargo metadata` printed no JSON")?;
        let meta = MetadataCommand::parse(json).context("reading `cargo metadata`'s JSON")?;
        let root = meta.root_package().ok_or_else(|| match manifest {
            Some(m) => anyhow!(
                "{} is a workspace's manifest, not a package's (pass the --manifest-path of the member with the kernels)",
                m.display()
            ),
            None => anyhow!(
                "no package here but a workspace (run in the folder of the member with the kernels, or pass its --manifest-path)"
            ),
        })?;
        let dir =
            root.manifest_path.parent().map(|p| p.as_std_path().to_path_buf()).unwrap_or_default();
        let kernels = dir.join(kernels_file(root, &dir)?);
        if !kernels.is_file() {
            bail!(
                "no kernels file at {} (put the #[offload::kernel] functions in src/kernels.rs, or name the file in [package.metadata.offload] kernels = \"...\")",
                kernels.display()
            );
        }
        let offload = meta
            .packages
            .iter()
            .find(|p| p.name.as_str() == "offload")
            .map(|p| {
                p.manifest_path.parent().map(|d| d.as_std_path().to_path_buf()).unwrap_or_default()
            })
            .ok_or_else(|| {
                if root.dependencies.iter().any(|d| d.name == "offload" && d.optional) {
                    anyhow!(
                        "{} depends on `offload` through an optional dependency that the selected features leave out (enable the feature that enables it, with --features)",
                        root.name
                    )
                } else {
                    anyhow!(
                        "{} does not depend on the `offload` crate (add it to [dependencies])",
                        root.name
                    )
                }
            })?;
        let local: Vec<&Package> = meta.packages.iter().filter(|p| p.source.is_none()).collect();
        let mut inputs: Vec<PathBuf> = local
            .iter()
            .flat_map(|p| p.manifest_path.as_std_path().ancestors().skip(1))
            .map(|dir| dir.join("Cargo.toml"))
            .collect();
        // The workspace's root may lie beside the package (`package.workspace = "../ws"`).
        inputs.push(meta.workspace_root.as_std_path().join("Cargo.toml"));
        inputs.push(meta.workspace_root.as_std_path().join("Cargo.lock"));
        inputs.sort();
        inputs.dedup();
        let build_scripts = with_build_scripts(offload_closure(&meta));
        let host_local: Vec<&Package> =
            closure(&meta, root).into_iter().filter(|p| p.source.is_none()).collect();
        let host_build_scripts = with_build_scripts(host_local.iter().copied());
        let package_dirs = host_local
            .iter()
            .filter_map(|p| Some(p.manifest_path.parent()?.as_std_path().to_path_buf()))
            .collect();
        let bins = root.targets.iter().filter(|t| t.is_bin()).map(|t| t.name.clone()).collect();
        let examples = root
            .targets
            .iter()
            .filter(|t| t.is_example() && t.crate_types.iter().any(|c| *c == "bin".into()))
            .map(|t| t.name.clone())
            .collect();
        let declared_features = root.features.keys().cloned().collect();
        let mut enabled_features = meta
            .resolve
            .as_ref()
            .and_then(|r| r.nodes.iter().find(|n| n.id == root.id))
            .map(|n| n.features.clone())
            .ok_or_else(|| {
                anyhow!("`cargo metadata` did not resolve the features of {}", root.name)
            })?;
        enabled_features.sort();
        let unbuilt = root
            .targets
            .iter()
            .filter(|t| t.is_bin() || t.is_example())
            .filter(|t| t.required_features.iter().any(|f| !enabled_features.contains(f)))
            .map(|t| t.name.clone())
            .collect();
        let profile = release_profile(
            &meta.workspace_root.as_std_path().join("Cargo.toml"),
            root.name.as_str(),
        )?;
        let kernel_dependencies = kernel_dependencies(runner, &meta, root, selection)?;
        Ok(Project {
            name: root.name.to_string(),
            manifest: root.manifest_path.as_std_path().to_path_buf(),
            kernels,
            offload,
            build_dir: meta.target_directory.as_std_path().join("offload"),
            bins,
            examples,
            default_run: root.default_run.clone(),
            inputs,
            build_scripts,
            host_build_scripts,
            package_dirs,
            unbuilt,
            user_rustflags: Vec::new(),
            selection: selection.clone(),
            declared_features,
            enabled_features,
            edition: root.edition.as_str().to_owned(),
            profile,
            kernel_dependencies,
        })
    }
}

/// The names of the path packages among `packages` that have a build script.
fn with_build_scripts<'a>(packages: impl IntoIterator<Item = &'a Package>) -> Vec<String> {
    packages
        .into_iter()
        .filter(|p| p.source.is_none())
        .filter(|p| p.targets.iter().any(|t| t.is_custom_build()))
        .map(|p| p.name.to_string())
        .collect()
}

/// `offload` and every package it depends on, as resolved (the device images' whole graph; a
/// graph cargo did not resolve counts every package).
fn offload_closure(meta: &cargo_metadata::Metadata) -> Vec<&Package> {
    match meta.packages.iter().find(|p| p.name.as_str() == "offload") {
        Some(offload) => closure(meta, offload),
        None => meta.packages.iter().collect(),
    }
}

/// `start` and every package it depends on, by any kind of dependency (every package where
/// cargo resolved none).
fn closure<'a>(meta: &'a cargo_metadata::Metadata, start: &'a Package) -> Vec<&'a Package> {
    let Some(resolve) = &meta.resolve else { return meta.packages.iter().collect() };
    let mut seen = std::collections::HashSet::from([&start.id]);
    let mut queue = vec![&start.id];
    while let Some(id) = queue.pop() {
        let deps = resolve.nodes.iter().find(|n| &n.id == id).map(|n| n.deps.as_slice());
        for dep in deps.unwrap_or_default() {
            if seen.insert(&dep.pkg) {
                queue.push(&dep.pkg);
            }
        }
    }
    meta.packages.iter().filter(|p| seen.contains(&p.id)).collect()
}

/// The dependencies `[package.metadata.offload] kernel-dependencies` names, as cargo builds
/// them for the program: the package cargo resolved, with the features of the program's own
/// build (cargo's unit graph: not those a dev-dependency adds). An optional one the selected
/// features leave out is left out of the images too (the kernels' use of it is behind the same
/// feature); a name that is not one of the package's normal dependencies for every target is
/// an error.
fn kernel_dependencies(
    runner: &Runner,
    meta: &Metadata,
    root: &Package,
    selection: &Features,
) -> Result<Vec<KernelDependency>> {
    let Some(value) = root.metadata.get("offload").and_then(|o| o.get("kernel-dependencies"))
    else {
        return Ok(Vec::new());
    };
    let names = value
        .as_array()
        .and_then(|a| a.iter().map(|v| v.as_str()).collect::<Option<Vec<_>>>())
        .ok_or_else(|| {
            anyhow!(
                "[package.metadata.offload] kernel-dependencies must be a list of the names of dependencies, e.g. [\"shapes\"]"
            )
        })?;
    let node =
        meta.resolve.as_ref().and_then(|r| r.nodes.iter().find(|n| n.id == root.id)).ok_or_else(
            || anyhow!("`cargo metadata` did not resolve the dependencies of {}", root.name),
        )?;
    let renames: Vec<String> = root
        .dependencies
        .iter()
        .filter_map(|d| Some(d.rename.as_ref()?.replace('-', "_")))
        .collect();
    let mut units = None;
    let mut found = Vec::new();
    for name in names {
        // The image crates depend on `offload` already.
        if name == "offload" || found.iter().any(|d: &KernelDependency| d.key == name) {
            continue;
        }
        let declared = root
            .dependencies
            .iter()
            .find(|d| d.kind == DependencyKind::Normal && d.rename.as_deref().unwrap_or(&d.name) == name)
            .ok_or_else(|| {
                anyhow!(
                    "[package.metadata.offload] kernel-dependencies names `{name}`, which is not one of {}'s [dependencies] (the kernels can use the package's own dependencies, not its dev- or build-dependencies: add it with `cargo add {name}`)",
                    root.name
                )
            })?;
        if let Some(platform) = &declared.target {
            bail!(
                "[package.metadata.offload] kernel-dependencies names `{name}`, a dependency of {} for `{platform}` only: the kernels are built for every device, so their dependencies must be the package's for every target ([dependencies])",
                root.name
            );
        }
        // The resolved package: by its name, and by the name the package uses for it: its
        // rename, or else none of the other dependencies' renames (the same package may come
        // twice, `rand` and `rand08 = { package = "rand", .. }`; a library's own name may
        // differ from its package's).
        let extern_name = declared.rename.as_ref().map(|r| r.replace('-', "_"));
        let package = node
            .deps
            .iter()
            .filter(|d| d.dep_kinds.iter().any(|k| k.kind == DependencyKind::Normal))
            .filter(|d| match &extern_name {
                Some(e) => &d.name == e,
                None => !renames.contains(&d.name),
            })
            .filter_map(|d| meta.packages.iter().find(|p| p.id == d.pkg))
            .find(|p| p.name.as_str() == declared.name);
        let Some(package) = package else {
            if declared.optional {
                continue;
            }
            bail!("`cargo metadata` did not resolve `{name}` for {}", root.name);
        };
        if units.is_none() {
            units = Some(unit_graph(runner, root.manifest_path.as_std_path(), selection)?);
        }
        let features = units
            .as_ref()
            .and_then(|u| unit_features(u, &package.id.repr))
            .ok_or_else(|| {
                anyhow!(
                    "cargo does not build `{name}` into {}'s program (for x86_64 Linux, with the selected features): the kernels' dependencies must be the program's",
                    root.name
                )
            })?;
        found.push(KernelDependency {
            key: name.to_owned(),
            package: package.name.to_string(),
            renamed: declared.rename.is_some(),
            source: dependency_source(name, package)?,
            features,
        });
    }
    Ok(found)
}

/// What cargo would build for the program (`cargo build --unit-graph`, nightly's): the units,
/// each a package's target with the features the build gives it.
fn unit_graph(runner: &Runner, manifest: &Path, selection: &Features) -> Result<serde_json::Value> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let out = runner
        .queries()
        .capture(
            std::process::Command::new(cargo)
                .args(["build", "--unit-graph", "-Z", "unstable-options", "--release", "--target"])
                .arg(offload_abi::host_offload::TRIPLE)
                .arg("--manifest-path")
                .arg(manifest)
                .args(selection.cargo_args()),
        )
        .context("asking cargo for the features of the kernels' dependencies")?;
    if !out.status.success() {
        bail!(
            "`cargo build --unit-graph` failed, for the features of the kernels' dependencies: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    serde_json::from_slice(&out.stdout).context("reading cargo's unit graph")
}

/// The features cargo builds the library of package `id` with: its unit for the host target,
/// or, for a proc-macro (which runs in the compiler), its unit for the build machine.
fn unit_features(graph: &serde_json::Value, id: &str) -> Option<Vec<String>> {
    const LIBRARIES: [&str; 6] = ["lib", "rlib", "dylib", "cdylib", "staticlib", "proc-macro"];
    let libraries = graph["units"].as_array()?.iter().filter(|unit| {
        let library = unit["target"]["kind"]
            .as_array()
            .is_some_and(|k| k.iter().any(|k| k.as_str().is_some_and(|k| LIBRARIES.contains(&k))));
        unit["pkg_id"].as_str() == Some(id) && unit["mode"] == "build" && library
    });
    let unit = libraries
        .clone()
        .find(|u| u["platform"].as_str() == Some(offload_abi::host_offload::TRIPLE))
        .or_else(|| libraries.clone().find(|u| u["platform"].is_null()))?;
    unit["features"].as_array()?.iter().map(|f| f.as_str().map(str::to_owned)).collect()
}

/// Where a kernel dependency comes from, as keys of a TOML dependency: the version cargo
/// resolved for the program, exactly.
fn dependency_source(name: &str, package: &Package) -> Result<String> {
    let dir = package.manifest_path.parent().map(|d| d.to_string()).unwrap_or_default();
    let source = package.source.as_ref().map(|s| s.repr.as_str());
    source_keys(name, source, &package.version.to_string(), &dir)
}

/// [`dependency_source`] from cargo's source string (none for a path dependency), the
/// resolved version and the package's folder.
fn source_keys(name: &str, source: Option<&str>, version: &str, dir: &str) -> Result<String> {
    const CRATES_IO: [&str; 2] = [
        "registry+https://github.com/rust-lang/crates.io-index",
        "sparse+https://index.crates.io/",
    ];
    let Some(source) = source else {
        return Ok(format!("path = {dir:?}"));
    };
    if CRATES_IO.contains(&source) {
        return Ok(format!("version = \"={version}\""));
    }
    if let Some(git) = source.strip_prefix("git+") {
        let url = git.split(['?', '#']).next().unwrap_or(git);
        if let Some((_, rev)) = git.rsplit_once('#') {
            return Ok(format!("git = {url:?}, rev = {rev:?}"));
        }
    }
    bail!(
        "the kernel dependency `{name}` comes from {source}, which cargo offload cannot give the device images (a path, crates.io or git dependency can be)"
    )
}

/// The kernels file: the one the manifest names, else `src/kernels.rs`, else
/// `src/kernels/mod.rs` (the module `kernels` either way).
fn kernels_file(pkg: &Package, dir: &Path) -> Result<PathBuf> {
    match pkg.metadata.get("offload").and_then(|o| o.get("kernels")) {
        None if !dir.join("src/kernels.rs").exists()
            && dir.join("src/kernels/mod.rs").is_file() =>
        {
            Ok(PathBuf::from("src/kernels/mod.rs"))
        }
        None => Ok(PathBuf::from("src/kernels.rs")),
        Some(v) => v
            .as_str()
            .map(PathBuf::from)
            .ok_or_else(|| anyhow!("[package.metadata.offload] kernels must be a path string")),
    }
}

/// What the manifest's `[profile.release]` sets that changes what the kernels compute or check,
/// as TOML lines: an overflow that panics in the program must panic in its kernels, and a
/// `debug_assert!` hold in both (cargo's configuration and `CARGO_PROFILE_RELEASE_*` reach the
/// image builds by themselves). `[profile.release.package.<package>]` comes before the rest:
/// the kernels are that package's code.
fn release_profile(manifest: &Path, package: &str) -> Result<String> {
    let text = std::fs::read_to_string(manifest)
        .with_context(|| format!("reading {}", manifest.display()))?;
    let table: toml::Table =
        text.parse().with_context(|| format!("reading {} as TOML", manifest.display()))?;
    let release = table.get("profile").and_then(|p| p.get("release"));
    let own = release.and_then(|r| r.get("package")).and_then(|p| p.get(package));
    let mut lines = String::new();
    for key in ["overflow-checks", "debug-assertions"] {
        if let Some(value) = own.and_then(|o| o.get(key)).or_else(|| release?.get(key)) {
            lines += &format!("{key} = {value}\n");
        }
    }
    Ok(lines)
}

#[cfg(test)]
mod tests {
    use super::source_keys;

    #[test]
    fn kernel_dependencies_keep_the_resolved_source() {
        assert_eq!(source_keys("a", None, "0.1.0", "/w/a").unwrap(), "path = \"/w/a\"");
        let crates_io = "registry+https://github.com/rust-lang/crates.io-index";
        assert_eq!(
            source_keys("libm", Some(crates_io), "0.2.11", "").unwrap(),
            "version = \"=0.2.11\""
        );
        let sparse = "sparse+https://index.crates.io/";
        assert_eq!(
            source_keys("libm", Some(sparse), "0.2.11", "").unwrap(),
            "version = \"=0.2.11\""
        );
        let git = "git+https://example.org/shapes.git?branch=main#0123abcd";
        assert_eq!(
            source_keys("shapes", Some(git), "0.1.0", "").unwrap(),
            "git = \"https://example.org/shapes.git\", rev = \"0123abcd\""
        );
        let other = "registry+https://my.registry/index";
        let err = source_keys("x", Some(other), "1.0.0", "").unwrap_err().to_string();
        assert!(err.contains("`x` comes from registry+https://my.registry/index"), "{err}");
    }
}
