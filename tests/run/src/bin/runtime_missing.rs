//! A program whose offload runtime cannot be loaded says so and names the package, instead of
//! the dynamic loader refusing to start it: the program runs itself again with
//! `OFFLOAD_RUNTIME_DIR` pointing at a folder without the runtime (empty, then holding another
//! LLVM's libomptarget), and the child must end at once with status 1 and the message.
//@ run: => h2d=0 d2h=0

use std::process::Command;

fn main() {
    if std::env::args().nth(1).as_deref() == Some("child") {
        // Not reached: the registration constructor loads the runtime before `main`.
        println!("child: main ran");
        return;
    }
    // The parent's runtime is there (and the program links the library, whose loader runs).
    assert!(offload::Device::count() > 0);
    let dir = std::env::temp_dir().join(format!("offload-runtime-missing-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let run = || {
        let out = Command::new(std::env::current_exe().unwrap())
            .arg("child")
            .env("OFFLOAD_RUNTIME_DIR", &dir)
            .output()
            .unwrap();
        let (stdout, stderr) =
            (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
        assert_eq!(out.status.code(), Some(1), "stdout: {stdout}\nstderr: {stderr}");
        assert!(!stdout.contains("main ran"), "{stdout}");
        assert!(stderr.starts_with("offload: error: cannot load the offload runtime"), "{stderr}");
        for needed in ["libomptarget.so.19.1", "libomp5-19", "apt-get install libomp5-19"] {
            assert!(stderr.contains(needed), "no `{needed}` in: {stderr}");
        }
        stderr.into_owned()
    };
    let empty = run();
    std::fs::write(dir.join("libomptarget.so.20.1"), b"").unwrap();
    let other = run();
    let found = format!("found libomptarget.so.20.1 in {}", dir.display());
    assert!(other.contains(&found), "no `{found}` in: {other}");
    std::fs::remove_dir_all(&dir).unwrap();
    println!("ok: {}", empty.trim());
}
