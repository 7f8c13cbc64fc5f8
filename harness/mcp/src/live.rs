//! A vendor CLI seated live behind MCP (D49, D50): its
//! recipe's config written into the turn's workspace, the CLI started with
//! only the seat's variables, its stdout read for the ending, and nothing
//! of it left running once the turn is over.

use crate::containment::{asks_for_own_tools, own_calls, placed, Canaries};
use crate::harness::{Connection, HarnessExit, HarnessLaunch, McpHarness, Transport};
use crate::home::{private_folder, write_private, TurnHome};
use crate::recipe::{home_variables, mcp_recipe, McpRecipe, RecipeInput};
use futures::future::LocalBoxFuture;
use serde_json::Value;
use sharedos_conformance_metadata::witness::WitnessLog;
use sharedos_drivers::child_process::{ChildMode, HarnessProcess, Launch, ProcessLimits};
use sharedos_drivers::codec::pi::retry_follows;
use sharedos_drivers::live::LiveOutcome;
use sharedos_drivers::transport::TransportError;
use sharedos_drivers::vendor::{Vendor, VendorWire};
use sharedos_scripted_model::play::Play;
use sharedos_scripted_model::server::ModelServer;
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

pub use sharedos_conformance_metadata::launch::DEFAULT_IDLE_TIMEOUT;

/// A live CLI and how to start it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LiveCli {
    /// Whose CLI, and so which recipe and which codec.
    pub vendor: Vendor,
    /// How it reaches the server.
    pub transport: Transport,
    /// The program, when not the vendor's own name on `PATH`.
    pub command: Option<String>,
    /// Arguments appended to the recipe's.
    pub args: Vec<String>,
    /// The only variables it sees, besides those its recipe sets.
    pub env: BTreeMap<String, String>,
    /// Bounds on its process and its output.
    pub limits: ProcessLimits,
    /// How long it may stay silent with stdin open (D50).
    pub idle_timeout: Duration,
}

/// The scripted model a turn's CLI is pointed at, and where what it
/// witnesses is kept.
#[derive(Debug, Clone)]
pub struct ScriptedModel {
    /// The turn's calls and ending.
    pub play: Play,
    /// Filled as the CLI's requests arrive.
    pub witness: Arc<Mutex<WitnessLog>>,
}

/// See the module documentation.
#[derive(Debug, Clone)]
pub struct LiveHarness {
    cli: LiveCli,
    model: Option<ScriptedModel>,
}

impl LiveHarness {
    /// A harness starting `cli` for each turn, against its vendor's model.
    #[must_use]
    pub fn new(cli: LiveCli) -> LiveHarness {
        LiveHarness { cli, model: None }
    }

    /// The same harness, its CLI pointed at `model` on loopback.
    #[must_use]
    pub fn with_scripted_model(mut self, model: ScriptedModel) -> LiveHarness {
        self.model = Some(model);
        self
    }

    /// The process of one turn, as `recipe` starts it in `work`.
    fn launch(&self, recipe: &McpRecipe, work: &Path) -> Launch {
        let mut launch = Launch::new(self.cli.command.clone().unwrap_or_else(|| recipe.command.clone()))
            .args(recipe.args.iter().chain(&self.cli.args).cloned())
            .cwd(work)
            .mode(ChildMode::Observe)
            .limits(self.cli.limits.clone());
        for (name, value) in self.cli.env.iter().chain(&recipe.env) {
            launch = launch.env(name.clone(), value.clone());
        }
        launch
    }

    async fn run_cli(&self, launch: HarnessLaunch) -> HarnessExit {
        let not_started = |detail: String| HarnessExit::NotStarted { detail };
        let Some(workspace) = launch.workspace.as_deref() else {
            return not_started("a live CLI needs a workspace for its config".into());
        };
        let home = match TurnHome::make(workspace) {
            Ok(home) => home,
            Err(error) => return not_started(format!("make the turn's home: {error}")),
        };
        let canaries = match &self.model {
            Some(model) if asks_for_own_tools(&model.play) => match Canaries::lay(workspace, &home) {
                Ok(canaries) => Some(canaries),
                Err(error) => return not_started(format!("lay the turn's canaries: {error}")),
            },
            _ => None,
        };
        let server = match &self.model {
            Some(model) => {
                let play = match &canaries {
                    Some(canaries) => {
                        let token = match &launch.connection {
                            Connection::Http { token, .. } => token.as_deref(),
                            _ => None,
                        };
                        placed(&model.play, self.cli.vendor, canaries, canaries.secrets(token))
                    }
                    None => model.play.clone(),
                };
                match ModelServer::start(play, &launch.server_name, Arc::clone(&model.witness)).await {
                    Ok(server) => Some(server),
                    Err(error) => return not_started(format!("start the scripted model: {error}")),
                }
            }
            None => None,
        };
        let endpoint = server.as_ref().map(ModelServer::endpoint);
        let input = RecipeInput {
            server_name: &launch.server_name,
            connection: &launch.connection,
            prompt: &launch.prompt,
            execution_id: &launch.execution_id,
            workspace,
            home: &home,
            model: endpoint.as_ref(),
            seat_env: &self.cli.env,
        };
        let exit = self.start_and_converse(&input, &launch, canaries.as_ref()).await;
        // The model goes with the CLI: a reply still held open ends here,
        // and nothing answers this turn again.
        if let Some(server) = server {
            server.close().await;
        }
        if let (Some(canaries), Some(model)) = (&canaries, &self.model) {
            self.record_what_moved(canaries, model, &launch.server_name, &exit);
        }
        exit
    }

