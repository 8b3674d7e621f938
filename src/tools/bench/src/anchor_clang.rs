//! The clang OpenMP anchor (`bench.c`) built for sm_90 with clang-19 and CUDA 11.8's ptxas/nvlink.
//!
//! CUDA 11.8 comes from Debian's non-free `nvidia-cuda-toolkit`, fetched download-only through a
//! private apt configuration (the system's sources stay untouched) and unpacked under
//! `build/anchor-tools`; `--cuda-path` points at a folder of links into it. Every step is
//! skipped when its result is already there.

use std::fs;
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context as _, Result, bail};

use offload_bootstrap::setup::{is_root, package_installed};
use offload_bootstrap::shell;

/// Debian packages the build needs: clang-19, clang-tools-19 (clang-linker-wrapper and
/// clang-nvlink-wrapper) and libomp-19-dev (the nvptx device runtime bitcode).
const PACKAGES: &[&str] = &["clang-19", "clang-tools-19", "libomp-19-dev"];
/// Where libomp-19-dev puts `libomptarget-nvptx-sm_90.bc`.
const LLVM_LIB: &str = "/usr/lib/llvm-19/lib";
/// The non-free package holding ptxas, nvlink and libdevice of CUDA 11.8.
const TOOLKIT: &str = "nvidia-cuda-toolkit";
/// Paths inside that package, and where `--cuda-path` wants them.
const TOOLKIT_FILES: &[(&str, &str)] = &[
    ("usr/bin/ptxas", "bin/ptxas"),
    ("usr/bin/nvlink", "bin/nvlink"),
    ("usr/lib/nvidia-cuda-toolkit/libdevice/libdevice.10.bc", "nvvm/libdevice/libdevice.10.bc"),
];
/// ELF header of a cubin: 64-bit, little endian, version 1, OS/ABI 0x33 (CUDA).
const CUBIN_MAGIC: &[u8] = &[0x7f, b'E', b'L', b'F', 2, 1, 1, 0x33];
const EM_CUDA: u16 = 190;

/// Builds `source` (the anchor's bench.c) into `out` for sm_90: installs clang-19 if missing
/// (as root), fetches and unpacks CUDA 11.8's tools into `<root>/build/anchor-tools`, compiles,
/// and checks that the embedded cubin is one libomptarget 19 loads (ELF ABI version 7, sm_90).
pub(crate) fn build_clang_anchor(root: &Path, source: &Path, out: &Path) -> Result<()> {
    if !source.is_file() {
        bail!("anchor source {} is missing", source.display());
    }
    install_packages()?;
    let tools = root.join("build/anchor-tools");
    let cuda = cuda_dir(&tools)?;
    if is_fresh(out, source) {
        return Ok(());
    }
    if let Some(dir) = out.parent() {
        fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    }
    // Compile beside `out` and rename only after the check, so a bad binary is never "fresh".
    let tmp = out.with_extension("partial");
    let mut cuda_path = std::ffi::OsString::from("--cuda-path=");
    cuda_path.push(&cuda);
    shell::runner().run(
        "clang-19 (building the OpenMP anchor)",
        Command::new("clang-19")
            .args(["-O3", "-fopenmp", "--offload-arch=sm_90"])
            .arg(cuda_path)
            .arg(format!("--libomptarget-nvptx-bc-path={LLVM_LIB}"))
            .arg(source)
            .arg("-o")
            .arg(&tmp),
    )?;
    if let Err(e) = check_cubin(&tmp, &cuda) {
        let _ = fs::remove_file(&tmp);
        return Err(e);
    }
    fs::rename(&tmp, out).with_context(|| format!("moving {} to {}", tmp.display(), out.display()))
}

/// `out` exists and is no older than `source`.
fn is_fresh(out: &Path, source: &Path) -> bool {
    let modified = |p: &Path| fs::metadata(p).and_then(|m| m.modified()).ok();
    matches!((modified(out), modified(source)), (Some(o), Some(s)) if o >= s)
}

