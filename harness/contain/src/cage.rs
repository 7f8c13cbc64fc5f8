//! A cgroup per seat, where the host lets the harness make one.
//!
//! Membership of a cgroup is inherited at fork and kept through a new
//! session, a new process group and the loss of a parent, and moving out
//! of it takes write access to another cgroup, which a runtime is not
//! given. So a cgroup holds everything a seat's process starts, and
//! writing `1` to its `cgroup.kill` kills all of it at once, however it
//! forked, and nothing else.
//!
//! The process enters its cage before it runs: it is started as
//! `/bin/sh -c 'echo 0 >"$0" ... exec /usr/bin/env "$@"' CAGE/cgroup.procs
//! ... PROGRAM ARGS` (the shell moves itself in, then becomes `env`, which
//! becomes the program with the same pid), so not even its first fork
//! happens outside. `env` gives back the environment exactly: it unsets
//! the variables a shell may add (`PWD`, `OLDPWD`, `SHLVL`, `_`) and sets
//! those of them the process was given to the values it was given, and it
//! finds the program on the process's own `PATH` as a direct start does.
//!
//! The cages of one harness process are made in one folder,
//! `sharedos-conformance-<pid>`, under the harness's own cgroup, made when
//! the first is and removed with the last. Where cgroup v2 is not mounted,
//! the harness's cgroup is not writable, a process cannot be moved into a
//! cage (checked once, by starting one there), `/bin/sh` or `/usr/bin/env`
//! is missing, or `SHAREDOS_CGROUPS=off` is set, [`Cage::new`] says
//! `None`, and the seat is kept by its process group and the command's
//! subreaper ([`crate::descendants`]).

use std::collections::BTreeMap;
use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Mutex, OnceLock, PoisonError};

/// The variable that turns cages off when set to `off`.
pub const CGROUPS_VARIABLE: &str = "SHAREDOS_CGROUPS";
/// The shell that moves a process into its cage.
const SHELL: &str = "/bin/sh";
/// What the shell becomes, to give the program its environment exactly.
const ENV: &str = "/usr/bin/env";
/// The variables a POSIX shell may add to or change in what it passes on.
const SHELL_VARIABLES: [&str; 4] = ["OLDPWD", "PWD", "SHLVL", "_"];
/// The shell's script: its `$0` is the cage's `cgroup.procs`.
const SCRIPT: &str = "echo 0 >\"$0\" || exit 126; exec /usr/bin/env \"$@\"";

/// How the processes of one seat are kept on this host.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mechanism {
    /// A cgroup per seat, killed whole when the seat's use ends.
    Cgroup,
    /// The seat's process group, killed when the seat's use ends; what left
    /// it is killed when the command ends.
    ProcessGroup,
}

/// Which mechanism [`Cage::new`] gives on this host (the first call checks).
#[must_use]
pub fn mechanism() -> Mechanism {
    if home().is_some() {
        Mechanism::Cgroup
    } else {
        Mechanism::ProcessGroup
    }
}

/// The folder this process's cages go in, once found usable.
static HOME: OnceLock<Option<PathBuf>> = OnceLock::new();

/// The cages alive, and the number of the next.
#[derive(Debug, Default)]
struct Registry {
    alive: usize,
    next: u64,
}

static REGISTRY: Mutex<Registry> = Mutex::new(Registry { alive: 0, next: 0 });

fn registry() -> std::sync::MutexGuard<'static, Registry> {
    REGISTRY.lock().unwrap_or_else(PoisonError::into_inner)
}

fn home() -> Option<&'static Path> {
    HOME.get_or_init(find_home).as_deref()
}

/// `<cgroup2 mount><own cgroup>/sharedos-conformance-<pid>`, when a
/// process started as a cage starts its processes lands in a cage made
/// there. The folder is left removed: the first cage makes it again.
fn find_home() -> Option<PathBuf> {
    if std::env::var_os(CGROUPS_VARIABLE).is_some_and(|value| value == "off") {
        return None;
    }
    if !Path::new(SHELL).is_file() || !Path::new(ENV).is_file() {
        return None;
    }
    let mounts = std::fs::read_to_string("/proc/self/mountinfo").ok()?;
    let own = std::fs::read_to_string("/proc/self/cgroup").ok()?;
    let folder = home_folder(&mounts, &own, std::process::id())?;
    remove_stale_siblings(&folder);
    std::fs::create_dir(&folder).ok()?;
    let usable = probe(&folder);
    let _ = std::fs::remove_dir(&folder);
    usable.then_some(folder)
}

