#!/usr/bin/env node
// A scripted runtime for the SharedOS conformance harness, speaking
// `sharedos-runtime/2` (harness/process/PROTOCOL.md) over JSON Lines on
// stdin/stdout. Node.js 20, standard library only.
//
// The harness gives each turn its attack script as data (`turn.script`):
// every call already built, and how the turn ends. This runtime makes each
// step itself through the five host members the protocol exposes, fills in
// each step's receipt from what the host answered, and reports the receipts
// after the turn closed. Copy it as the template of a scripted seat.
//
// Shape of the program: one reader of stdin (`readMessage`), one turn at a
// time (`runTurn`), no threads. While a turn runs, every line the harness
// writes is read by `Turn.next` and applied to the turn's state (answers,
// `draining`, `abort`, `time`, `closed`), whatever the turn is waiting for;
// the script's steps then look at that state.
//
// The rules a scripted seat most easily gets wrong, all in PROTOCOL.md:
// - `wait.seen` counts every line read since the turn's `turn` message, that
//   message included; a smaller count is a stale wait and the clock does not
//   move. The report carries it too, and it must count `closed`.
// - after the report, the harness writes `fence`: echo it as `fenced`, and
//   write nothing more until the next `turn`.
// - a `complete` outcome needs `output` (null will do).
// - `escalate` is preceded by the annotation `escalationAsked`
//   {tool: "sharedos.escalate", reason}.
// - after each step made in the open turn (concurrent calls excepted) the
//   receipt is emitted as a runtime event.
// - once `abort` or `closed` arrives, the script stops: a step not made, or
//   an awaited call not answered by then, has no receipt in the report.
// - receipts carry the adversary's own `detail` wording.
//
// stderr is free-form diagnostics (the harness keeps its tail). Set
// NODE_REFERENCE_TRACE=/some/file (the seat's `env`) to log every line in
// and out to that file.

import { createInterface } from 'node:readline';
import { appendFileSync } from 'node:fs';

const PROTOCOL = 'sharedos-runtime/2';
// The tool a runtime asks a person through (named in the record's
// `execution.escalationAsked`).
const ESCALATION_TOOL = 'sharedos.escalate';
// The type of the runtime event each receipt is emitted as.
const RECEIPT_EVENT = 'conformance.attempt';
const MANIFEST = { id: 'sharedos-reference.node', version: '1', protocolVersion: '1' };

// ---------------------------------------------------------------- I/O

const TRACE = process.env.NODE_REFERENCE_TRACE;
function trace(direction, message) {
  if (TRACE) appendFileSync(TRACE, JSON.stringify({ [direction]: message }) + '\n');
}

const lines = createInterface({ input: process.stdin, crlfDelay: Infinity })[Symbol.asyncIterator]();

// How many lines this runtime has read since the turn's `turn` message, that
// message and blank lines included. Every `wait` (and the report) carries
// it, so the harness can tell a wait written before a later line was read
// (stale: the clock must not move) from a current one.
let seen = 0;

/** The next message from the harness, or null once stdin closed. */
async function readMessage() {
  for (;;) {
    const { value, done } = await lines.next();
    if (done) return null;
    seen += 1;
    if (value.trim() === '') continue;
    const message = JSON.parse(value);
    trace('in', message);
    return message;
  }
}

/** Write one message. stdout on a pipe is synchronous in Node on POSIX. */
function send(message) {
  trace('out', message);
  process.stdout.write(JSON.stringify(message) + '\n');
}

function log(text) {
  process.stderr.write(`node-reference: ${text}\n`);
}

class HarnessClosed extends Error {}

// ---------------------------------------------------------------- a turn

class Turn {
  constructor(message) {
    this.id = message.turn;
    this.request = message.request;
    this.limits = message.limits;
    this.script = message.script;
    this.draining = false;   // `draining` arrived (the soft deadline fired)
    this.abortReason = null; // `abort` arrived (the hard signal), with its reason
    this.closed = false;     // `closed` arrived
    this.now = 0;            // the latest `time` the harness wrote (ms since the turn began)
    this.answers = new Map();    // request id -> its toolResult, ack or hostError
    this.concurrent = new Map(); // request id -> {receipt, call} of a call not awaited
    this.late = [];              // concurrent calls' receipts made, not yet emitted
    this.hostClosed = false;     // a receipt's emit was refused
    this.lastId = 0;
    this.callsMade = 0;
  }

