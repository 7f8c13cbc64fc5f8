//! A turn's own home: a CLI keeps sessions, caches, SQLite files and
//! sockets under its home and temporary folders, and one turn's must never
//! be another's. Every such folder is inside the turn's workspace, so it is
//! deleted with it. The CLI works in an empty folder of its own beside
//! them, so the config files the recipe writes into the workspace (one
//! holds the bearer token) are not in the folder it is told to work in.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The folders of one turn's home, inside its workspace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TurnHome {
    /// `HOME`.
    pub home: PathBuf,
    /// `TMPDIR`.
    pub tmp: PathBuf,
    /// The CLI's working folder, empty.
    pub work: PathBuf,
}

impl TurnHome {
    /// Makes `home/`, `tmp/` and `work/` inside `workspace`, each readable
    /// by its user alone.
    ///
    /// # Errors
    /// When a folder cannot be made.
    pub fn make(workspace: &Path) -> std::io::Result<TurnHome> {
        let home = TurnHome { home: workspace.join("home"), tmp: workspace.join("tmp"), work: workspace.join("work") };
        for dir in [&home.home, &home.tmp, &home.work] {
            private_folder(dir)?;
        }
        Ok(home)
    }

    /// A folder below the home, by its relative path.
    #[must_use]
    pub fn below(&self, relative: &str) -> PathBuf {
        self.home.join(relative)
    }

    /// The variables pointing a program at this home: `HOME`, the XDG base
    /// folders and `TMPDIR`.
    #[must_use]
    pub fn variables(&self) -> BTreeMap<String, String> {
        let path = |path: PathBuf| path.display().to_string();
        BTreeMap::from([
            ("HOME".to_string(), path(self.home.clone())),
            ("XDG_CONFIG_HOME".to_string(), path(self.below(".config"))),
            ("XDG_CACHE_HOME".to_string(), path(self.below(".cache"))),
            ("XDG_DATA_HOME".to_string(), path(self.below(".local/share"))),
            ("XDG_STATE_HOME".to_string(), path(self.below(".local/state"))),
            ("TMPDIR".to_string(), path(self.tmp.clone())),
        ])
    }
}

/// Makes `path` and any folder missing above it, mode 0700.
///
/// # Errors
/// When a folder cannot be made.
pub fn private_folder(path: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::DirBuilderExt as _;
    std::fs::DirBuilder::new().recursive(true).mode(0o700).create(path)
}

/// Writes `contents` to `path`, readable and writable by its user alone
/// (0600) from the moment it exists: one such file holds the bearer token.
///
/// # Errors
/// When the file cannot be written.
pub fn write_private(path: &Path, contents: &[u8]) -> std::io::Result<()> {
    use std::io::Write as _;
    use std::os::unix::fs::{OpenOptionsExt as _, PermissionsExt as _};
    let mut file = std::fs::OpenOptions::new().write(true).create(true).truncate(true).mode(0o600).open(path)?;
    // A file that was there already keeps its mode through `open`.
    file.set_permissions(std::fs::Permissions::from_mode(0o600))?;
    file.write_all(contents)
}
