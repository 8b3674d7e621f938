//! An rpath to the libLLVM the link stage links against (exported by `offload_codegen`), so that
//! `offload-ld` runs whatever toolchain the program is built with.

fn main() {
    let lib = std::env::var("DEP_OFFLOAD_LLVM_LIB_DIR")
        .expect("offload_codegen exports its libLLVM folder");
    println!("cargo:rustc-link-arg-bin=offload-ld=-Wl,-rpath,{lib}");
}