/// Where this process's cages go, from `/proc/self/mountinfo` (the cgroup2
/// mount) and `/proc/self/cgroup` (the `0::` line).
fn home_folder(mounts: &str, own: &str, pid: u32) -> Option<PathBuf> {
    let mount = mounts.lines().find_map(|line| {
        // Fields: id, parent, major:minor, root, mount point, options,
        // optional fields, `-`, the file system type, ...
        let (before, after) = line.split_once(" - ")?;
        (after.split_whitespace().next() == Some("cgroup2")).then(|| before.split_whitespace().nth(4))?
    })?;
    let path = own.lines().find_map(|line| line.strip_prefix("0::"))?.trim();
    // A cgroup path holding `..` or a newline escape cannot be ours.
    if path.split('/').any(|part| part == "..") || mount.contains('\\') {
        return None;
    }
    Some(Path::new(mount).join(path.trim_start_matches('/')).join(format!("sharedos-conformance-{pid}")))
}

/// Removes the cage folders of harness processes that have ended without
/// removing them (killed outright): only empty cgroups can be removed, so
/// one still holding a process is left alone.
fn remove_stale_siblings(folder: &Path) {
    let Some(parent) = folder.parent() else { return };
    for entry in std::fs::read_dir(parent).into_iter().flatten().flatten() {
        let name = entry.file_name();
        let Some(pid) = name.to_str().and_then(|name| name.strip_prefix("sharedos-conformance-")) else { continue };
        if pid.parse::<u32>().is_err() || Path::new("/proc").join(pid).exists() {
            continue;
        }
        for cage in std::fs::read_dir(entry.path()).into_iter().flatten().flatten() {
            if cage.path().join("cgroup.procs").is_file() {
                let _ = std::fs::remove_dir(cage.path());
            }
        }
        let _ = std::fs::remove_dir(entry.path());
    }
}

/// Whether a process started as [`Cage::wrap`] starts one enters a cage
/// made in `folder`.
fn probe(folder: &Path) -> bool {
    let cage = folder.join("probe");
    if std::fs::create_dir(&cage).is_err() {
        return false;
    }
    let procs = cage.join("cgroup.procs");
    let entered = Command::new(SHELL)
        .arg("-c")
        .arg("echo 0 >\"$0\"")
        .arg(&procs)
        .env_clear()
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|status| status.success());
    let _ = std::fs::remove_dir(&cage);
    entered
}

/// One seat's cgroup: everything its process starts, killed and removed
/// when the seat's use ends or the cage drops.
#[derive(Debug)]
pub struct Cage {
    dir: PathBuf,
}

/// What to start: for a program started inside a cage, the shell that
/// enters it, with the program and its arguments among its own.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Wrapped {
    /// `/bin/sh`, or the program itself.
    pub program: PathBuf,
    /// The arguments.
    pub args: Vec<OsString>,
}

impl Cage {
    /// A new, empty cage, or `None` where the host lets the harness make
    /// none (see the module's notes).
    #[must_use]
    pub fn new() -> Option<Cage> {
        let home = home()?;
        let mut registry = registry();
        if let Err(error) = std::fs::create_dir(home) {
            if error.kind() != std::io::ErrorKind::AlreadyExists {
                return None;
            }
        }
        let dir = home.join(format!("seat-{}", registry.next));
        registry.next += 1;
        if std::fs::create_dir(&dir).is_err() {
            if registry.alive == 0 {
                let _ = std::fs::remove_dir(home);
            }
            return None;
        }
        registry.alive += 1;
        Some(Cage { dir })
    }

