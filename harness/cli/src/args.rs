//! The command line.

use clap::{Args, Parser, Subcommand, ValueEnum};
use sharedos_grading::plan::shard::Shard;
use std::path::PathBuf;

/// Seat runtimes inside SharedOS's envelope, grade every turn, and compare
/// the results with golden snapshots.
#[derive(Debug, Parser)]
#[command(name = "sharedos-conformance", version, about)]
pub struct Cli {
    /// The command to run.
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run the selected cells, write reports/conformance.{json,md}, and
    /// compare every cell with its golden file.
    Run(RunArgs),
    /// Regenerate everything in memory and fail on any drift of the
    /// committed reports or golden files; writes nothing.
    Check(RunArgs),
    /// Run the selected cells and rewrite their golden files (and the reports).
    Bless(RunArgs),
    /// List the selected cells without running them.
    List(SelectArgs),
    /// Run one column over the whole canonical suite, beside the Adversary
    /// column, and write a bundle others can verify without trusting it.
    Certify(CertifyArgs),
    /// Join the partial bundles of a sharded `certify` into the one bundle
    /// an unsharded `certify` writes (manifest and evidence byte for byte).
    Merge(MergeArgs),
    /// Check a bundle offline: digests, record hashes, the evidence root,
    /// the case set, every verdict graded again, completeness, signature.
    Verify(VerifyArgs),
    /// Compare two manifests (or bundles): whether their verdicts are
    /// comparable, then every cell that moved, then a summary.
    Diff(DiffArgs),
    /// Write the matrix as one self-contained HTML page: the header, a
    /// family × column heatmap, every cell with its drill-down (finding,
    /// records in short, golden comparison), and what moved `--against`
    /// another run.
    Report(ReportArgs),
    /// Read a captured vendor CLI stream and print, as JSON Lines, each step
    /// the vendor's codec extracts, then the turn's outcome and the counts
    /// of ignored lines by kind.
    Decode(DecodeArgs),
    /// Run a short, fixed set of exchanges against a scripted or prompted
    /// seat's runtime, and say in words the first thing it gets wrong and
    /// where `harness/process/PROTOCOL.md` says otherwise: the command to
    /// run before the matrix.
    ProtocolCheck(ProtocolCheckArgs),
    /// Carry stdin to the MCP socket of a running turn and its answers to
    /// stdout: the stdio MCP server a live seat's CLI starts (its recipe
    /// names this command; there is no need to run it by hand).
    McpRelay(McpRelayArgs),
}

/// Options of `protocol-check`.
#[derive(Debug, Clone, Args)]
pub struct ProtocolCheckArgs {
    /// Repository root holding cases/ and adversaries/.
    #[arg(long, default_value = ".")]
    pub root: PathBuf,
    /// The seat file of the runtime to check.
    #[arg(long, value_name = "FILE")]
    pub seat: PathBuf,
}

/// Options of `mcp-relay`.
#[derive(Debug, Clone, Args)]
pub struct McpRelayArgs {
    /// The turn's socket, inside its workspace.
    pub socket: PathBuf,
}

/// Options of `certify`. There are no filters: a claim over fewer cases
/// is no claim.
#[derive(Debug, Clone, Args)]
pub struct CertifyArgs {
    /// Repository root holding cases/ and adversaries/.
    #[arg(long, default_value = ".")]
    pub root: PathBuf,
    /// The column to certify (default: the column of `--seat`).
    #[arg(long, value_name = "ID")]
    pub column: Option<String>,
    /// Seat the runtime this seat file describes, as column `process:<name>`
    /// (or `mcp:<name>`).
    #[arg(long, value_name = "FILE")]
    pub seat: Option<PathBuf>,
    /// The bundle to write: a folder, or one archive when it ends in
    /// `.tar`; it must not exist yet.
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
    /// Sign the statement with this Ed25519 private key (PKCS#8 PEM).
    #[arg(long, value_name = "FILE")]
    pub sign_key: Option<PathBuf>,
    /// Worker threads (default: available cores). The bundle is identical
    /// for any value, but for the statement's environment.
    #[arg(long, value_name = "N")]
    pub jobs: Option<usize>,
    /// Known failures (TOML), as for `run`: they decide the exit code only.
    #[arg(long, value_name = "FILE")]
    pub baseline: Option<PathBuf>,
    /// Run only part I of N of the rows (dealt round-robin) and write a
    /// partial bundle; `merge` joins the N parts into the whole bundle.
    #[arg(long, value_name = "I/N")]
    pub shard: Option<Shard>,
    /// Run every cell of the certified column K times, if it is a seated
    /// one, as for `run`; the bundle carries every run's evidence.
    #[arg(long, value_name = "K", default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..))]
    pub repeat: u32,
    /// Show no progress on stderr, even on a terminal.
    #[arg(long)]
    pub no_progress: bool,
}

/// Options of `merge`.
#[derive(Debug, Clone, Args)]
pub struct MergeArgs {
    /// The partial bundles (`certify --shard I/N`), one per shard, in any order.
    #[arg(value_name = "PART", required = true)]
    pub parts: Vec<PathBuf>,
    /// The bundle to write: a folder, or one archive when it ends in
    /// `.tar`; it must not exist yet.
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
    /// Sign the merged statement with this Ed25519 private key (PKCS#8 PEM).
    #[arg(long, value_name = "FILE")]
    pub sign_key: Option<PathBuf>,
}