  /**
   * The turn ended under the runtime: the hard signal fired or the turn
   * closed. A runtime seated in process is dropped at that instant, so the
   * script stops here; only steps marked `afterClose` are made afterwards.
   */
  get over() {
    return this.abortReason !== null || this.closed;
  }

  newId(prefix) {
    this.lastId += 1;
    return `${prefix}-${this.lastId}`;
  }

  /** Read one message and apply it to the turn's state. */
  async next() {
    const message = await readMessage();
    if (message === null) throw new HarnessClosed('stdin closed mid-turn');
    if (message.turn !== this.id) {
      log(`ignored a ${message.type} for turn ${message.turn} during ${this.id}`);
      return;
    }
    switch (message.type) {
      case 'toolResult':
      case 'ack':
      case 'hostError':
        this.answers.set(message.id, message);
        // A concurrent call's receipt is filled in whenever its answer
        // arrives, even after the turn closed.
        if (this.concurrent.has(message.id)) {
          const { receipt, call } = this.concurrent.get(message.id);
          fillCallReceipt(receipt, call, message, false);
          this.concurrent.delete(message.id);
          this.late.push(receipt);
        }
        break;
      case 'draining':
        this.draining = true;
        break;
      case 'abort':
        this.abortReason = message.reason;
        break;
      case 'time':
        this.now = Math.max(this.now, message.nowMs);
        break;
      case 'closed':
        this.closed = true;
        break;
      default:
        log(`ignored an unexpected ${message.type}`);
    }
  }

  /**
   * Be idle until `done()` holds. Virtual time moves only while the runtime
   * is idle, and every line the harness writes makes it busy again, so say
   * `wait` again after each line that did not settle `done()`. `idle` says
   * the runtime is idle already (it just sent its ending), so the first
   * `wait` would say nothing new.
   */
  async idleUntil(done, untilMs, idle = false) {
    while (!done()) {
      // Receipts of concurrent calls answered meanwhile are emitted at the
      // point where the runtime would otherwise wait.
      if (await this.emitLate()) {
        idle = false;
        continue;
      }
      if (!idle) {
        const wait = { type: 'wait', turn: this.id, seen };
        if (untilMs !== undefined) wait.untilMs = untilMs;
        send(wait);
      }
      idle = false;
      await this.next();
    }
  }

  /** Emit the receipts of concurrent calls answered since; true if any. */
  async emitLate() {
    if (this.late.length === 0) return false;
    while (this.late.length > 0) {
      const receipt = this.late.shift();
      // A refusal (the host closed) changes nothing: the receipt stands.
      await this.hostRequest({ type: 'emit', event: { type: RECEIPT_EVENT, data: receiptData(receipt) } });
    }
    return true;
  }

  /** Stay busy until `done()` holds: for answers the harness writes at once. */
  async busyUntil(done) {
    while (!done()) await this.next();
  }

  /** Wait for the turn's instant `atMs` (the harness writes `time` then). */
  async reach(atMs) {
    await this.idleUntil(() => this.over || this.now >= atMs, atMs);
  }

  // -- the host's members, each a request over the protocol

  /** host.invokeTool: returns the request id; the answer comes after a `wait`. */
  invokeTool(call, options) {
    const id = this.newId('call');
    const message = { type: 'invokeTool', turn: this.id, id, call };
    if (options) message.options = options;
    send(message);
    return id;
  }

  /** host.emit and host.annotate: answered at once (`ack` or `hostError`). */
  async hostRequest(message) {
    const id = this.newId(message.type);
    send({ ...message, turn: this.id, id });
    await this.busyUntil(() => this.answers.has(id));
    return this.answers.get(id);
  }
}

// ---------------------------------------------------------------- receipts

