//! Compiling the program's bitcode one unit at a time, with a cache of the results.
//!
//! ```text
//! each bitcode module (a codegen unit of a crate, the allocator shim)
//!     -> cache hit: its object and what its lowering found
//!     -> miss:      lower_unit -> default<On> -> object, in parallel, stored in the cache
//! what the units found, merged -> the glue (entries, registration, runtime binding) -> object
//! ```
//!
//! A link after an edit of one crate compiles that crate's units only, as rustc does without
//! link-time optimisation. A unit's key is a hash of its bitcode and of everything else that
//! shapes its object: this tool's build, the LLVM it links, the entry layout and the
//! optimisation level. The glue's key is what the units found and the images.

use std::os::unix::fs::MetadataExt as _;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant, SystemTime};

use anyhow::{Context as _, Result, anyhow, bail};
use inkwell::context::Context;
use inkwell::memory_buffer::MemoryBuffer;
use inkwell::module::Module;
use offload_codegen::{Program, Unit};
use offload_support::digest::Digest;
use serde::{Deserialize, Serialize};

use crate::env::LinkConfig;
use crate::inputs::Bitcode;

/// Changes whenever the cache's files change meaning.
const FORMAT: &[u8] = b"offload-ld cache 1";

/// The cache keeps under this many bytes; the least recently used entries go first.
const CACHE_LIMIT: u64 = 512 << 20;

/// A file a killed link left in the cache goes after this long.
const ORPHAN_AGE: Duration = Duration::from_secs(3600);

fn warn(message: &str) {
    eprintln!("offload: warning: offload-ld cache: {message}");
}

/// What the cache keeps of a unit beside its object.
#[derive(Serialize, Deserialize)]
pub(crate) struct Record {
    pub(crate) unit: Unit,
    pub(crate) triple: String,
    pub(crate) data_layout: String,
}

/// A unit, compiled or found in the cache.
pub(crate) struct Compiled {
    pub(crate) record: Record,
    pub(crate) object: PathBuf,
}

/// How a set of compilations went, for `OFFLOAD_LD_VERBOSE`.
#[derive(Default)]
pub(crate) struct Tally {
    pub(crate) cached: usize,
    pub(crate) compiled: usize,
    pub(crate) threads: usize,
    pub(crate) time: Duration,
}

/// The folder of cached objects, or none (each link compiles everything).
pub(crate) struct Cache {
    dir: Option<PathBuf>,
    /// What shapes every object besides its input.
    salt: Vec<u8>,
}

impl Cache {
    pub(crate) fn new(config: &LinkConfig) -> Result<Cache> {
        let mut salt = FORMAT.to_vec();
        // This tool's build: a rebuilt offload-ld lowers or compiles differently. Its path, size,
        // inode and change time (which, unlike the modification time, no copy preserves).
        let exe = std::env::current_exe().context("finding offload-ld's own path")?;
        let meta = std::fs::metadata(&exe)
            .with_context(|| format!("reading the metadata of {}", exe.display()))?;
        salt.extend(exe.as_os_str().as_encoded_bytes());
        for n in [meta.len(), meta.ino(), meta.ctime() as u64, meta.ctime_nsec() as u64] {
            salt.extend(n.to_le_bytes());
        }
        if let Ok(modified) = meta.modified()
            && let Ok(since) = modified.duration_since(SystemTime::UNIX_EPOCH)
        {
            salt.extend(since.as_nanos().to_le_bytes());
        }
        let (major, minor, patch) = inkwell::support::get_llvm_version();
        salt.extend(
            format!("{major}.{minor}.{patch} {:?} O{}", config.abi, config.opt_level).bytes(),
        );
        // A cache that cannot be made costs time, not the link.
        let dir = config.cache.as_ref().and_then(|dir| match std::fs::create_dir_all(dir) {
            Ok(()) => Some(dir.clone()),
            Err(e) => {
                warn(&format!("cannot create {}: {e}; every unit is compiled", dir.display()));
                None
            }
        });
        Ok(Cache { dir, salt })
    }

    fn key(&self, parts: &[&[u8]]) -> String {
        let mut digest = Digest::new();
        digest.part(&self.salt);
        for part in parts {
            digest.part(part);
        }
        digest.hex()
    }

