//! The images of the last build, so that the next can build the host program beside the device
//! images, and the lock through which its link waits for them.
//!
//! ```text
//! cargo offload: take the lock ("building") -> host build (thread) | device images
//!                -> release ("ok" or "failed")
//! offload-ld:    shared lock (waits) -> "ok": read the images; else fail the link
//! ```

use std::fs::File;
use std::io::Write as _;
use std::path::{Path, PathBuf};

use anyhow::{Context as _, Result};

use crate::image::Image;
use crate::project::Project;

/// Names the lock to offload-ld.
pub(crate) const LOCK_ENV: &str = "OFFLOAD_LD_IMAGES_LOCK";

fn last_file(project: &Project) -> PathBuf {
    project.build_dir.join("images").join(format!("{}.last", project.name))
}

/// The images the last build of the package embedded, where all of them are still there.
pub(crate) fn last(project: &Project) -> Option<Vec<Image>> {
    let text = std::fs::read_to_string(last_file(project)).ok()?;
    let images: Vec<Image> = text
        .lines()
        .map(|line| {
            let (triple, path) = line.split_once('=')?;
            let triple = [crate::nvptx::NVPTX_TRIPLE, crate::image::HOST_TRIPLE]
                .into_iter()
                .find(|t| *t == triple)?;
            Some(Image { triple, path: PathBuf::from(path) })
        })
        .collect::<Option<_>>()?;
    (!images.is_empty() && images.iter().all(|i| i.path.is_file())).then_some(images)
}

/// Records the images this build embeds; best effort (without it, the next build is serial).
pub(crate) fn remember(project: &Project, images: &[Image]) {
    let text: String =
        images.iter().map(|i| format!("{}={}\n", i.triple, i.path.display())).collect();
    let _ = std::fs::write(last_file(project), text);
}

/// Whether two lists name the same images in the same order.
pub(crate) fn same(a: &[Image], b: &[Image]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(a, b)| a.triple == b.triple && a.path == b.path)
}

/// Held while the device images build; its text says how that went.
pub(crate) struct Lock {
    file: File,
    path: PathBuf,
}

impl Lock {
    pub(crate) fn take(project: &Project) -> Result<Lock> {
        let dir = project.build_dir.join("images");
        std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
        let path = dir.join(format!("{}.lock", project.name));
        let file = File::options()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)
            .with_context(|| format!("opening {}", path.display()))?;
        file.lock().with_context(|| format!("locking {}", path.display()))?;
        let lock = Lock { file, path };
        lock.write("building")?;
        Ok(lock)
    }

    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    fn write(&self, state: &str) -> Result<()> {
        let mut file = &self.file;
        file.set_len(0)
            .and_then(|()| std::io::Seek::rewind(&mut file))
            .and_then(|()| file.write_all(state.as_bytes()))
            .with_context(|| format!("writing {}", self.path.display()))
    }

    /// Lets the links waiting for the images go on: with them where they built, to fail
    /// otherwise.
    pub(crate) fn release(&self, ok: bool) {
        // A lock whose text could not be written still says "building": the link fails.
        let _ = self.write(if ok { "ok" } else { "failed" });
        let _ = self.file.unlock();
    }
}
