//! The reference runtime's own unit tests (Python, standard library only)
//! run with the suite, so a change to it that breaks the protocol fails here
//! as well as in the matrix.

/// Run by the heavy stage (`cargo test --workspace --locked -- --ignored heavy::`).
mod heavy {
    #[test]
    #[ignore = "heavy"]
    fn the_python_reference_runtime_passes_its_unit_tests() {
        let folder = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../seats/reference");
        let output = std::process::Command::new("python3")
            .args(["-m", "unittest", "-q", "test_runtime"])
            .current_dir(&folder)
            .output()
            .expect("python3 runs");
        assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
        assert!(String::from_utf8_lossy(&output.stderr).contains("Ran 19 tests"), "the 19 tests ran");
    }
}