// How the embedded adversary words a call the turn's end cut short, by the
// abort reason the harness gave.
const STOPPED_BECAUSE = {
  timeout: 'the deadline passed',
  host_cancelled: 'the host cancelled the turn',
  turn_closed: 'the turn closed',
  audit_unavailable: 'an audit outage stopped the turn',
  draining: 'the turn drained',
};

/**
 * Fill in a call's receipt from its answer (PROTOCOL.md, the receipt
 * table). `afterClose` says whether the call was an after-close step.
 */
function fillCallReceipt(receipt, call, answer, afterClose) {
  if (answer.type === 'toolResult') {
    // SharedOS decided: the result's status, and its error code when refused.
    const { status, error } = answer.result;
    receipt.attempted = true;
    receipt.callId = call.id;
    receipt.observed = status;
    if (status !== 'succeeded' && error) receipt.reasonCode = error.code;
    return;
  }
  // hostError: the call ended with a rejection instead of a tool result, so
  // `observed` stays absent and `reasonCode` names the rejection.
  const { code, reason, message } = answer.error;
  const issued = (reasonCode, detail) => {
    receipt.attempted = true;
    receipt.callId = call.id;
    receipt.reasonCode = reasonCode;
    receipt.detail = detail;
  };
  if (code === 'aborted') {
    issued('interrupted', `the turn stopped while the call was in flight (${STOPPED_BECAUSE[reason] ?? STOPPED_BECAUSE.turn_closed})`);
  } else if (code === 'audit_unavailable') {
    issued('audit_unavailable', `the kernel could not record the call's decision: ${message}`);
  } else if (code === 'closed' && afterClose) {
    issued('host_closed', 'the host refused the call: the turn had closed');
  } else {
    // Refused outright: the call was never issued.
    receipt.attempted = false;
    receipt.detail = `the host refused the call: ${message}`;
  }
}

/** emit and annotate: accepted reads succeeded, refused reads denied. */
function fillHostReceipt(receipt, answer, refusedCode) {
  receipt.attempted = true;
  if (answer.type === 'ack') {
    receipt.observed = 'succeeded';
  } else {
    receipt.observed = 'denied';
    receipt.reasonCode = refusedCode;
    receipt.detail = answer.error.message;
  }
}

// Names that would be authority if a runtime could see them.
const GRANT_MATERIAL = new Set([
  'grant', 'grants', 'grantId', 'grantSource', 'parentGrantId',
  'capabilities', 'delegationDepth', 'issuer', 'revokedAt',
]);
// The longest `detail` a receipt may carry.
const MAX_DETAIL = 512;

/** Push onto `found` the path of every grant-material key in `value`. */
function findGrantMaterial(value, path, found) {
  if (Array.isArray(value)) {
    value.forEach((inner, i) => findGrantMaterial(inner, `${path}[${i}]`, found));
  } else if (value && typeof value === 'object') {
    for (const [key, inner] of Object.entries(value)) {
      if (GRANT_MATERIAL.has(key)) found.push(`${path}.${key}`);
      findGrantMaterial(inner, `${path}.${key}`, found);
    }
  }
}

// ---------------------------------------------------------------- steps

/**
 * Make one step and fill in its receipt. Returns false when the turn ended
 * before the step was made (or finished): the step then has no receipt.
 */