    /// The record of `key`, if cached, with a private copy of its object at `object` (in the
    /// link's scratch folder).
    fn get(&self, key: &str, object: &Path) -> Option<Record> {
        let dir = self.dir.as_ref()?;
        let json = dir.join(format!("{key}.json"));
        let record: Record = serde_json::from_slice(&std::fs::read(&json).ok()?).ok()?;
        // A link of its own: a concurrent prune cannot take it away before cc reads it.
        let cached = dir.join(format!("{key}.o"));
        if std::fs::hard_link(&cached, object).is_err() {
            std::fs::copy(&cached, object).ok()?;
        }
        // Marks it used, for the prune.
        let _ = filetime::set_file_mtime(&json, filetime::FileTime::now());
        Some(record)
    }

    /// Keeps `object` and `record` under `key`. Each file appears whole (written aside, then
    /// renamed), the object first: a record in the folder means its object is there. A failure
    /// (a full disk, a folder not ours) is a warning: the link goes on without it.
    fn put(&self, key: &str, record: &Record, object: &Path) {
        if let Err(e) = self.try_put(key, record, object) {
            warn(&format!("{e:#}"));
        }
    }

    fn try_put(&self, key: &str, record: &Record, object: &Path) -> Result<()> {
        let Some(dir) = &self.dir else { return Ok(()) };
        let store = |name: String, bytes: &[u8]| -> Result<()> {
            let mut file = tempfile::NamedTempFile::new_in(dir)?;
            std::io::Write::write_all(&mut file, bytes)?;
            file.persist(dir.join(name))?;
            Ok(())
        };
        let bytes = std::fs::read(object)?;
        store(format!("{key}.o"), &bytes)
            .and_then(|()| store(format!("{key}.json"), &serde_json::to_vec(record)?))
            .with_context(|| format!("storing a compiled unit in {}", dir.display()))
    }

    /// Removes the least recently used entries while the folder holds more than its limit. A
    /// failure is a warning: the link is done.
    pub(crate) fn prune(&self) {
        if let Err(e) = self.prune_to(CACHE_LIMIT) {
            warn(&format!("pruning the cache: {e:#}"));
        }
    }

    /// Past `limit` bytes, removes the least recently used entries down to three quarters of it.
    fn prune_to(&self, limit: u64) -> Result<()> {
        let Some(dir) = &self.dir else { return Ok(()) };
        let mut entries: Vec<(SystemTime, u64, PathBuf)> = Vec::new();
        let mut total = 0;
        let now = SystemTime::now();
        for entry in std::fs::read_dir(dir)?.flatten() {
            let path = entry.path();
            let Ok(meta) = entry.metadata() else { continue };
            let modified = meta.modified().unwrap_or(SystemTime::UNIX_EPOCH);
            if path.extension().is_none_or(|e| e != "json") {
                // What a killed link left: a file written aside, an object without its record.
                let stale = now.duration_since(modified).unwrap_or_default() > ORPHAN_AGE;
                let orphan = path.extension().is_some_and(|e| e == "o")
                    && !path.with_extension("json").exists();
                let aside =
                    path.file_name().is_some_and(|n| n.to_string_lossy().starts_with(".tmp"));
                if stale && (orphan || aside) {
                    let _ = std::fs::remove_file(&path);
                }
                continue;
            }
            let object = path.with_extension("o");
            let size = meta.len() + std::fs::metadata(&object).map(|m| m.len()).unwrap_or(0);
            total += size;
            entries.push((modified, size, path));
        }
        if total <= limit {
            return Ok(());
        }
        entries.sort();
        for (_, size, json) in entries {
            if total <= limit / 4 * 3 {
                break;
            }
            let _ = std::fs::remove_file(&json);
            let _ = std::fs::remove_file(json.with_extension("o"));
            total -= size;
        }
        Ok(())
    }
}

