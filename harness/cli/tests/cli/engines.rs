//! The sharding examples under `docs/examples/`, run as their engines run
//! them: every shard's commands as its own process (all at once), the
//! engine's index given as the engine gives it, the parts carried between
//! jobs as the engine carries them, then the merge. The merged bundle must
//! be the unsharded one, byte for byte, and verify. The examples' own
//! commands are read from the files, so an example that drifts from the
//! binary fails here.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use yaml_rust2::{Yaml, YamlLoader};

const BINARY: &str = env!("CARGO_BIN_EXE_sharedos-conformance");

fn repository() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn load(relative: &str) -> Vec<Yaml> {
    let text = std::fs::read_to_string(repository().join(relative)).unwrap();
    YamlLoader::load_from_str(&text).unwrap()
}

/// A folder that looks like a checkout of the repository to a job: the
/// suite and seats, and the binary where the workflow's build step leaves
/// it (`cargo build` itself is not run again: this test's binary is it).
fn checkout(dir: &Path) -> PathBuf {
    std::fs::create_dir_all(dir.join("target/release")).unwrap();
    for folder in ["cases", "adversaries", "harness"] {
        std::os::unix::fs::symlink(repository().join(folder).canonicalize().unwrap(), dir.join(folder)).unwrap();
    }
    std::os::unix::fs::symlink(BINARY, dir.join("target/release/sharedos-conformance")).unwrap();
    dir.to_path_buf()
}

/// The unsharded bundle of `column`, certified in its own checkout.
fn unsharded(scratch: &Path, column: &str) -> PathBuf {
    let dir = checkout(&scratch.join("unsharded"));
    let status = Command::new(BINARY)
        .args(["certify", "--column", column, "--out", "whole"])
        .current_dir(&dir)
        .status()
        .unwrap();
    assert!(status.success());
    dir.join("whole")
}

fn assert_is_the_unsharded_bundle(merged: &Path, whole: &Path) {
    for name in ["manifest.json", "evidence.jsonl"] {
        let same = std::fs::read(merged.join(name)).unwrap() == std::fs::read(whole.join(name)).unwrap();
        assert!(same, "the merged {name} differs from the unsharded one");
    }
    let verified = Command::new(BINARY).arg("verify").arg(merged).output().unwrap();
    assert!(verified.status.success(), "{}", String::from_utf8_lossy(&verified.stdout));
}

fn wait_all(children: Vec<(String, Child)>) {
    for (name, child) in children {
        let output = child.wait_with_output().unwrap();
        let said = format!("{}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr));
        assert!(output.status.success(), "{name} failed:\n{said}");
    }
}

fn text(yaml: &Yaml) -> String {
    match yaml {
        Yaml::String(s) => s.clone(),
        Yaml::Integer(i) => i.to_string(),
        other => panic!("expected a string, found {other:?}"),
    }
}

/// A workflow's or container's environment, as the engine sets it.
fn env_of(yaml: &Yaml) -> BTreeMap<String, String> {
    match yaml {
        Yaml::Hash(map) => map.iter().map(|(k, v)| (text(k), text(v))).collect(),
        Yaml::Array(list) => list.iter().map(|e| (text(&e["name"]), text(&e["value"]))).collect(),
        Yaml::BadValue => BTreeMap::new(),
        other => panic!("expected an environment, found {other:?}"),
    }
}

/// A `run:` script with the workflow expressions a job's runner fills in.
fn github_script(run: &str, shard: Option<&str>) -> String {
    let script = match shard {
        Some(shard) => run.replace("${{ matrix.shard }}", shard),
        None => run.to_string(),
    };
    assert!(!script.contains("${{"), "an expression this test does not fill in: {script}");
    script
}

/// Runs one job's steps in `dir`: the checkout is `dir`, the build step is
/// done, `run:` steps run in `sh -e` as the runner runs them; returns what
/// its `upload-artifact` steps upload, as (artifact name, path).
fn run_steps(steps: &[Yaml], dir: &Path, env: &BTreeMap<String, String>, shard: Option<&str>) -> Vec<(String, String)> {
    let mut uploads = Vec::new();
    for step in steps {
        if let Some(run) = step["run"].as_str() {
            if run.starts_with("cargo build") {
                continue;
            }
            let script = github_script(run, shard);
            let output = Command::new("sh").arg("-ec").arg(&script).current_dir(dir).envs(env).output().unwrap();
            let said =
                format!("{}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr));
            assert!(output.status.success(), "step `{script}` failed:\n{said}");
        }
        let uses = step["uses"].as_str().unwrap_or_default();
        if uses.starts_with("actions/upload-artifact") {
            let with = &step["with"];
            uploads.push((github_script(&text(&with["name"]), shard), github_script(&text(&with["path"]), shard)));
        }
    }
    uploads
}

/// Copies a folder (an artifact's upload or download).
fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &to.join(entry.file_name()));
        } else {
            std::fs::copy(entry.path(), to.join(entry.file_name())).unwrap();
        }
    }
}