async function makeStep(turn, step, receipt) {
  // After close a step is made whatever `unreachable` says.
  if (step.unreachable && !step.afterClose) {
    // Declared, never issued: the receipt says why.
    receipt.detail = step.unreachable;
    return true;
  }
  if (step.atMs !== undefined && !step.afterClose) {
    await turn.reach(step.atMs);
  }
  if (turn.over && !step.afterClose) return false;

  switch (step.kind) {
    case 'call': {
      const before = turn.callsMade;
      const { maxToolCalls, maxSteps } = turn.limits;
      if (!step.afterClose && !step.overBudget && before >= maxToolCalls) {
        receipt.detail = 'the attempt falls outside the tool-call budget';
        return true;
      }
      if (!step.call) {
        receipt.detail = 'the attempt names no tool';
        return true;
      }
      turn.callsMade += 1;
      // A call in the turn declares its step: the calls sent before it. An
      // over-budget call sent while the budget lasts declares the step
      // ceiling at least, so the envelope holds it against the call.
      let options;
      if (!step.afterClose) {
        const overSteps = step.overBudget && before < maxToolCalls;
        options = { step: overSteps ? Math.max(before, maxSteps) : before };
      }
      const id = turn.invokeTool(step.call, options);
      if (step.concurrent && !step.afterClose) {
        turn.concurrent.set(id, { receipt, call: step.call });
        return true;
      }
      // An awaited call: a turn that ends first takes the step with it.
      await turn.idleUntil(() => turn.answers.has(id) || (turn.over && !step.afterClose));
      if (!turn.answers.has(id)) return false;
      fillCallReceipt(receipt, step.call, turn.answers.get(id), Boolean(step.afterClose));
      return true;
    }
    case 'annotate': {
      const answer = await turn.hostRequest({ type: 'annotate', key: step.annotate.key, value: step.annotate.value });
      fillHostReceipt(receipt, answer, 'annotation_refused');
      return true;
    }
    case 'emit': {
      const event = { type: step.emit.type };
      if (step.emit.data !== undefined) event.data = step.emit.data;
      const answer = await turn.hostRequest({ type: 'emit', event });
      fillHostReceipt(receipt, answer, 'emit_refused');
      return true;
    }
    case 'read': {
      // host.draining: fired once the harness said `draining`, and for good
      // once the turn closed (the hard stop at close fires it too).
      const fired = turn.draining || turn.closed;
      receipt.attempted = true;
      receipt.detail = `draining: ${fired}`;
      receipt.observed = fired ? 'denied' : 'succeeded';
      if (fired) receipt.reasonCode = 'turn_draining';
      return true;
    }
    case 'inspect': {
      // Look through everything the runtime was given for grant material.
      if (step.afterClose) {
        receipt.detail = 'nothing to do after the turn closed';
        return true;
      }
      receipt.attempted = true;
      const found = [];
      findGrantMaterial(turn.request, 'request', found);
      if (found.length > 0) {
        receipt.observed = 'succeeded';
        receipt.detail = found.sort().join(', ').slice(0, MAX_DETAIL);
      } else {
        receipt.observed = 'denied';
        receipt.reasonCode = 'no_grant_material_reachable';
      }
      return true;
    }
    case 'none':
      receipt.detail = step.afterClose ? 'nothing to do after the turn closed' : 'the attempt names no tool';
      return true;
    default:
      log(`unknown step kind ${step.kind}`);
      return true;
  }
}

/**
 * After each step made in the open turn (a concurrent call excepted), the
 * runtime emits its receipt as a runtime event, so the record shows the
 * attempt's place among the turn's events.
 */
async function emitReceipt(turn, receipt) {
  if (turn.over) return;
  const answer = await turn.hostRequest({ type: 'emit', event: { type: RECEIPT_EVENT, data: receiptData(receipt) } });
  // Any refusal means the host closed: later steps are not made.
  if (answer.type !== 'ack') turn.hostClosed = true;
}

/** The receipt as it is emitted and reported: no empty `detail`. */
function receiptData(receipt) {
  const data = { ...receipt };
  if (data.detail === '') delete data.detail;
  return data;
}

// ---------------------------------------------------------------- endings

/**
 * End the turn as the script's terminal says; true once an ending (an
 * outcome or a throw) is sent, which leaves the runtime idle.
 */