    /// Puts in the witness log what the CLI's stream and its working
    /// folder show moved outside the envelope (the model has recorded
    /// what its requests carried).
    fn record_what_moved(&self, canaries: &Canaries, model: &ScriptedModel, server_name: &str, exit: &HarnessExit) {
        let stdout: &[String] = match exit {
            HarnessExit::Exited { stdout, .. } => stdout,
            _ => &[],
        };
        let own = own_calls(self.cli.vendor, server_name, stdout);
        let changed = canaries.changed();
        let mut log = model.witness.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        log.outside.own_calls = own;
        log.outside.changed = changed;
    }

    async fn start_and_converse(
        &self,
        input: &RecipeInput<'_>,
        launch: &HarnessLaunch,
        canaries: Option<&Canaries>,
    ) -> HarnessExit {
        let not_started = |detail: String| HarnessExit::NotStarted { detail };
        let mut recipe = match mcp_recipe(self.cli.vendor, input) {
            Ok(recipe) => recipe,
            Err(error) => return not_started(error.to_string()),
        };
        recipe.env.extend(canaries.map(Canaries::variable));
        for file in &recipe.files {
            let path = input.workspace.join(&file.name);
            let written = path
                .parent()
                .map_or(Ok(()), private_folder)
                .and_then(|()| write_private(&path, file.contents.as_bytes()));
            if let Err(error) = written {
                return not_started(format!("write {}: {error}", file.name));
            }
        }
        let process = match HarnessProcess::start(&self.launch(&recipe, &input.home.work), launch.signal.clone()) {
            Ok(process) => process,
            Err(TransportError::Aborted(_)) => return HarnessExit::Stopped,
            Err(error) => return not_started(error.to_string()),
        };
        let exit = self.converse(&process, &recipe, launch).await;
        process.dispose().await;
        // The files the recipe wrote (one holds the bearer token) go now, on
        // their own: a process the CLI left behind outside its group may
        // still be writing into its home when the workspace is removed.
        for file in &recipe.files {
            let _ = std::fs::remove_file(input.workspace.join(&file.name));
        }
        exit
    }

    /// Writes the recipe's stdin, reads the CLI's stdout until it closes,
    /// and reports how it exited.
    async fn converse(&self, process: &HarnessProcess, recipe: &McpRecipe, launch: &HarnessLaunch) -> HarnessExit {
        let signal = &launch.signal;
        if let Some(line) = &recipe.stdin {
            // An early exit shows in the exit code; the write's own error adds nothing.
            let _ = process.write_line(line, signal.clone()).await;
        }
        if !recipe.keep_stdin_open {
            process.end_input().await;
        }
        // The reader that grades the turn, run as lines come to see its end.
        let mut reader = self.cli.vendor.live_reader();
        let mut stdout: Vec<String> = Vec::new();
        let mut ended = false;
        let mut stderr_seen = process.diagnostics().stderr_bytes;
        loop {
            let idle = !process.input_ended();
            let next = process.next_frame(signal.clone());
            let next = if idle {
                match tokio::time::timeout(self.cli.idle_timeout, next).await {
                    Ok(next) => next,
                    Err(_) => {
                        // Silence on stdout; stderr output still counts as activity.
                        let stderr_now = process.diagnostics().stderr_bytes;
                        if stderr_now == stderr_seen {
                            process.end_input().await;
                        }
                        stderr_seen = stderr_now;
                        continue;
                    }
                }
            } else {
                next.await
            };
            match next {
                Ok(Some(frame)) => {
                    let retry_follows = recipe.cli_retries && retry_follows(&frame);
                    let line = Value::Object(frame).to_string();
                    let open = matches!(reader.outcome(), LiveOutcome::NoOutcome);
                    let _ = reader.read_line(stdout.len() + 1, &line);
                    // The line that ends the turn; but Pi, its retries on,
                    // goes back on an ending after a transient failure: its
                    // stdin stays open for the retry.
                    let terminal = open && !matches!(reader.outcome(), LiveOutcome::NoOutcome) && !retry_follows;
                    stdout.push(line);
                    if terminal && !ended {
                        // The first ending closes stdin: a session CLI exits on it (D50).
                        ended = true;
                        process.end_input().await;
                    }
                }
                Ok(None) => break,
                Err(TransportError::Aborted(_)) => return HarnessExit::Stopped,
                // Past its deadline or its cap on stray lines: it was killed,
                // and its exit says so.
                Err(_) => break,
            }
        }
        let exited = tokio::select! {
            exited = process.exited() => exited,
            () = signal.aborted() => return HarnessExit::Stopped,
        };
        let code = exited.and_then(|report| report.code).unwrap_or(-1);
        HarnessExit::Exited { code, stdout }
    }
}

