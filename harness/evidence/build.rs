//! Records the compiler version for certification statements.

fn main() {
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".to_string());
    let version = std::process::Command::new(rustc)
        .arg("-V")
        .output()
        .ok()
        .and_then(|out| String::from_utf8(out.stdout).ok())
        .map_or_else(|| "unknown".to_string(), |v| v.trim().to_string());
    println!("cargo:rustc-env=SHAREDOS_EVIDENCE_RUSTC={version}");
    println!("cargo:rerun-if-env-changed=RUSTC");
}