fn install_packages() -> Result<()> {
    let missing: Vec<&str> = PACKAGES.iter().copied().filter(|p| !package_installed(p)).collect();
    if missing.is_empty() {
        return Ok(());
    }
    let line = format!("apt-get install -y --no-install-recommends {}", missing.join(" "));
    if !is_root() {
        bail!(
            "the clang OpenMP anchor needs Debian packages {} (run as root: {line})",
            missing.join(", ")
        );
    }
    eprintln!("x: installing {}", missing.join(" "));
    shell::runner().run("apt-get update", Command::new("apt-get").args(["update", "-qq"]))?;
    shell::runner().run(
        &line,
        Command::new("apt-get")
            .args(["install", "-y", "-qq", "--no-install-recommends"])
            .args(&missing)
            .env("DEBIAN_FRONTEND", "noninteractive"),
    )?;
    let bc = Path::new(LLVM_LIB).join("libomptarget-nvptx-sm_90.bc");
    if !bc.is_file() {
        bail!("{} is missing after installing libomp-19-dev", bc.display());
    }
    Ok(())
}

/// `<tools>/cuda-11.8`, the `--cuda-path` folder: bin/ptxas, bin/nvlink and
/// nvvm/libdevice/libdevice.10.bc (links into the unpacked .deb) and include/cuda.h (a stub that
/// gives clang the version).
fn cuda_dir(tools: &Path) -> Result<PathBuf> {
    let cuda = tools.join("cuda-11.8");
    let header = cuda.join("include/cuda.h");
    let complete = header.is_file() && TOOLKIT_FILES.iter().all(|(_, to)| cuda.join(to).is_file());
    if complete {
        return Ok(cuda);
    }
    let unpacked = tools.join("deb");
    if !TOOLKIT_FILES.iter().all(|(from, _)| unpacked.join(from).is_file()) {
        let deb = match find_deb(tools)? {
            Some(deb) => deb,
            None => download_toolkit(tools)?,
        };
        shell::runner().run(
            &format!("dpkg -x {}", deb.display()),
            Command::new("dpkg").arg("-x").arg(&deb).arg(&unpacked),
        )?;
        for (from, _) in TOOLKIT_FILES {
            if !unpacked.join(from).is_file() {
                bail!(
                    "{} holds no {from} (remove it and run again to fetch it anew)",
                    deb.display()
                );
            }
        }
    }
    let ptxas = unpacked.join("usr/bin/ptxas");
    let version = shell::runner().capture(Command::new(&ptxas).arg("--version"))?;
    if !String::from_utf8_lossy(&version.stdout).contains("release 11.8") {
        bail!(
            "{} is not CUDA 11.8's ptxas (libomptarget 19 loads only cubins of CUDA 11.8's format): remove {} and run again",
            ptxas.display(),
            tools.display()
        );
    }
    for (from, to) in TOOLKIT_FILES {
        let link = cuda.join(to);
        let dir = link.parent().expect("a path inside the cuda folder");
        fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
        if fs::symlink_metadata(&link).is_ok() {
            fs::remove_file(&link).with_context(|| format!("removing {}", link.display()))?;
        }
        // Relative, so the folder survives a move of the checkout.
        let depth = Path::new(to).components().count() - 1;
        let target: PathBuf = std::iter::repeat_n(Path::new(".."), depth + 1)
            .collect::<PathBuf>()
            .join("deb")
            .join(from);
        symlink(&target, &link)
            .with_context(|| format!("linking {} to {}", link.display(), target.display()))?;
    }
    fs::create_dir_all(cuda.join("include"))?;
    fs::write(&header, "/* Stub for clang's CUDA detection: the version of the tools in ../bin. */\n#define CUDA_VERSION 11080\n")
        .with_context(|| format!("writing {}", header.display()))?;
    Ok(cuda)
}

/// The toolkit's .deb already downloaded into `tools`, if any.
fn find_deb(tools: &Path) -> Result<Option<PathBuf>> {
    let Ok(entries) = fs::read_dir(tools) else { return Ok(None) };
    for entry in entries {
        let path = entry.with_context(|| format!("reading {}", tools.display()))?.path();
        let name = path.file_name().unwrap_or_default().to_string_lossy();
        if name.starts_with(&format!("{TOOLKIT}_")) && name.ends_with("_amd64.deb") {
            return Ok(Some(path));
        }
    }
    Ok(None)
}

