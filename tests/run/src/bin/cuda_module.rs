//! The library's CUDA module, which its launches run: a program with an NVIDIA image embeds the
//! PTX the cubin was assembled from as well, and on a GPU the driver compiles that PTX for it
//! (`OFFLOAD_CUDA_MODULE=cubin` loads the cubin instead). Checked: the PTX is embedded beside
//! the cubin and defines the kernel; a launch computes the same either way; on a GPU the module
//! is the one asked for, and on the host-offload plugin there is none.
//@ run: => h2d=2 d2h=1
//@ run: => h2d=2 d2h=1 env=OFFLOAD_CUDA_MODULE=cubin

use offload::__private::ModuleSource;

#[allow(dead_code)]
#[path = "../kernels.rs"]
mod kernels;

fn main() -> Result<(), offload::Error> {
    let image = offload::__private::cuda_image();
    match (image.cubin(), image.ptx()) {
        (Some(_), Some(ptx)) => {
            let ptx = ptx.to_str().expect("PTX is text");
            assert!(ptx.contains(".visible .entry saxpy("), "the PTX lacks the kernel");
            println!("embedded: a cubin and its PTX ({} bytes)", ptx.len());
        }
        (None, None) => println!("embedded: no NVIDIA image"),
        (cubin, ptx) => panic!("cubin {:?} bytes but PTX {:?}", cubin.map(<[u8]>::len), ptx),
    }

    let n = 10_000;
    let xs: Vec<f32> = (0..n).map(|i| (i % 64) as f32).collect();
    let mut ys = vec![1.0f32; n];
    {
        let x = offload::preload(&xs[..]);
        let mut y = offload::preload_mut(&mut ys[..]);
        offload::launch!(kernels::saxpy, n.div_ceil(128) as u32, 128, (2.0f32, &x, &mut y))?;
    }
    for (i, y) in ys.iter().enumerate() {
        assert_eq!(*y, 1.0 + 2.0 * (i % 64) as f32, "y[{i}]");
    }

    let gpu = offload::Device::default_device()?.memory().is_some();
    let env = |name: &str| std::env::var(name).unwrap_or_default().to_ascii_lowercase();
    let asked =
        if env("OFFLOAD_CUDA_MODULE") == "cubin" { ModuleSource::Cubin } else { ModuleSource::Ptx };
    // The default device's module (`-1`), as the launch above used it.
    let source = offload::__private::cuda_module_source(-1);
    if gpu && env("OFFLOAD_LAUNCH") != "runtime" {
        assert_eq!(source, Some(asked), "the module the launch ran");
    } else {
        // Off a GPU, or with every launch through libomptarget, the library opens no module.
        assert_eq!(source, None, "no CUDA module of the library's");
    }
    println!("ok: module {source:?}");
    Ok(())
}