/// Lowers and compiles every unit of `bitcode`, or takes it from the cache. Objects land in
/// `scratch`, in `bitcode`'s order.
pub(crate) fn compile(
    bitcode: &[Bitcode],
    config: &LinkConfig,
    cache: &Cache,
    scratch: &Path,
) -> Result<(Vec<Compiled>, Tally)> {
    let start = Instant::now();
    let keys: Vec<String> = bitcode.iter().map(|bc| cache.key(&[&bc.bytes])).collect();
    // Numbered: two units with the same bitcode each have their own file.
    let objects: Vec<PathBuf> =
        keys.iter().enumerate().map(|(i, key)| scratch.join(format!("{i}-{key}.o"))).collect();
    let mut found: Vec<Option<Compiled>> = keys
        .iter()
        .zip(&objects)
        .map(|(key, object)| {
            // Saved temporaries need the modules: everything is compiled again.
            if config.save_temps.is_some() {
                return None;
            }
            let record = cache.get(key, object)?;
            Some(Compiled { record, object: object.clone() })
        })
        .collect();
    let misses: Vec<usize> = (0..bitcode.len()).filter(|&i| found[i].is_none()).collect();
    let mut tally =
        Tally { cached: bitcode.len() - misses.len(), compiled: misses.len(), ..Tally::default() };
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get()).min(misses.len());
    tally.threads = threads;
    let next = AtomicUsize::new(0);
    let results: Vec<Mutex<Option<Result<Compiled>>>> =
        misses.iter().map(|_| Mutex::new(None)).collect();
    std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| {
                loop {
                    let n = next.fetch_add(1, Ordering::Relaxed);
                    let Some(&i) = misses.get(n) else { break };
                    let object = &objects[i];
                    let result = compile_one(&bitcode[i], i, config, object).map(|record| {
                        cache.put(&keys[i], &record, object);
                        Compiled { record, object: object.clone() }
                    });
                    *results[n].lock().unwrap_or_else(|e| e.into_inner()) = Some(result);
                }
            });
        }
    });
    // Every unit that fails is named, not only the first.
    let mut errors = Vec::new();
    for (n, result) in results.into_iter().enumerate() {
        let result = result.into_inner().unwrap_or_else(|e| e.into_inner());
        match result.unwrap_or_else(|| Err(anyhow!("a compilation thread stopped"))) {
            Ok(compiled) => found[misses[n]] = Some(compiled),
            Err(e) => errors.push(format!("{e:#}")),
        }
    }
    match errors.as_slice() {
        [] => {}
        [one] => bail!("{one}"),
        many => bail!("{} units failed:\n  {}", many.len(), many.join("\n  ")),
    }
    tally.time = start.elapsed();
    Ok((found.into_iter().map(|c| c.expect("every unit is found or compiled")).collect(), tally))
}

/// One unit: parse, lower, optimise, write `object`.
fn compile_one(bc: &Bitcode, index: usize, config: &LinkConfig, object: &Path) -> Result<Record> {
    let cx = Context::create();
    let buffer = MemoryBuffer::create_from_memory_range_copy(&bc.bytes, &bc.origin);
    let module = Module::parse_bitcode_from_buffer(&buffer, &cx).map_err(|e| {
        anyhow!("reading bitcode {}: {e} (is it from the same rustc as this tool?)", bc.origin)
    })?;
    let unit = offload_codegen::lower_unit(&cx, &module, config.abi)
        .with_context(|| format!("lowering {}", bc.origin))?;
    if let Some(dir) = &config.save_temps {
        save(&module, dir, &format!("offload-unit-{index}.ll"))?;
    }
    offload_codegen::write_object(&module, config.opt_level, object)
        .with_context(|| format!("compiling {}", bc.origin))?;
    Ok(Record {
        unit,
        triple: module.get_triple().as_str().to_string_lossy().into_owned(),
        data_layout: module.get_data_layout().as_str().to_string_lossy().into_owned(),
    })
}

/// The glue of the program the units make up, compiled or from the cache. Returns its object
/// and whether it was compiled, with how many runtime functions the loader binds.
pub(crate) fn glue(
    program: &Program,
    first: &Record,
    config: &LinkConfig,
    cache: &Cache,
    scratch: &Path,
) -> Result<(PathBuf, Option<usize>)> {
    let key = glue_key(program, first, config, cache);
    let object = scratch.join(format!("glue-{key}.o"));
    if config.save_temps.is_none() && cache.get(&key, &object).is_some() {
        return Ok((object, None));
    }
    let cx = Context::create();
    let module = cx.create_module("offload-glue");
    module.set_triple(&inkwell::targets::TargetTriple::create(&first.triple));
    module.set_data_layout(
        &inkwell::targets::TargetData::create(&first.data_layout).get_data_layout(),
    );
    let bound = offload_codegen::glue(
        &cx,
        &module,
        program,
        &offload_codegen::Config {
            abi: config.abi,
            images: config.images.clone(),
            cuda_ptx: config.cuda_ptx.clone(),
        },
    )?;
    if let Some(dir) = &config.save_temps {
        save(&module, dir, "offload-glue.ll")?;
    }
    offload_codegen::write_object(&module, config.opt_level, &object)?;
    let record = Record {
        unit: Unit::default(),
        triple: first.triple.clone(),
        data_layout: first.data_layout.clone(),
    };
    cache.put(&key, &record, &object);
    Ok((object, Some(bound)))
}