impl McpHarness for LiveHarness {
    fn id(&self) -> &str {
        self.cli.vendor.id()
    }

    fn transport(&self) -> Transport {
        self.cli.transport
    }

    fn run(&self, launch: HarnessLaunch) -> LocalBoxFuture<'_, HarnessExit> {
        Box::pin(self.run_cli(launch))
    }
}

/// Whether `command` can be started: a path that exists, or a name found on
/// `path` (the harness's `PATH`).
#[must_use]
pub fn command_available(command: &str, path: Option<&std::ffi::OsStr>) -> bool {
    if command.contains('/') {
        return Path::new(command).is_file();
    }
    path.is_some_and(|path| std::env::split_paths(path).any(|dir| dir.join(command).is_file()))
}

/// How long a CLI may take to print its version.
const VERSION_TIMEOUT: Duration = Duration::from_secs(20);

/// The first line `command --version` prints on stdout, or else on stderr
/// (where Pi prints it), run with only `env` and in a home of its own,
/// deleted afterwards (with no home, a CLI falls back on the user's real
/// one and writes there); `None` when it cannot be started, fails, prints
/// nothing or takes too long.
/// Nothing it starts outlives the probe: it runs in a group of its own,
/// killed once it has exited or run out of time, and its stdout is read
/// on a thread of its own, so a process it left behind holding stdout
/// open holds up nothing.
#[must_use]
pub fn cli_version(vendor: Vendor, command: &str, env: &BTreeMap<String, String>) -> Option<String> {
    use std::os::unix::fs::PermissionsExt as _;
    let private = std::fs::Permissions::from_mode(0o700);
    let folder = tempfile::Builder::new().prefix("sharedos-probe-").permissions(private).tempdir().ok()?;
    let home = TurnHome::make(folder.path()).ok()?;
    let mut env = env.clone();
    env.extend(home_variables(vendor, &home));
    probe_version(command, &env)
}

fn probe_version(command: &str, env: &BTreeMap<String, String>) -> Option<String> {
    use std::os::unix::process::CommandExt as _;
    use std::process::{Command, Stdio};
    let mut child = Command::new(command)
        .arg("--version")
        .env_clear()
        .envs(env)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .spawn()
        .ok()?;
    let stdout = child.stdout.take().map(read_on_a_thread);
    let stderr = child.stderr.take().map(read_on_a_thread);
    let started = std::time::Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Some(status),
            Ok(None) if started.elapsed() < VERSION_TIMEOUT => std::thread::sleep(Duration::from_millis(20)),
            _ => break None,
        }
    };
    // As the drivers' pump does: the group outlives its leader while any
    // member lives, so its id reaches no stranger's group.
    if let Some(group) = i32::try_from(child.id()).ok().and_then(rustix::process::Pid::from_raw) {
        let _ = rustix::process::kill_process_group(group, rustix::process::Signal::KILL);
    }
    let _ = child.kill();
    let _ = child.wait();
    let status = status?;
    let first_line = |printed: Option<std::sync::mpsc::Receiver<String>>| {
        let text = printed?.recv_timeout(VERSION_TIMEOUT.saturating_sub(started.elapsed())).ok()?;
        text.lines().map(str::trim).find(|line| !line.is_empty()).map(str::to_string)
    };
    // Pi prints its version on stderr; Codex may warn there first.
    let line = first_line(stdout).or_else(|| first_line(stderr))?;
    status.success().then_some(line)
}

/// What `pipe` gives, up to 4 KiB, read on a thread of its own so that a
/// process left holding it open holds up nothing.
fn read_on_a_thread(pipe: impl std::io::Read + Send + 'static) -> std::sync::mpsc::Receiver<String> {
    use std::io::Read as _;
    let (sent, printed) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut bytes = Vec::new();
        let _ = pipe.take(4096).read_to_end(&mut bytes);
        let _ = sent.send(String::from_utf8_lossy(&bytes).into_owned());
    });
    printed
}
