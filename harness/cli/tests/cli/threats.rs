//! Every path and count a command takes on its command line, attacked:
//! a root that is no folder, a seat, baseline, key, bundle or manifest
//! that is garbage, a FIFO or a device, worker, repeat and shard counts
//! out of range or absurd, outputs where they must not go, and a
//! runtime's words on the terminal. Each is refused with its documented
//! exit code before anything runs, and leaves nothing behind. These are
//! the tests the threat table of `docs/maintainers/testing.md` names.

use std::os::unix::fs::FileTypeExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const BINARY: &str = env!("CARGO_BIN_EXE_sharedos-conformance");

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// What a finished command left: its exit code, stdout and stderr.
struct Ended {
    code: i32,
    stdout: String,
    stderr: String,
}

/// A guard against hanging only (a FIFO opened, a pool of a hundred
/// thousand threads): no test here takes more than a few seconds.
const GUARD: Duration = Duration::from_secs(60);

/// Runs the binary from the repository, its output in files so that a
/// hanging command is killed by the guard rather than blocking the test;
/// `watch` is called with its pid while it runs.
fn run_watched(args: &[&str], mut watch: impl FnMut(u32)) -> Ended {
    let scratch = tempfile::tempdir().unwrap();
    let (out, err) = (scratch.path().join("out"), scratch.path().join("err"));
    let mut child = Command::new(BINARY)
        .args(args)
        .current_dir(root())
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(&out).unwrap())
        .stderr(std::fs::File::create(&err).unwrap())
        .spawn()
        .unwrap();
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if started.elapsed() > GUARD {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{args:?} still ran after {GUARD:?}");
        }
        watch(child.id());
        std::thread::sleep(Duration::from_millis(1));
    };
    let text = |path: &Path| String::from_utf8_lossy(&std::fs::read(path).unwrap()).into_owned();
    Ended { code: status.code().unwrap(), stdout: text(&out), stderr: text(&err) }
}

fn run(args: &[&str]) -> Ended {
    run_watched(args, |_| {})
}

fn text(path: &Path) -> &str {
    path.to_str().unwrap()
}

fn mkfifo(path: &Path) {
    assert!(Command::new("mkfifo").arg(path).status().unwrap().success());
}

/// A scratch folder with a regular file of garbage, a FIFO and an empty
/// folder, each named `name` with its kind in front.
struct Hostile {
    dir: tempfile::TempDir,
}

impl Hostile {
    fn new() -> Hostile {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("garbage"), "\u{0}garbage = [\n").unwrap();
        mkfifo(&dir.path().join("fifo"));
        std::fs::create_dir(dir.path().join("folder")).unwrap();
        Hostile { dir }
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    /// Garbage, a FIFO, a device that never ends, a folder.
    fn files(&self) -> Vec<PathBuf> {
        vec![self.path("garbage"), self.path("fifo"), PathBuf::from("/dev/zero"), self.path("folder")]
    }
}

/// One quick cell, for the commands that run cells.
const ONE_CELL: [&str; 4] = ["--case", "forged-grant", "--column", "adversary-embedded"];

/// `certify` of the Adversary's first row only (the suite has fewer than
/// 1000 rows): `certify` takes no filters.
const ONE_ROW: [&str; 4] = ["--column", "adversary-embedded", "--shard", "1/1000"];

/// The commands that load the suite under `--root`, each with what else
/// it needs to run; `certify` writes `out`.
fn suite_commands(out: &Path) -> Vec<Vec<String>> {
    let own = |words: &[&str]| words.iter().map(ToString::to_string).collect::<Vec<_>>();
    vec![
        own(&["list"]),
        own(&[&["run"][..], &ONE_CELL].concat()),
        own(&[&["check"][..], &ONE_CELL].concat()),
        own(&[&["bless"][..], &ONE_CELL].concat()),
        own(&[&["certify", "--out", text(out)][..], &ONE_ROW].concat()),
        own(&["protocol-check", "--seat", "harness/seats/node-reference.json"]),
    ]
}

