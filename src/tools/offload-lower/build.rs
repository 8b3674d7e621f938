//! An rpath to the libLLVM the lowering links against (exported by `offload_codegen`), so that
//! `offload-lower` runs without a library path.

fn main() {
    let lib = std::env::var("DEP_OFFLOAD_LLVM_LIB_DIR")
        .expect("offload_codegen exports its libLLVM folder");
    println!("cargo:rustc-link-arg-bin=offload-lower=-Wl,-rpath,{lib}");
}