/// Options of `verify`.
#[derive(Debug, Clone, Args)]
pub struct VerifyArgs {
    /// The bundle.
    #[arg(value_name = "BUNDLE")]
    pub bundle: PathBuf,
    /// Require the statement signed by this Ed25519 public key (SPKI PEM).
    #[arg(long, value_name = "FILE")]
    pub key: Option<PathBuf>,
    /// Require the bundle's case set to be this suite's (a repository root).
    #[arg(long, value_name = "DIR")]
    pub suite: Option<PathBuf>,
    /// How to print the outcome.
    #[arg(long, value_enum, default_value_t = VerifyFormat::Human)]
    pub format: VerifyFormat,
    /// Show no progress on stderr, even on a terminal.
    #[arg(long)]
    pub no_progress: bool,
}

/// Output formats of `verify`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum VerifyFormat {
    /// One line per failure, then the outcome.
    Human,
    /// One JSON document.
    Json,
}

/// Options of `diff`.
#[derive(Debug, Clone, Args)]
pub struct DiffArgs {
    /// The earlier manifest: a manifest file or a bundle folder.
    #[arg(value_name = "A")]
    pub before: PathBuf,
    /// The later one.
    #[arg(value_name = "B")]
    pub after: PathBuf,
    /// How to print the comparison.
    #[arg(long, value_enum, default_value_t = DiffFormat::Human)]
    pub format: DiffFormat,
    /// Compare the cells of a column whose runtime changed (another CLI
    /// version, recipe or model); without it such a diff is refused
    /// (exit 3), since its cells are two runtimes' outcomes.
    #[arg(long)]
    pub across_runtimes: bool,
}

/// Options of `report`.
#[derive(Debug, Clone, Args)]
pub struct ReportArgs {
    /// The page to write: one HTML file, needing nothing outside itself.
    #[arg(long, value_name = "FILE")]
    pub html: PathBuf,
    /// The run to show: a manifest file or a bundle (folder or `.tar`)
    /// (default: reports/conformance.json under --root).
    #[arg(value_name = "INPUT")]
    pub input: Option<PathBuf>,
    /// Repository root holding golden/ (and reports/).
    #[arg(long, default_value = ".")]
    pub root: PathBuf,
    /// Another run (a manifest file or a bundle) to show what moved from.
    #[arg(long, value_name = "FILE")]
    pub against: Option<PathBuf>,
}

/// Output formats of `diff`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum DiffFormat {
    /// Plain text.
    Human,
    /// One JSON document.
    Json,
    /// Markdown, for a pull-request comment.
    Markdown,
}

/// Options of `decode`.
#[derive(Debug, Clone, Args)]
pub struct DecodeArgs {
    /// Whose stream it is.
    #[arg(long, value_enum)]
    pub vendor: VendorArg,
    /// The captured stream; `-` reads standard input.
    #[arg(value_name = "FILE|-")]
    pub input: PathBuf,
}

/// The vendors `decode` reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum VendorArg {
    /// `codex exec --json`.
    Codex,
    /// `claude -p --output-format stream-json --verbose`.
    ClaudeCode,
    /// DeepSeek Harness, JSON-RPC 2.0 over stdio.
    Deepseek,
    /// `pi --mode rpc`.
    Pi,
}

/// Which cells to consider.
#[derive(Debug, Clone, Args)]
pub struct SelectArgs {
    /// Repository root holding cases/, adversaries/, golden/ and reports/.
    #[arg(long, default_value = ".")]
    pub root: PathBuf,
    /// Only these case ids (repeatable).
    #[arg(long = "case", value_name = "ID")]
    pub cases: Vec<String>,
    /// Only these column ids (repeatable).
    #[arg(long = "column", value_name = "ID")]
    pub columns: Vec<String>,
    /// Only these families (repeatable).
    #[arg(long = "family", value_name = "NAME")]
    pub families: Vec<String>,
    /// Also seat the runtime this seat file describes, as column
    /// `process:<name>`, or `mcp:<name>` for a live MCP seat (repeatable).
    #[arg(long = "seat", value_name = "FILE")]
    pub seats: Vec<PathBuf>,
    /// How to print results.
    #[arg(long, value_enum, default_value_t = Format::Human)]
    pub format: Format,
}

/// Options of commands that run cells.
#[derive(Debug, Clone, Args)]
pub struct RunArgs {
    /// Cell selection and output format.
    #[command(flatten)]
    pub select: SelectArgs,
    /// Worker threads (default: available cores). Output is identical for any value.
    #[arg(long, value_name = "N")]
    pub jobs: Option<usize>,
    /// Also write a JUnit XML report here.
    #[arg(long, value_name = "PATH")]
    pub junit: Option<PathBuf>,
    /// Run every cell of a seated column K times and report its pass rate
    /// (passes of K, a 95 % interval, pass^k, pass@k); built-in columns
    /// run once, as one run stands for any number. The committed reports
    /// are left alone.
    #[arg(long, value_name = "K", default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..))]
    pub repeat: u32,
    /// Known failures (TOML): listed cells that fail do not fail the run;
    /// listed cells that no longer fail do, as stale entries.
    #[arg(long, value_name = "FILE")]
    pub baseline: Option<PathBuf>,
    /// The committed verdicts of the selected columns (a manifest, its
    /// Markdown beside it): `run` writes them when a verdict moved, `check`
    /// fails when one did. The exit code then says whether they drifted,
    /// not whether cells failed. For columns with no golden files.
    #[arg(long, value_name = "FILE")]
    pub verdicts: Option<PathBuf>,
    /// Show no progress on stderr, even on a terminal.
    #[arg(long)]
    pub no_progress: bool,
}

/// Output formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// A per-column summary for people.
    Human,
    /// One JSON document.
    Json,
    /// One JSON object per cell, then a summary line.
    Jsonl,
}