fn with<'a>(command: &'a [String], more: &[&'a str]) -> Vec<&'a str> {
    command.iter().map(String::as_str).chain(more.iter().copied()).collect()
}

#[test]
fn a_root_that_is_no_folder_is_invalid_input_for_every_command_that_reads_one() {
    let hostile = Hostile::new();
    let out = hostile.path("bundle");
    let html = hostile.path("page.html");
    let mut refused = 0;
    for root in [hostile.path("garbage"), hostile.path("fifo")] {
        for command in suite_commands(&out) {
            let ended = run(&with(&command, &["--root", text(&root)]));
            assert_eq!(ended.code, 3, "{command:?} --root {}: {}", root.display(), ended.stderr);
            assert!(ended.stderr.contains("expected a readable folder"), "{command:?}: {}", ended.stderr);
            refused += 1;
        }
        let ended = run(&["report", "--html", text(&html), "--root", text(&root)]);
        assert_eq!(ended.code, 3, "report --root {}: {}", root.display(), ended.stderr);
        let ended = run(&["verify", "reports", "--suite", text(&root)]);
        assert_eq!(ended.code, 3, "verify --suite {}: {}", root.display(), ended.stderr);
        assert!(ended.stderr.starts_with("error: failed to read the suite "), "{}", ended.stderr);
        refused += 2;
    }
    assert_eq!(refused, 16);
    assert!(!out.exists() && !html.exists(), "a refused command wrote its output");
    assert!(std::fs::symlink_metadata(hostile.path("fifo")).unwrap().file_type().is_fifo());
}

/// `report` reads the golden files below `--root` for its drill-down: a
/// FIFO in place of one is not waited on, and the page is written
/// without it.
#[test]
fn report_does_not_wait_on_a_fifo_in_place_of_a_golden_file_under_its_root() {
    let scratch = tempfile::tempdir().unwrap();
    let golden = scratch.path().join("golden/forged-grant");
    std::fs::create_dir_all(&golden).unwrap();
    mkfifo(&golden.join("baseline.adversary-embedded.json"));
    let html = scratch.path().join("page.html");
    let ended = run(&["report", "reports/conformance.json", "--root", text(scratch.path()), "--html", text(&html)]);
    assert_eq!(ended.code, 0, "{}", ended.stderr);
    assert!(std::fs::read_to_string(&html).unwrap().contains("forged-grant"));
}

#[test]
fn a_seat_file_that_is_garbage_a_fifo_a_device_or_a_folder_is_refused_before_anything_runs() {
    let hostile = Hostile::new();
    let out = hostile.path("bundle");
    let mut refused = 0;
    for seat in hostile.files() {
        for command in suite_commands(&out) {
            // `protocol-check` takes one seat: the hostile one replaces its own.
            let command: Vec<String> = command.into_iter().take_while(|word| word != "--seat").collect();
            let ended = run(&with(&command, &["--seat", text(&seat)]));
            assert_eq!(ended.code, 3, "{command:?} --seat {}: {}", seat.display(), ended.stderr);
            assert!(ended.stderr.starts_with(&format!("error: {}: ", seat.display())), "{}", ended.stderr);
            assert_eq!(ended.stdout, "", "{command:?}: nothing ran");
            refused += 1;
        }
    }
    assert_eq!(refused, 24);
    assert!(!out.exists(), "a refused certify wrote its bundle");
}

#[test]
fn a_baseline_that_is_garbage_a_fifo_a_device_or_a_folder_is_refused_before_anything_runs() {
    let hostile = Hostile::new();
    let out = hostile.path("bundle");
    let mut refused = 0;
    for baseline in hostile.files() {
        // Every command that takes a baseline: those that run cells.
        for command in suite_commands(&out).into_iter().filter(|c| !matches!(c[0].as_str(), "list" | "protocol-check"))
        {
            let ended = run(&with(&command, &["--baseline", text(&baseline)]));
            assert_eq!(ended.code, 3, "{command:?} --baseline {}: {}", baseline.display(), ended.stderr);
            assert!(ended.stderr.starts_with(&format!("error: {}: ", baseline.display())), "{}", ended.stderr);
            assert_eq!(ended.stdout, "", "{command:?}: nothing ran");
            refused += 1;
        }
    }
    assert_eq!(refused, 16);
    assert!(!out.exists(), "a refused certify wrote its bundle");
}

/// The most threads the process had at once, read from `/proc` while it
/// runs.
fn peak_threads(args: &[&str]) -> (Ended, usize) {
    let mut peak = 0;
    let ended = run_watched(args, |pid| {
        let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
        let threads = status.lines().find_map(|line| line.strip_prefix("Threads:")).map(str::trim);
        peak = peak.max(threads.and_then(|n| n.parse().ok()).unwrap_or(0));
    });
    (ended, peak)
}

/// `--jobs` is the user's, but no value of it makes more workers than
/// there is work: a hundred thousand on three rows starts three, and the
/// output is the output of one. Without the clamp the pool would ask for
/// a hundred thousand threads.
#[test]
fn a_worker_count_of_zero_or_past_the_work_starts_no_more_workers_than_rows() {
    let three_rows = ["--case", "forged-grant", "--case", "hidden-tool", "--case", "grant-material"];
    let select = [&three_rows[..], &["--column", "adversary-embedded", "--format", "jsonl"]].concat();
    for command in ["run", "check", "bless"] {
        let (one, _) = peak_threads(&[&[command, "--jobs", "1"][..], &select].concat());
        assert_eq!(one.code, 0, "{command}: {}", one.stderr);
        for jobs in ["0", "100000"] {
            let (ended, peak) = peak_threads(&[&[command, "--jobs", jobs][..], &select].concat());
            assert_eq!(ended.code, 0, "{command} --jobs {jobs}: {}", ended.stderr);
            assert_eq!(ended.stdout, one.stdout, "{command} --jobs {jobs}: the output of one worker");
            // The main thread, the signal thread and a few more of the
            // runtime's own, then one per row.
            assert!(peak <= 3 + 8, "{command} --jobs {jobs}: {peak} threads for three rows");
        }
        let ended = run(&[&[command, "--jobs", "18446744073709551616"][..], &select].concat());
        assert_eq!(ended.code, 2, "{command}: {}", ended.stderr);
    }
    let scratch = tempfile::tempdir().unwrap();
    let out = scratch.path().join("bundle");
    let (ended, peak) = peak_threads(&[&["certify", "--jobs", "100000", "--out", text(&out)][..], &ONE_ROW].concat());
    assert_eq!(ended.code, 0, "{}", ended.stderr);
    assert!(peak <= 1 + 8, "certify --jobs 100000: {peak} threads for one row");
}

/// `--repeat 0` is no count of runs; a huge one runs a built-in column
/// once all the same, as one run stands for any number.
#[test]
fn a_repeat_of_zero_is_a_usage_error_and_a_huge_one_runs_a_built_in_column_once() {
    let scratch = tempfile::tempdir().unwrap();
    let select = [&ONE_CELL[..], &["--format", "jsonl"]].concat();
    for command in ["run", "check", "bless"] {
        let ended = run(&[&[command, "--repeat", "0"][..], &select].concat());
        assert_eq!(ended.code, 2, "{command}: {}", ended.stderr);
        let once = run(&[&[command, "--repeat", "1"][..], &select].concat());
        let huge = run(&[&[command, "--repeat", "4294967295"][..], &select].concat());
        assert_eq!((once.code, huge.code), (0, 0), "{command}: {}", huge.stderr);
        assert_eq!(huge.stdout, once.stdout, "{command}: one run stands for any number");
    }
    let out = |name: &str| scratch.path().join(name);
    let ended = run(&[&["certify", "--repeat", "0", "--out", text(&out("zero"))][..], &ONE_ROW].concat());
    assert_eq!(ended.code, 2, "{}", ended.stderr);
    for (name, repeat) in [("once", "1"), ("huge", "4294967295")] {
        let ended = run(&[&["certify", "--repeat", repeat, "--out", text(&out(name))][..], &ONE_ROW].concat());
        assert_eq!(ended.code, 0, "--repeat {repeat}: {}", ended.stderr);
    }
    for file in ["manifest.json", "evidence.jsonl"] {
        let same = std::fs::read(out("once").join(file)).unwrap() == std::fs::read(out("huge").join(file)).unwrap();
        assert!(same, "certify --repeat 4294967295 wrote another {file} than --repeat 1");
    }
    assert!(!out("zero").exists());
}

/// A shard outside `1 <= I <= N` is refused before anything runs; the
/// largest N is one row, and the gap `merge` then names is said in a
/// bounded number of words.
#[test]
fn a_shard_outside_one_to_n_is_a_usage_error_and_the_largest_n_is_one_bounded_part() {
    let scratch = tempfile::tempdir().unwrap();
    let out = scratch.path().join("bundle");
    let bad = ["0/4", "5/4", "1/0", "x", "", "1/2/3", "-1/4", "1/4294967296"];
    for shard in bad {
        let ended = run(&["certify", "--column", "adversary-embedded", "--out", text(&out), "--shard", shard]);
        assert_eq!(ended.code, 2, "--shard {shard:?}: {}", ended.stderr);
        assert!(!out.exists(), "--shard {shard:?} wrote a bundle");
    }
    let part = scratch.path().join("part.tar");
    let args = ["certify", "--column", "adversary-embedded", "--shard", "1/4294967295", "--out", text(&part)];
    let ended = run(&args);
    assert_eq!(ended.code, 0, "{}", ended.stderr);
    assert!(ended.stdout.contains("pass: 1\n"), "one row: {}", ended.stdout);
    let ended = run(&["verify", text(&part)]);
    assert!(ended.stdout.contains("shard 1/4294967295, a partial bundle"), "{}", ended.stdout);
    let ended = run(&["merge", text(&part), "--out", text(&out)]);
    assert_eq!(ended.code, 3, "{}", ended.stderr);
    assert!(ended.stderr.contains("4294967294 of the 4294967295 shards are missing: 2-4294967295"), "{}", ended.stderr);
    assert!(ended.stderr.len() < 512, "{} bytes said of a gap", ended.stderr.len());
    assert!(!out.exists());
}

/// The Ed25519 key of RFC 8410, section 10.3, and its public key
/// (section 10.1): a published example, no secret of anybody's.
const PRIVATE_KEY: &str = "-----BEGIN PRIVATE KEY-----\n\
                           MC4CAQAwBQYDK2VwBCIEINTuctv5E1hK1bbY8fdp+K06/nwoy/HU++CXqI9EdVhC\n\
                           -----END PRIVATE KEY-----\n";
const PUBLIC_KEY: &str = "-----BEGIN PUBLIC KEY-----\n\
                          MCowBQYDK2VwAyEAGb9ECWmEzf6FQbrBZ9w7lshQhqowtrbLDFw4rXAxZuE=\n\
                          -----END PUBLIC KEY-----\n";
/// The private key's base64 body and its 32 secret bytes.
const PRIVATE_BODY: &str = "MC4CAQAwBQYDK2VwBCIEINTuctv5E1hK1bbY8fdp";
const SEED_HEX: &str = "d4ee72dbf913584ad5b6d8f1f769f8ad3afe7c28cbf1d4fbe097a88f44755842";

fn seed() -> Vec<u8> {
    (0..SEED_HEX.len()).step_by(2).map(|at| u8::from_str_radix(&SEED_HEX[at..at + 2], 16).unwrap()).collect()
}

/// Whether `haystack` holds the private key in any form this test knows.
fn holds_the_key(haystack: &[u8]) -> bool {
    let text = String::from_utf8_lossy(haystack).to_lowercase();
    let seed = seed();
    text.contains(&PRIVATE_BODY.to_lowercase())
        || text.contains(SEED_HEX)
        || haystack.windows(seed.len()).any(|window| window == seed.as_slice())
}

#[test]
fn a_key_that_is_not_the_key_asked_for_is_refused_before_anything_runs_and_never_printed() {
    let hostile = Hostile::new();
    let (private, public) = (hostile.path("private.pem"), hostile.path("public.pem"));
    std::fs::write(&private, PRIVATE_KEY).unwrap();
    std::fs::write(&public, PUBLIC_KEY).unwrap();
    let out = hostile.path("bundle");
    let mut refused = 0;
    for key in hostile.files().into_iter().chain([public.clone()]) {
        let certify = [&["certify", "--out", text(&out), "--sign-key", text(&key)][..], &ONE_ROW].concat();
        // The parts are never reached: the key is read first.
        let merge = ["merge", "no-such-part", "--out", text(&out), "--sign-key", text(&key)];
        for args in [&certify[..], &merge[..]] {
            let ended = run(args);
            assert_eq!(ended.code, 3, "{args:?}: {}", ended.stderr);
            let said = format!("error: failed to read the key {}: ", key.display());
            assert!(ended.stderr.starts_with(&said), "{args:?}: {}", ended.stderr);
            assert_eq!(ended.stdout, "", "{args:?}: nothing ran");
            refused += 1;
        }
    }
    // A private key where a public one is asked for is refused without a
    // word of what it holds.
    for key in hostile.files().into_iter().chain([private.clone()]) {
        let ended = run(&["verify", "reports", "--key", text(&key)]);
        assert_eq!(ended.code, 3, "--key {}: {}", key.display(), ended.stderr);
        assert!(!holds_the_key(ended.stderr.as_bytes()) && !holds_the_key(ended.stdout.as_bytes()));
        refused += 1;
    }
    assert_eq!(refused, 15);
    assert!(!out.exists(), "a refused command wrote its bundle");
}

/// Every file of the bundle at `folder`, below it.
fn files_below(folder: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir(folder).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            found.extend(files_below(&path));
        } else {
            found.push(path);
        }
    }
    found
}