/// `apt-get download nvidia-cuda-toolkit` from bookworm non-free through a private sources list,
/// package lists and cache under the temp folder: the system's apt state is not touched, and
/// root is not needed.
fn download_toolkit(tools: &Path) -> Result<PathBuf> {
    // Per user: a folder another user left behind would not be writable.
    let uid = shell::runner().capture(Command::new("id").arg("-u"))?;
    let apt = std::env::temp_dir()
        .join(format!("offload-anchor-apt-{}", String::from_utf8_lossy(&uid.stdout).trim()));
    for dir in ["lists/partial", "cache/archives/partial", "sources.list.d"] {
        fs::create_dir_all(apt.join(dir))
            .with_context(|| format!("creating {}", apt.join(dir).display()))?;
    }
    fs::create_dir_all(tools).with_context(|| format!("creating {}", tools.display()))?;
    let keyring = Path::new("/usr/share/keyrings/debian-archive-keyring.gpg");
    if !keyring.is_file() {
        bail!(
            "{} is missing (run as root: apt-get install debian-archive-keyring)",
            keyring.display()
        );
    }
    let sources = apt.join("sources.list");
    fs::write(
        &sources,
        format!(
            "deb [signed-by={}] http://deb.debian.org/debian bookworm non-free\n",
            keyring.display()
        ),
    )
    .with_context(|| format!("writing {}", sources.display()))?;
    let options = [
        format!("Dir::Etc::SourceList={}", sources.display()),
        format!("Dir::Etc::SourceParts={}", apt.join("sources.list.d").display()),
        format!("Dir::State::Lists={}", apt.join("lists").display()),
        format!("Dir::Cache={}", apt.join("cache").display()),
        "Dir::Cache::pkgcache=".into(),
        "Dir::Cache::srcpkgcache=".into(),
        // As root apt would hand the download to `_apt`, which cannot write into the checkout.
        "APT::Sandbox::User=root".into(),
    ];
    let apt_get = || {
        let mut cmd = Command::new("apt-get");
        for option in &options {
            cmd.arg("-o").arg(option);
        }
        cmd.arg("-qq");
        cmd
    };
    eprintln!(
        "x: fetching {TOOLKIT} 11.8 from Debian bookworm non-free (84 MB, download only) for the clang anchor"
    );
    shell::runner()
        .run(
            "apt-get update (private bookworm non-free list)",
            apt_get().args(["update", "--error-on=any"]),
        )
        .context(
            "could not read Debian's bookworm non-free package list (is deb.debian.org reachable?)",
        )?;
    shell::runner()
        .run(
            &format!("apt-get download {TOOLKIT}"),
            apt_get().current_dir(tools).args(["download", TOOLKIT]),
        )
        .with_context(|| format!("downloading {TOOLKIT} failed (is deb.debian.org reachable?)"))?;
    match find_deb(tools)? {
        Some(deb) => Ok(deb),
        None => bail!("apt-get download left no {TOOLKIT}_*_amd64.deb in {}", tools.display()),
    }
}

/// The binary embeds an sm_90 cubin in the format libomptarget 19 loads: CUDA 13's tools write
/// ELF ABI version 8, which it rejects at run time ("No images found compatible").
fn check_cubin(binary: &Path, cuda: &Path) -> Result<()> {
    let bytes = fs::read(binary).with_context(|| format!("reading {}", binary.display()))?;
    let mut found = false;
    for at in bytes
        .windows(CUBIN_MAGIC.len())
        .enumerate()
        .filter(|(_, w)| *w == CUBIN_MAGIC)
        .map(|(i, _)| i)
    {
        let Some(header) = bytes.get(at..at + 64) else { continue };
        if u16::from_le_bytes([header[18], header[19]]) != EM_CUDA {
            continue;
        }
        found = true;
        let abi = header[8];
        let arch = u32::from_le_bytes([header[48], header[49], header[50], header[51]]) & 0xff;
        if abi != 7 {
            bail!(
                "the cubin in {} has ELF ABI version {abi}, libomptarget 19 loads only version 7 (CUDA 11.8's ptxas and nvlink); check {}",
                binary.display(),
                cuda.display()
            );
        }
        if arch != 90 {
            bail!("the cubin in {} is for sm_{arch}, not sm_90", binary.display());
        }
    }
    if !found {
        bail!("{} embeds no cubin (clang-19 built it without an sm_90 image)", binary.display());
    }
    Ok(())
}
