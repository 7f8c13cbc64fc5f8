//! The `PATH` a live CLI runs with, chosen by the harness rather than
//! passed from the user's environment: a CLI starts programs by name
//! (Codex runs `lsb_release`, `getconf` and others at each turn), and a
//! folder of the user's `PATH` could put anything under those names.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};

/// The system's own folders, after the interpreter's.
pub const SYSTEM_FOLDERS: [&str; 3] = ["/usr/local/bin", "/usr/bin", "/bin"];

/// `command`'s interpreter folder first when it is a script started with
/// `#!/usr/bin/env NAME` (the pinned CLIs are Node.js scripts), NAME found
/// by absolute path on `search` (the harness's own `PATH`), then
/// [`SYSTEM_FOLDERS`].
#[must_use]
pub fn cli_path(command: &str, search: Option<&OsStr>) -> String {
    let interpreter = find(command, search).and_then(|program| env_interpreter(&program));
    let interpreter_folder = interpreter
        .and_then(|name| find(&name, search))
        .and_then(|found| found.parent().map(Path::to_path_buf))
        .filter(|folder| !SYSTEM_FOLDERS.iter().any(|system| folder == Path::new(system)));
    let mut folders: Vec<String> = interpreter_folder.iter().map(|folder| folder.display().to_string()).collect();
    folders.extend(SYSTEM_FOLDERS.iter().map(|folder| (*folder).to_string()));
    folders.join(":")
}

/// `command` as a path: itself when it holds a `/`, else the first file of
/// that name in a folder of `search`.
fn find(command: &str, search: Option<&OsStr>) -> Option<PathBuf> {
    if command.contains('/') {
        return Some(PathBuf::from(command));
    }
    std::env::split_paths(search?).map(|folder| folder.join(command)).find(|path| path.is_file())
}

/// NAME, when `program`'s first line is `#!/usr/bin/env NAME` (or `env -S NAME ...`).
fn env_interpreter(program: &Path) -> Option<String> {
    use std::io::Read as _;
    let mut head = [0_u8; 256];
    let read = std::fs::File::open(program).and_then(|mut file| file.read(&mut head)).ok()?;
    let first = head[..read].split(|byte| *byte == b'\n').next()?;
    let line = std::str::from_utf8(first).ok()?.strip_prefix("#!")?;
    let mut words = line.split_whitespace();
    if words.next()? != "/usr/bin/env" {
        return None;
    }
    words.find(|word| !word.starts_with('-')).map(str::to_string)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn script(dir: &Path, name: &str, first_line: &str) -> String {
        use std::os::unix::fs::PermissionsExt as _;
        let path = dir.join(name);
        std::fs::write(&path, format!("{first_line}\n")).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        path.display().to_string()
    }

    #[test]
    fn a_node_script_gets_the_folder_of_the_node_found_then_the_systems_and_nothing_else() {
        let dir = tempfile::tempdir().unwrap();
        let (tools, decoy) = (dir.path().join("tools"), dir.path().join("decoy"));
        std::fs::create_dir_all(&tools).unwrap();
        std::fs::create_dir_all(&decoy).unwrap();
        script(&tools, "node", "#!/bin/sh");
        script(&decoy, "lsb_release", "#!/bin/sh");
        let cli = script(dir.path(), "cli", "#!/usr/bin/env node");
        let search = std::env::join_paths([&decoy, &tools]).unwrap();
        assert_eq!(cli_path(&cli, Some(&search)), format!("{}:/usr/local/bin:/usr/bin:/bin", tools.display()));
    }

    #[test]
    fn a_native_program_or_one_whose_interpreter_is_not_found_gets_the_systems_folders_alone() {
        let dir = tempfile::tempdir().unwrap();
        let native = script(dir.path(), "native", "\u{7f}ELF");
        assert_eq!(cli_path(&native, None), "/usr/local/bin:/usr/bin:/bin");
        let orphan = script(dir.path(), "orphan", "#!/usr/bin/env no-such-interpreter-here");
        let search = dir.path().as_os_str().to_owned();
        assert_eq!(cli_path(&orphan, Some(&search)), "/usr/local/bin:/usr/bin:/bin");
        assert_eq!(cli_path("/nonexistent/cli", None), "/usr/local/bin:/usr/bin:/bin");
    }
}