#[test]
fn the_signing_key_reaches_no_file_of_the_bundle_nor_the_terminal() {
    let scratch = tempfile::tempdir().unwrap();
    let (private, public) = (scratch.path().join("private.pem"), scratch.path().join("public.pem"));
    std::fs::write(&private, PRIVATE_KEY).unwrap();
    std::fs::write(&public, PUBLIC_KEY).unwrap();
    let out = scratch.path().join("bundle");
    let ended = run(&[&["certify", "--out", text(&out), "--sign-key", text(&private)][..], &ONE_ROW].concat());
    assert_eq!(ended.code, 0, "{}", ended.stderr);
    assert!(!holds_the_key(ended.stdout.as_bytes()) && !holds_the_key(ended.stderr.as_bytes()));
    let files = files_below(&out);
    assert!(files.len() > 100, "{} files", files.len());
    for file in &files {
        assert!(!holds_the_key(&std::fs::read(file).unwrap()), "{} holds the signing key", file.display());
    }
    let ended = run(&["verify", text(&out), "--key", text(&public)]);
    assert!(ended.stdout.contains("signature verified"), "{}", ended.stdout);
}

#[test]
fn a_bundle_out_that_is_a_fifo_or_a_link_is_left_alone() {
    let hostile = Hostile::new();
    let dangling = hostile.path("dangling");
    std::os::unix::fs::symlink(hostile.path("nowhere"), &dangling).unwrap();
    let to_folder = hostile.path("to-folder");
    std::os::unix::fs::symlink(hostile.path("folder"), &to_folder).unwrap();
    let mut refused = 0;
    for out in [hostile.path("fifo"), dangling.clone(), to_folder.clone()] {
        let certify = [&["certify", "--out", text(&out)][..], &ONE_ROW].concat();
        let merge = ["merge", "no-such-part", "--out", text(&out)];
        for args in [&certify[..], &merge[..]] {
            let ended = run(args);
            assert_eq!(ended.code, 2, "{args:?}: {}", ended.stderr);
            assert!(ended.stderr.contains("it already exists"), "{args:?}: {}", ended.stderr);
            refused += 1;
        }
    }
    assert_eq!(refused, 6);
    assert!(std::fs::symlink_metadata(hostile.path("fifo")).unwrap().file_type().is_fifo());
    assert!(!hostile.path("nowhere").exists(), "written through a dangling link");
    assert_eq!(std::fs::read_dir(hostile.path("folder")).unwrap().count(), 0, "written through a link");
}

