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
    /// Makes `home/`, `tmp/` and `work/` inside `workspace`.
    ///
    /// # Errors
    /// When a folder cannot be made.
    pub fn make(workspace: &Path) -> std::io::Result<TurnHome> {
        let home = TurnHome { home: workspace.join("home"), tmp: workspace.join("tmp"), work: workspace.join("work") };
        for dir in [&home.home, &home.tmp, &home.work] {
            std::fs::create_dir_all(dir)?;
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
