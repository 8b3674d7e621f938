//! The cubin's ELF header: a CUDA image in the format libomptarget 19 loads, for the GPU asked
//! for.
//!
//! libomptarget 19 reads the SM from the low byte of `e_flags`, the layout of ELF ABI version 7
//! (CUDA up to 12). CUDA 13's ptxas writes ABI version 8, which moves it: the runtime then
//! finds "No images found compatible with the installed hardware", and under
//! `OMP_TARGET_OFFLOAD=MANDATORY` the program crashes. Refuse such a cubin at build time.

use std::path::Path;

use anyhow::{Context as _, Result, anyhow, bail};
use object::Endianness;
use object::elf::{ELFCLASS64, EM_CUDA, FileHeader64};
use object::read::elf::FileHeader as _;

use offload_abi::cubin::{
    ABI_VERSION as CUBIN_ABI_VERSION, CUDA_13_ABI_VERSION, EF_CUDA_SM, ELFOSABI_CUDA,
};

/// What to do about a cubin from the wrong ptxas.
const FIX: &str = "assemble with CUDA 11.8's ptxas: run cargo offload setup, which installs nvidia-cuda-nvcc-cu11==11.8.89 into the tool's own folder, or pass --ptxas <CUDA 11.8 ptxas>";

/// Checks that the file at `path` is a cubin libomptarget 19 loads on a `target_cpu` GPU.
pub fn check_cubin(path: &Path, target_cpu: &str) -> Result<()> {
    let data =
        std::fs::read(path).with_context(|| format!("reading the cubin {}", path.display()))?;
    check_header(&data, target_cpu).with_context(|| format!("{} cannot be loaded", path.display()))
}

/// [`check_cubin`] on the file's bytes.
fn check_header(data: &[u8], target_cpu: &str) -> Result<()> {
    let header = FileHeader64::<Endianness>::parse(data)
        .map_err(|e| anyhow!("it is not an ELF file ({e})"))?;
    let ident = header.e_ident();
    if ident.class != ELFCLASS64 {
        bail!("it is not an ELF64 file (class {})", ident.class);
    }
    let endian = header.endian().map_err(|e| anyhow!("its ELF header is malformed ({e})"))?;
    let machine = header.e_machine(endian);
    if machine != EM_CUDA || ident.os_abi != ELFOSABI_CUDA {
        bail!(
            "it is not a CUDA cubin (ELF machine {machine}, OS/ABI {}; a cubin has {EM_CUDA} and {ELFOSABI_CUDA})",
            ident.os_abi
        );
    }
    match ident.abi_version {
        CUBIN_ABI_VERSION => {}
        CUDA_13_ABI_VERSION => bail!(
            "it has CUDA 13's cubin format (ELF ABI version {CUDA_13_ABI_VERSION}), which libomptarget 19 rejects with \"No images found compatible with the installed hardware\" ({FIX})"
        ),
        other => bail!(
            "its ELF ABI version is {other}, not the {CUBIN_ABI_VERSION} libomptarget 19 loads ({FIX})"
        ),
    }
    let sm = header.e_flags(endian) & EF_CUDA_SM;
    let wanted = sm_number(target_cpu)?;
    if sm != wanted {
        bail!(
            "it is built for sm_{sm}, not {target_cpu}, and libomptarget loads a cubin only on its own SM"
        );
    }
    Ok(())
}