#[test]
fn a_bundle_or_part_that_is_a_fifo_a_device_or_a_file_is_invalid_input_and_not_waited_on() {
    let hostile = Hostile::new();
    let fifo_archive = hostile.path("fifo.tar");
    mkfifo(&fifo_archive);
    let out = hostile.path("merged");
    let mut refused = 0;
    for bundle in [hostile.path("fifo"), fifo_archive.clone(), PathBuf::from("/dev/zero"), hostile.path("garbage")] {
        let ended = run(&["verify", text(&bundle)]);
        assert_eq!(ended.code, 3, "verify {}: {}", bundle.display(), ended.stderr);
        assert!(ended.stderr.starts_with("error: failed to read the bundle "), "{}", ended.stderr);
        let ended = run(&["merge", text(&bundle), text(&bundle), "--out", text(&out)]);
        assert_eq!(ended.code, 3, "merge {}: {}", bundle.display(), ended.stderr);
        refused += 2;
    }
    assert_eq!(refused, 8);
    assert!(!out.exists());
    assert!(std::fs::symlink_metadata(&fifo_archive).unwrap().file_type().is_fifo());
}

#[test]
fn a_manifest_that_is_garbage_a_fifo_a_device_or_a_folder_is_invalid_input_for_diff_and_report() {
    let hostile = Hostile::new();
    let committed = "reports/conformance.json";
    let html = hostile.path("page.html");
    let mut refused = 0;
    for manifest in hostile.files() {
        let manifest = text(&manifest);
        for args in [
            vec!["diff", manifest, committed],
            vec!["diff", committed, manifest],
            vec!["report", manifest, "--html", text(&html)],
            vec!["report", "--against", manifest, "--html", text(&html)],
        ] {
            let ended = run(&args);
            assert_eq!(ended.code, 3, "{args:?}: {}", ended.stderr);
            assert!(ended.stderr.contains(manifest), "{args:?} names what it could not read: {}", ended.stderr);
            assert_eq!(ended.stdout, "", "{args:?}");
            refused += 1;
        }
    }
    assert_eq!(refused, 16);
    assert!(!html.exists(), "a refused report wrote its page");
}