/// The glue's key: all of what the units found (every field of the [`Program`], so that none
/// can be left out), the target, the images and the PTX.
fn glue_key(program: &Program, first: &Record, config: &LinkConfig, cache: &Cache) -> String {
    let description = format!("{}\n{}\n{program:?}", first.triple, first.data_layout);
    let mut parts: Vec<&[u8]> = vec![description.as_bytes()];
    for image in &config.images {
        parts.push(image.triple.as_bytes());
        parts.push(&image.bytes);
    }
    if let Some(ptx) = &config.cuda_ptx {
        parts.push(b"cuda ptx");
        parts.push(ptx);
    }
    cache.key(&parts)
}

fn save(module: &Module<'_>, dir: &Path, name: &str) -> Result<()> {
    std::fs::create_dir_all(dir)?;
    module.print_to_file(dir.join(name)).map_err(|e| anyhow!("saving {name}: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(cache: Option<PathBuf>) -> LinkConfig {
        LinkConfig {
            images: Vec::new(),
            cuda_ptx: None,
            abi: offload_codegen::RuntimeAbi::Llvm19,
            runtime_dir: PathBuf::new(),
            verbose: false,
            save_temps: None,
            cache,
            opt_level: 2,
            cc: "cc".into(),
        }
    }

    /// The bitcode of a module defining `value() -> i32 { n }` and calling the runtime.
    fn bitcode(n: u64) -> Bitcode {
        let cx = Context::create();
        let ir = format!(
            "target triple = \"x86_64-unknown-linux-gnu\"\n\
             declare i32 @omp_get_num_devices()\n\
             define i32 @value() {{\n  %d = call i32 @omp_get_num_devices()\n  %r = add i32 %d, {n}\n  ret i32 %r\n}}\n"
        );
        let buffer = MemoryBuffer::create_from_memory_range_copy(ir.as_bytes(), "test");
        let module = cx.create_module_from_ir(buffer).unwrap();
        Bitcode {
            origin: format!("unit {n}"),
            bytes: module.write_bitcode_to_memory().as_slice().to_vec(),
        }
    }

    #[test]
    fn a_second_link_takes_unchanged_units_from_the_cache() {
        let dir = tempfile::tempdir().unwrap();
        let config = config(Some(dir.path().join("cache")));
        let cache = Cache::new(&config).unwrap();
        let scratch = tempfile::tempdir().unwrap();
        let (first, tally) =
            compile(&[bitcode(1), bitcode(2)], &config, &cache, scratch.path()).unwrap();
        assert_eq!((tally.cached, tally.compiled), (0, 2));
        let runtime = &first[0].record.unit.runtime;
        assert_eq!(runtime.len(), 1);
        assert_eq!(runtime[0].name, "omp_get_num_devices");

        let scratch = tempfile::tempdir().unwrap();
        let (second, tally) =
            compile(&[bitcode(1), bitcode(3)], &config, &cache, scratch.path()).unwrap();
        assert_eq!((tally.cached, tally.compiled), (1, 1));
        assert_eq!(second[0].record.unit, first[0].record.unit);
        for unit in &second {
            assert!(unit.object.starts_with(scratch.path()), "{}", unit.object.display());
            assert!(std::fs::read(&unit.object).unwrap().starts_with(b"\x7fELF"));
        }
    }

    #[test]
    fn a_record_without_its_object_is_a_miss() {
        let dir = tempfile::tempdir().unwrap();
        let config = config(Some(dir.path().to_owned()));
        let cache = Cache::new(&config).unwrap();
        let scratch = tempfile::tempdir().unwrap();
        compile(&[bitcode(1)], &config, &cache, scratch.path()).unwrap();
        for entry in std::fs::read_dir(dir.path()).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_some_and(|e| e == "o") {
                std::fs::remove_file(path).unwrap();
            }
        }
        let (_, tally) = compile(&[bitcode(1)], &config, &cache, scratch.path()).unwrap();
        assert_eq!((tally.cached, tally.compiled), (0, 1));
    }

    #[test]
    fn a_cache_that_cannot_be_made_costs_time_not_the_link() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("a-file");
        std::fs::write(&file, b"").unwrap();
        let config = config(Some(file.join("cache")));
        let cache = Cache::new(&config).unwrap();
        let scratch = tempfile::tempdir().unwrap();
        for _ in 0..2 {
            let (units, tally) = compile(&[bitcode(1)], &config, &cache, scratch.path()).unwrap();
            assert_eq!((tally.cached, tally.compiled), (0, 1));
            assert!(units[0].object.is_file());
        }
        cache.prune();
    }

    /// The record of a program's first unit, as the glue's key reads it.
    fn first_record() -> Record {
        Record {
            unit: Unit::default(),
            triple: "x86_64-unknown-linux-gnu".into(),
            data_layout: String::new(),
        }
    }

    /// Two programs that differ in any of what the units found have different glue: a function
    /// the program defines under a runtime name is forwarded, not bound through the table.
    #[test]
    fn the_glue_key_covers_everything_the_units_found() {
        let cache = Cache::new(&config(None)).unwrap();
        let first = first_record();
        let base = Program { loader: true, ..Program::default() };
        let defining = Program { defined: vec!["omp_helper".into()], ..base.clone() };
        let key = |p: &Program| glue_key(p, &first, &config(None), &cache);
        assert_ne!(key(&base), key(&defining));
        assert_ne!(key(&base), key(&Program { kernels: vec!["k".into()], ..base.clone() }));
        assert_eq!(key(&base), key(&base.clone()));
    }

    /// The glue embeds the PTX: a new PTX (a kernel edited, a new compiler) is new glue.
    #[test]
    fn the_glue_key_covers_the_ptx() {
        let cache = Cache::new(&config(None)).unwrap();
        let first = first_record();
        let program = Program { cuda_image: true, ..Program::default() };
        let key = |ptx: Option<&[u8]>| {
            let config = LinkConfig { cuda_ptx: ptx.map(<[u8]>::to_vec), ..config(None) };
            glue_key(&program, &first, &config, &cache)
        };
        assert_ne!(key(None), key(Some(b".entry k")));
        assert_ne!(key(Some(b".entry k")), key(Some(b".entry l")));
        assert_eq!(key(Some(b".entry k")), key(Some(b".entry k")));
    }

    #[test]
    fn keys_depend_on_every_part_and_the_options() {
        let a = Cache::new(&config(None)).unwrap();
        assert_ne!(a.key(&[b"ab", b"c"]), a.key(&[b"a", b"bc"]));
        assert_eq!(a.key(&[b"x"]), a.key(&[b"x"]));
        let mut o3 = config(None);
        o3.opt_level = 3;
        assert_ne!(a.key(&[b"x"]), Cache::new(&o3).unwrap().key(&[b"x"]));
    }

    #[test]
    fn the_prune_removes_the_least_recently_used_first() {
        let dir = tempfile::tempdir().unwrap();
        let cache = Cache::new(&config(Some(dir.path().to_owned()))).unwrap();
        for (n, age) in [("old", 300), ("mid", 200), ("new", 100)] {
            std::fs::write(dir.path().join(format!("{n}.o")), vec![0u8; 1000]).unwrap();
            let json = dir.path().join(format!("{n}.json"));
            std::fs::write(&json, b"{}").unwrap();
            let when = SystemTime::now() - Duration::from_secs(age);
            filetime::set_file_mtime(&json, filetime::FileTime::from_system_time(when)).unwrap();
        }
        // What killed links left: an object without its record, a file written aside.
        let long_ago = filetime::FileTime::from_system_time(SystemTime::now() - 2 * ORPHAN_AGE);
        for left in ["orphan.o", ".tmpA1b2C3", "fresh-orphan.o"] {
            std::fs::write(dir.path().join(left), b"x").unwrap();
            if !left.starts_with("fresh") {
                filetime::set_file_mtime(dir.path().join(left), long_ago).unwrap();
            }
        }
        cache.prune_to(10_000).unwrap();
        assert!(dir.path().join("old.o").exists(), "under the limit, nothing goes");
        assert!(!dir.path().join("orphan.o").exists() && !dir.path().join(".tmpA1b2C3").exists());
        assert!(dir.path().join("fresh-orphan.o").exists(), "it may be a link's, under way");
        cache.prune_to(2500).unwrap();
        let left: Vec<bool> = ["old", "mid", "new"]
            .iter()
            .map(|n| dir.path().join(format!("{n}.json")).exists())
            .collect();
        assert_eq!(left, [false, false, true]);
        assert!(!dir.path().join("old.o").exists());
    }
}