    /// What starts `program` with `args` in `cwd` inside this cage, with
    /// exactly the environment `env` (the one the process is given, in
    /// full). `None` when a direct start would not find the program (so it
    /// is started directly, and fails as it would have), or for a program
    /// whose name holds `=`, which `env` would read as a variable (started
    /// directly, and kept by its process group).
    #[must_use]
    pub fn wrap<V: AsRef<OsStr>>(
        &self,
        program: &str,
        args: &[String],
        env: &BTreeMap<String, V>,
        cwd: Option<&Path>,
    ) -> Option<Wrapped> {
        let path = env.get("PATH").map(AsRef::as_ref);
        if program.contains('=') || !findable(program, path, cwd) {
            return None;
        }
        let mut wrapped: Vec<OsString> = vec!["-c".into(), SCRIPT.into(), self.dir.join("cgroup.procs").into()];
        let given: Vec<&str> = SHELL_VARIABLES.into_iter().filter(|name| env.contains_key(*name)).collect();
        for name in SHELL_VARIABLES.into_iter().filter(|name| !given.contains(name)) {
            wrapped.extend(["-u".into(), OsString::from(name)]);
        }
        wrapped.push("--".into());
        for name in given {
            let mut assignment = OsString::from(format!("{name}="));
            assignment.push(env.get(name).map_or(OsStr::new(""), AsRef::as_ref));
            wrapped.push(assignment);
        }
        wrapped.push(program.into());
        wrapped.extend(args.iter().map(OsString::from));
        Some(Wrapped { program: PathBuf::from(SHELL), args: wrapped })
    }

    /// A fresh cage for a process about to start, and what to start: the
    /// program wrapped to enter it, or the program as it is where there is
    /// no cage or it cannot be wrapped (see [`Cage::wrap`]), with no cage.
    #[must_use]
    pub fn around<V: AsRef<OsStr>>(
        program: &str,
        args: &[String],
        env: &BTreeMap<String, V>,
        cwd: Option<&Path>,
    ) -> (Option<Cage>, Wrapped) {
        let cage = Cage::new();
        match cage.as_ref().and_then(|cage| cage.wrap(program, args, env, cwd)) {
            Some(wrapped) => (cage, wrapped),
            None => {
                (None, Wrapped { program: PathBuf::from(program), args: args.iter().map(OsString::from).collect() })
            }
        }
    }

    /// The cage's folder.
    #[must_use]
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Whether process `pid` is in this cage.
    #[must_use]
    pub fn holds(&self, pid: u32) -> bool {
        let Ok(text) = std::fs::read_to_string(self.dir.join("cgroup.procs")) else { return false };
        text.lines().any(|line| line.trim().parse::<u32>().ok() == Some(pid))
    }

    /// Kills every process in the cage and removes it. Killing twice is
    /// harmless.
    pub fn kill(&self) {
        if !self.dir.exists() {
            return;
        }
        kill_all(&self.dir);
        remove(&self.dir);
    }
}

impl Drop for Cage {
    fn drop(&mut self) {
        self.kill();
        let mut registry = registry();
        registry.alive = registry.alive.saturating_sub(1);
        if registry.alive == 0 {
            if let Some(home) = home() {
                let _ = std::fs::remove_dir(home);
            }
        }
    }
}

/// Whether `program` is an executable file a start in `cwd` with `PATH`
/// `path` finds, as `execvp` looks: a name with a `/` as it is, from
/// `cwd`; any other on `path`, or on `/bin:/usr/bin` without one (an empty
/// entry being `cwd`).
fn findable(program: &str, path: Option<&OsStr>, cwd: Option<&Path>) -> bool {
    use std::os::unix::fs::PermissionsExt;
    let here = cwd.map_or_else(|| PathBuf::from("."), Path::to_path_buf);
    let executable = |candidate: &Path| {
        std::fs::metadata(here.join(candidate))
            .is_ok_and(|meta| meta.is_file() && meta.permissions().mode() & 0o111 != 0)
    };
    if program.is_empty() {
        return false;
    }
    if program.contains('/') {
        return executable(Path::new(program));
    }
    let path = path.unwrap_or(OsStr::new("/bin:/usr/bin"));
    std::env::split_paths(path).any(|dir| executable(&dir.join(program)))
}

/// Kills every process in the cgroup at `dir`: at once by `cgroup.kill`
/// (Linux 5.14 and later), else one by one until none is left.
fn kill_all(dir: &Path) {
    use rustix::process::{kill_process, Pid, Signal};
    if std::fs::write(dir.join("cgroup.kill"), "1").is_ok() {
        return;
    }
    for _ in 0..crate::descendants::KILL_ROUNDS {
        let Ok(text) = std::fs::read_to_string(dir.join("cgroup.procs")) else { return };
        let pids: Vec<i32> = text.lines().filter_map(|line| line.trim().parse().ok()).collect();
        if pids.is_empty() {
            return;
        }
        for pid in pids.into_iter().filter_map(Pid::from_raw) {
            let _ = kill_process(pid, Signal::KILL);
        }
        std::thread::sleep(crate::descendants::KILL_PAUSE);
    }
}