#[test]
fn mcp_relay_to_what_is_no_socket_is_an_io_error_and_touches_nothing() {
    let hostile = Hostile::new();
    for socket in [hostile.path("garbage"), hostile.path("fifo"), hostile.path("folder")] {
        let ended = run(&["mcp-relay", text(&socket)]);
        assert_eq!(ended.code, 74, "{}: {}", socket.display(), ended.stderr);
        assert!(ended.stderr.contains("failed to connect to the turn's MCP socket"), "{}", ended.stderr);
    }
    assert_eq!(std::fs::read(hostile.path("garbage")).unwrap(), b"\0garbage = [\n");
    assert!(std::fs::symlink_metadata(hostile.path("fifo")).unwrap().file_type().is_fifo());
    assert_eq!(std::fs::read_dir(hostile.path("folder")).unwrap().count(), 0);
}

/// A seat whose runtime says, on stdout and on stderr, things that would
/// erase a line, move the cursor or retitle the terminal.
fn noisy_seat(dir: &Path) -> PathBuf {
    let script =
        "printf 'err \\033]0;title\\007\\n' >&2; printf 'said \\033[2K\\rverified\\007\\n'; exec cat >/dev/null";
    let seat = serde_json::json!({
        "name": "noisy", "label": "noisy", "kind": "scripted", "command": "sh", "args": ["-c", script],
        "passEnv": ["PATH"],
    });
    let file = dir.join("noisy.json");
    std::fs::write(&file, seat.to_string()).unwrap();
    file
}