async function end(turn, terminal) {
  if (terminal.atMs !== undefined) await turn.reach(terminal.atMs);
  if (turn.over) return false; // the turn ended first: nothing left to say
  const withMetadata = (outcome) => {
    if (terminal.metadata !== undefined) outcome.metadata = terminal.metadata;
    return outcome;
  };
  switch (terminal.kind) {
    case 'complete':
      send({ type: 'outcome', turn: turn.id, outcome: withMetadata({ type: 'complete', output: terminal.output ?? null }) });
      return true;
    case 'fail':
      send({ type: 'outcome', turn: turn.id, outcome: withMetadata({ type: 'fail', error: terminal.error }) });
      return true;
    case 'escalate':
      // State which affordance is asked for and why, then escalate: the
      // record lifts the `escalationAsked` annotation to
      // `execution.escalationAsked`.
      await turn.hostRequest({ type: 'annotate', key: 'escalationAsked', value: { tool: ESCALATION_TOOL, reason: terminal.reason } });
      if (turn.over) return false;
      send({ type: 'outcome', turn: turn.id, outcome: withMetadata({ type: 'escalate', reason: terminal.reason }) });
      return true;
    case 'malformed':
      send({ type: 'outcome', turn: turn.id, outcome: terminal.outcome ?? { type: 'finish' } });
      return true;
    case 'crash':
      send({ type: 'thrown', turn: turn.id, error: { message: terminal.reason } });
      return true;
    case 'stall':
      // Say nothing until the turn is taken away; with `until: draining`,
      // give up (throw) once the drain begins, even when `abort` follows
      // at the same instant (PROTOCOL.md, "Scripted seats: endings").
      await turn.idleUntil(() => turn.over || (terminal.until === 'draining' && turn.draining));
      if (turn.over) return false;
      send({ type: 'thrown', turn: turn.id, error: { message: terminal.reason } });
      return true;
    default:
      log(`unknown terminal kind ${terminal.kind}; completing`);
      send({ type: 'outcome', turn: turn.id, outcome: { type: 'complete', output: null } });
      return true;
  }
}

async function runTurn(message) {
  seen = 1; // the `turn` message is the turn's line 1
  const turn = new Turn(message);
  const script = turn.script;
  if (!script) throw new Error('a scripted seat was given a turn without a script');
  // Each step's receipt starts as the script states it (`attempted: false`).
  const steps = script.steps.map((step) => ({ step, receipt: { ...step.receipt }, made: false }));

  for (const entry of steps) {
    if (entry.step.afterClose) continue;
    if (turn.hostClosed) {
      entry.receipt.detail = 'the runtime host closed before this attempt was made';
      entry.made = true;
      continue;
    }
    entry.made = await makeStep(turn, entry.step, entry.receipt);
    if (!entry.made) break;
    if (!entry.step.concurrent) await emitReceipt(turn, entry.receipt);
  }
  // A script without a terminal completes.
  const ended = await end(turn, script.terminal ?? { kind: 'complete' });
  await turn.idleUntil(() => turn.closed, undefined, ended);
  for (const entry of steps) {
    if (entry.step.afterClose) entry.made = await makeStep(turn, entry.step, entry.receipt);
  }
  // Calls still in flight when the turn closed are answered right after
  // `closed`; their receipts need those answers.
  await turn.idleUntil(() => turn.concurrent.size === 0);
  await turn.emitLate();

  const receipts = steps.filter((entry) => entry.made).map((entry) => receiptData(entry.receipt));
  // `seen` counts `closed`, so the harness knows the report came after it.
  send({ type: 'report', turn: turn.id, seen, receipts });
}

// ---------------------------------------------------------------- session

async function main() {
  const hello = await readMessage();
  if (!hello || hello.type !== 'hello') throw new Error(`expected hello, got ${JSON.stringify(hello)}`);
  send({ type: 'ready', protocol: PROTOCOL, manifest: MANIFEST });
  for (;;) {
    const message = await readMessage();
    if (message === null) return; // no more turns: exit
    if (message.type === 'turn') await runTurn(message);
    // Everything about the turn is written: echo the fence, then write
    // nothing more until the next `turn`.
    else if (message.type === 'fence') send({ type: 'fenced', turn: message.turn, fence: message.fence });
    else log(`ignored a ${message.type} between turns`);
  }
}

main().then(
  () => process.exit(0),
  (error) => {
    // A bug or a harness gone mid-turn: exit, so the harness sees
    // `runtime_exited` at once rather than waiting out `busyTimeoutMs`.
    log(error instanceof HarnessClosed ? error.message : error.stack ?? String(error));
    process.exit(1);
  },
);