/// A Job's one container: its command line and environment, with the
/// volume's mount path moved to `volume`.
fn container_command(job: &Yaml, volume: &Path) -> (Vec<String>, BTreeMap<String, String>) {
    let pod = &job["spec"]["template"]["spec"];
    let container = &pod["containers"][0];
    let mount = text(&container["volumeMounts"][0]["mountPath"]);
    let words: Vec<String> = container["command"]
        .as_vec()
        .unwrap()
        .iter()
        .chain(container["args"].as_vec().unwrap())
        .map(|w| text(w).replace(&mount, &volume.to_string_lossy()))
        .collect();
    (words, env_of(&container["env"]))
}

/// Starts a pod of `job`: its container's command in the image's working
/// folder (a checkout), the binary on PATH as the image installs it.
fn start_pod(job: &Yaml, volume: &Path, workdir: &Path, index: Option<u32>) -> Child {
    let (words, env) = container_command(job, volume);
    let path =
        format!("{}:{}", Path::new(BINARY).parent().unwrap().display(), std::env::var("PATH").unwrap_or_default());
    let mut command = Command::new(&words[0]);
    command.args(&words[1..]).current_dir(workdir).envs(env).env("PATH", path);
    command.stdout(std::process::Stdio::piped()).stderr(std::process::Stdio::piped());
    if let Some(index) = index {
        command.env("JOB_COMPLETION_INDEX", index.to_string());
    }
    command.spawn().unwrap()
}

/// Run by the heavy stage (`cargo test --workspace --locked -- --ignored heavy::`).
mod heavy {
    use super::*;

    #[test]
    #[ignore = "heavy"]
    fn the_github_actions_example_merges_its_matrix_into_the_unsharded_bundle() {
        let scratch = tempfile::tempdir().unwrap();
        let docs = load("docs/examples/github-actions/certify-sharded.yml");
        let workflow = &docs[0];
        let env = env_of(&workflow["env"]);
        let shards: Vec<String> =
            workflow["jobs"]["shard"]["strategy"]["matrix"]["shard"].as_vec().unwrap().iter().map(text).collect();
        assert_eq!(shards.len().to_string(), env["SHARDS"], "the matrix and SHARDS disagree");
        // Every matrix job at once, each on its own runner (its own checkout).
        let artifacts = scratch.path().join("artifacts");
        let steps = workflow["jobs"]["shard"]["steps"].as_vec().unwrap().clone();
        std::thread::scope(|scope| {
            let jobs: Vec<_> = shards
                .iter()
                .map(|shard| {
                    let (steps, env, artifacts) = (&steps, &env, &artifacts);
                    let dir = checkout(&scratch.path().join(format!("runner-{shard}")));
                    scope.spawn(move || {
                        for (name, path) in run_steps(steps, &dir, env, Some(shard)) {
                            copy_dir(&dir.join(path), &artifacts.join(name));
                        }
                    })
                })
                .collect();
            for job in jobs {
                job.join().unwrap();
            }
        });
        // The merge job downloads every artifact matching its pattern into
        // `path/<artifact name>/`, as download-artifact does without
        // `merge-multiple`.
        let merge = &workflow["jobs"]["merge"];
        let steps = merge["steps"].as_vec().unwrap();
        assert_eq!(text(&merge["needs"]), "shard");
        let dir = checkout(&scratch.path().join("runner-merge"));
        let download =
            steps.iter().find(|s| s["uses"].as_str().unwrap_or_default().starts_with("actions/download-artifact"));
        let with = &download.unwrap()["with"];
        let prefix = text(&with["pattern"]).strip_suffix('*').unwrap().to_string();
        for entry in std::fs::read_dir(&artifacts).unwrap() {
            let name = entry.unwrap().file_name().to_string_lossy().into_owned();
            if name.starts_with(&prefix) {
                copy_dir(&artifacts.join(&name), &dir.join(text(&with["path"])).join(&name));
            }
        }
        let _ = run_steps(steps, &dir, &env, None);
        assert_is_the_unsharded_bundle(&dir.join("bundle"), &unsharded(scratch.path(), &env["COLUMN"]));
    }

    #[test]
    #[ignore = "heavy"]
    fn the_kubernetes_indexed_job_example_merges_its_pods_into_the_unsharded_bundle() {
        let scratch = tempfile::tempdir().unwrap();
        let shards = &load("docs/examples/kubernetes/certify-indexed-job.yaml")[0];
        let merge = &load("docs/examples/kubernetes/merge-job.yaml")[0];
        let spec = &shards["spec"];
        assert_eq!(text(&spec["completionMode"]), "Indexed");
        let completions = u32::try_from(spec["completions"].as_i64().unwrap()).unwrap();
        let (_, env) = container_command(shards, scratch.path());
        assert_eq!(completions.to_string(), env["SHARDS"], "completions and SHARDS disagree");
        let volume = scratch.path().join("volume");
        std::fs::create_dir_all(&volume).unwrap();
        let workdir = checkout(&scratch.path().join("image"));
        // Every index's pod at once, as `parallelism` allows.
        let pods =
            (0..completions).map(|i| (format!("pod {i}"), start_pod(shards, &volume, &workdir, Some(i)))).collect();
        wait_all(pods);
        wait_all(vec![("the merge Job".to_string(), start_pod(merge, &volume, &workdir, None))]);
        assert_is_the_unsharded_bundle(&volume.join("bundle"), &unsharded(scratch.path(), &env["COLUMN"]));
    }
}