fn no_controls(what: &str, shown: &str) {
    assert!(!shown.contains(|c: char| c.is_control() && c != '\n'), "{what} printed a control: {shown:?}");
}

#[test]
fn a_runtimes_words_and_a_bundles_ids_reach_the_terminal_escaped() {
    let scratch = tempfile::tempdir().unwrap();
    let seat = noisy_seat(scratch.path());
    let ended = run(&["run", "--seat", text(&seat), "--column", "process:noisy", "--case", "forged-grant"]);
    assert_eq!(ended.code, 5, "{}", ended.stderr);
    assert!(ended.stderr.contains("said \\u001b[2K\\u000dverified\\u0007"), "{}", ended.stderr);
    assert!(ended.stderr.contains("err \\u001b]0;title\\u0007"), "{}", ended.stderr);
    no_controls("run", &ended.stderr);
    let ended = run(&["protocol-check", "--seat", text(&seat)]);
    assert_eq!(ended.code, 1, "{}", ended.stdout);
    assert!(ended.stdout.contains("said \\u001b[2K\\u000dverified"), "{}", ended.stdout);
    no_controls("protocol-check", &ended.stdout);
    // A bundle whose case id would rewrite the verdict line.
    let bundle = scratch.path().join("bundle");
    assert_eq!(run(&[&["certify", "--out", text(&bundle)][..], &ONE_ROW].concat()).code, 0);
    let manifest = bundle.join("manifest.json");
    let mut value: serde_json::Value = serde_json::from_slice(&std::fs::read(&manifest).unwrap()).unwrap();
    let case = value["rows"][0]["caseId"].as_str().unwrap().to_string();
    value["rows"][0]["caseId"] = format!("{case}\u{1b}[2K\rverified: 1 cells").into();
    std::fs::write(&manifest, value.to_string()).unwrap();
    for format in ["human", "json"] {
        let ended = run(&["verify", text(&bundle), "--format", format]);
        assert_eq!(ended.code, 1, "{format}: {}", ended.stdout);
        assert!(ended.stdout.contains(&format!("{case}\\u001b[2K")), "{format}: {}", ended.stdout);
        no_controls("verify", &ended.stdout);
    }
}