/// Removes the cgroup at `dir` once its killed processes have gone: a
/// process in the kernel's hands may take a moment to die. One that never
/// does leaves the folder, which a later harness removes once it is empty.
fn remove(dir: &Path) {
    for _ in 0..crate::descendants::KILL_ROUNDS {
        match std::fs::remove_dir(dir) {
            Err(error) if error.kind() != std::io::ErrorKind::NotFound => {
                std::thread::sleep(crate::descendants::KILL_PAUSE);
            }
            _ => return,
        }
    }
}

/// Kills every process in every cage of this process and removes them
/// and their folder: for a command ending on a signal, whose cages are not
/// dropped.
pub fn remove_all() {
    let Some(home) = HOME.get().and_then(Option::as_deref) else { return };
    let _registry = registry();
    for cage in std::fs::read_dir(home).into_iter().flatten().flatten() {
        if cage.path().join("cgroup.procs").is_file() {
            kill_all(&cage.path());
            remove(&cage.path());
        }
    }
    let _ = std::fs::remove_dir(home);
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn the_home_is_under_the_processes_own_cgroup_on_the_cgroup2_mount() {
        let mounts = "30 25 0:26 / /sys/fs/cgroup/cpu rw - cgroup cgroup rw,cpu\n\
                      35 25 0:31 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n";
        let own = "4:memory:/x\n0::/user.slice/session-1.scope\n";
        assert_eq!(
            home_folder(mounts, own, 42),
            Some(PathBuf::from("/sys/fs/cgroup/unified/user.slice/session-1.scope/sharedos-conformance-42"))
        );
        assert_eq!(
            home_folder(mounts, "0::/\n", 7),
            Some(PathBuf::from("/sys/fs/cgroup/unified/sharedos-conformance-7"))
        );
        assert_eq!(home_folder("30 25 0:26 / /sys/fs/cgroup/cpu rw - cgroup cgroup rw\n", own, 1), None, "no cgroup2");
        assert_eq!(home_folder(mounts, "0::/a/../b\n", 1), None);
    }

    #[test]
    fn a_wrapped_start_gives_back_exactly_the_shell_variables_it_was_given() {
        let cage = Cage { dir: PathBuf::from("/cg/seat-0") };
        let env: BTreeMap<String, String> = [("PWD".into(), "/w".into()), ("A".into(), "1".into())].into();
        let wrapped = cage.wrap("sh", &["r.py".into()], &env, None).unwrap();
        let args: Vec<&str> = wrapped.args.iter().map(|arg| arg.to_str().unwrap()).collect();
        assert_eq!(
            args,
            [
                "-c",
                SCRIPT,
                "/cg/seat-0/cgroup.procs",
                "-u",
                "OLDPWD",
                "-u",
                "SHLVL",
                "-u",
                "_",
                "--",
                "PWD=/w",
                "sh",
                "r.py"
            ]
        );
        assert_eq!(cage.wrap("/bin/a=b", &[], &env, None), None, "env would read it as a variable");
        assert_eq!(cage.wrap("/nonexistent/runtime", &[], &env, None), None, "started directly, to fail as it would");
        // Never made, so never removed.
        std::mem::forget(cage);
    }

    #[test]
    fn a_program_is_found_as_a_direct_start_finds_it() {
        let dir = tempfile::tempdir().unwrap();
        let runtime = dir.path().join("runtime");
        std::fs::write(&runtime, "#!/bin/sh\n").unwrap();
        assert!(!findable("./runtime", None, Some(dir.path())), "not executable");
        std::fs::set_permissions(&runtime, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
        assert!(findable("./runtime", None, Some(dir.path())));
        assert!(findable("runtime", Some(dir.path().as_os_str()), None));
        assert!(!findable("runtime", None, Some(dir.path())), "a bare name is looked for on PATH only");
        assert!(findable("sh", None, None), "/bin:/usr/bin without a PATH");
        assert!(!findable("", None, None));
    }
}