/// The SM number of an nvptx target CPU: 90 for `sm_90` (and for `sm_90a`).
pub fn sm_number(target_cpu: &str) -> Result<u32> {
    // `sm_<number>`, with at most one feature-set suffix (`a`: arch-specific, `f`: family).
    let number =
        target_cpu.strip_prefix("sm_").map(|rest| rest.strip_suffix(['a', 'f']).unwrap_or(rest));
    number
        .filter(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
        .and_then(|n| n.parse().ok())
        .ok_or_else(|| {
            anyhow!("invalid nvptx target cpu `{target_cpu}` (use a name such as `sm_90`)")
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The first 64 bytes of a cubin: the ELF header CUDA 11.8's ptxas wrote for saxpy, sm_90
    /// (`7f 45 4c 46 02 01 01 33 07 ...`, machine 190, flags 0x5a055a).
    fn header(abi_version: u8, machine: u16, flags: u32) -> Vec<u8> {
        let mut h =
            vec![0x7f, b'E', b'L', b'F', 2, 1, 1, ELFOSABI_CUDA, abi_version, 0, 0, 0, 0, 0, 0, 0];
        h.extend(2u16.to_le_bytes()); // e_type: EXEC
        h.extend(machine.to_le_bytes());
        h.extend(0x76u32.to_le_bytes()); // e_version: the CUDA toolkit's
        h.extend(0u64.to_le_bytes()); // e_entry
        h.extend(3720u64.to_le_bytes()); // e_phoff
        h.extend(3016u64.to_le_bytes()); // e_shoff
        h.extend(flags.to_le_bytes());
        for half in [64u16, 56, 4, 64, 11, 1] {
            h.extend(half.to_le_bytes()); // ehsize, phentsize, phnum, shentsize, shnum, shstrndx
        }
        assert_eq!(h.len(), 64);
        h
    }

    const SM_90_FLAGS: u32 = 0x005a_055a;

    #[test]
    fn accepts_abi_version_7() {
        check_header(&header(7, EM_CUDA, SM_90_FLAGS), "sm_90").unwrap();
    }

    #[test]
    fn refuses_cuda_13_cubins() {
        let e = check_header(&header(8, EM_CUDA, 0x5a00), "sm_90").unwrap_err().to_string();
        assert!(e.starts_with("it has CUDA 13's cubin format (ELF ABI version 8)"), "{e}");
        assert!(e.contains("cargo offload setup"), "{e}");
    }

    #[test]
    fn refuses_other_abi_versions() {
        let e = check_header(&header(6, EM_CUDA, SM_90_FLAGS), "sm_90").unwrap_err().to_string();
        assert!(e.starts_with("its ELF ABI version is 6, not the 7"), "{e}");
    }

    #[test]
    fn refuses_other_machines() {
        let e = check_header(&header(7, object::elf::EM_X86_64, SM_90_FLAGS), "sm_90")
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("it is not a CUDA cubin (ELF machine 62"), "{e}");
    }

    #[test]
    fn refuses_another_sm() {
        let e = check_header(&header(7, EM_CUDA, SM_90_FLAGS), "sm_80").unwrap_err().to_string();
        assert!(e.starts_with("it is built for sm_90, not sm_80"), "{e}");
    }

    #[test]
    fn refuses_what_is_not_elf() {
        let e = check_header(b"// PTX\n.version 7.8\n", "sm_90").unwrap_err().to_string();
        assert!(e.starts_with("it is not an ELF file"), "{e}");
        let mut elf32 = header(7, EM_CUDA, SM_90_FLAGS);
        elf32[4] = 1;
        assert!(check_header(&elf32, "sm_90").is_err());
    }

    #[test]
    fn names_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("k.cubin");
        std::fs::write(&path, header(8, EM_CUDA, 0x5a00)).unwrap();
        let e = format!("{:#}", check_cubin(&path, "sm_90").unwrap_err());
        assert!(
            e.starts_with(&format!("{} cannot be loaded: it has CUDA 13's", path.display())),
            "{e}"
        );
    }

    #[test]
    fn target_cpus() {
        assert_eq!(sm_number("sm_90").unwrap(), 90);
        assert_eq!(sm_number("sm_90a").unwrap(), 90);
        assert_eq!(sm_number("sm_100f").unwrap(), 100);
        assert_eq!(sm_number("sm_80").unwrap(), 80);
        for bad in ["", "sm_", "sm_a", "90", "gfx90a", "sm_90ab", "sm_9x0"] {
            assert!(sm_number(bad).is_err(), "{bad} accepted");
        }
    }
}