/// `--junit` and `--verdicts` of each command that runs cells, held to
/// the one rule for outputs (`outputs.rs` has each refusal's words):
/// never over a FIFO, a link, a folder, somebody's file or a file of the
/// suite, nor into a folder that is not there. `check` reads
/// `--verdicts`: what is no manifest there is invalid input.
#[test]
fn every_command_that_runs_cells_holds_junit_and_verdicts_to_the_output_rule() {
    let hostile = Hostile::new();
    let dangling = hostile.path("dangling.xml");
    std::os::unix::fs::symlink(hostile.path("nowhere.xml"), &dangling).unwrap();
    let foreign = hostile.path("pom.xml");
    std::fs::write(&foreign, "<project/>").unwrap();
    let case = root().join("cases/forged-grant.json");
    let case_before = std::fs::read(&case).unwrap();
    let missing = hostile.path("missing/out.xml");
    let places =
        [hostile.path("fifo"), dangling.clone(), hostile.path("folder"), foreign.clone(), case.clone(), missing];
    let mut refused = 0;
    for command in ["run", "check", "bless"] {
        for flag in ["--junit", "--verdicts"] {
            let reads = command == "check" && flag == "--verdicts";
            // Verdicts not there yet are `check`'s drift, not a refusal.
            for place in places.iter().filter(|place| !reads || place.symlink_metadata().is_ok()) {
                let ended = run(&[&[command, flag, text(place)][..], &ONE_CELL].concat());
                let expected = if reads { 3 } else { 2 };
                assert_eq!(ended.code, expected, "{command} {flag} {}: {}", place.display(), ended.stderr);
                assert_eq!(ended.stdout, "", "{command} {flag} {}: nothing ran", place.display());
                refused += 1;
            }
        }
    }
    assert_eq!(refused, 35);
    assert!(std::fs::symlink_metadata(hostile.path("fifo")).unwrap().file_type().is_fifo());
    assert!(!hostile.path("nowhere.xml").exists() && !hostile.path("missing").exists());
    assert_eq!(std::fs::read_dir(hostile.path("folder")).unwrap().count(), 0);
    assert_eq!(std::fs::read_to_string(&foreign).unwrap(), "<project/>");
    assert_eq!(std::fs::read(&case).unwrap(), case_before, "a file of the suite was written over");
}
