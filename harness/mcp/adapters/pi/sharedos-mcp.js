// sharedos-mcp.js: a minimal MCP client extension for Pi (@mariozechner/pi-coding-agent 0.73.1).
//
// Why this file exists: Pi has no built-in MCP client, and every published `pi-mcp-adapter`
// imports `@earendil-works/pi-*`, which Pi 0.73.1 is not. Shimmed onto 0.73.1 the published
// adapter (2.11.0) does load, but it registers real tools only from a metadata cache written
// by an earlier run (a fresh agent dir gets a single `mcp` proxy tool), keeps the dots in
// their names (`sharedos_files.read`, outside the tool-name pattern model APIs allow), rewrites error text,
// and brings ~100 MB of dependencies. This extension does the one thing the harness needs:
//
//   * reads `.mcp.json` in the working directory (or the file named by SHAREDOS_MCP_CONFIG):
//       {"mcpServers": {"sharedos": {"url": "http://127.0.0.1:PORT/mcp",
//                                    "headers": {"Authorization": "Bearer TOKEN"},
//                                    "requestTimeoutMs": 60000}}}
//     (`bearerToken: "TOKEN"` is accepted as a shorthand for that header);
//   * speaks MCP streamable HTTP with Node's standard library only (global fetch):
//     initialize, notifications/initialized, tools/list, tools/call; answers may be
//     `application/json` or `text/event-stream`; the `mcp-session-id` header is kept;
//   * before Pi starts (the factory is async and Pi awaits it), registers every served tool
//     as a real Pi tool named `<server>_<tool with dots as underscores>`, e.g.
//     `sharedos_files_read`, with the server's inputSchema as its parameters;
//   * returns the MCP result's text as the tool result, and throws (Pi's only way to mark a
//     tool error, sent to the model as `is_error: true`) on `isError: true`, a JSON-RPC
//     error, an HTTP error, or a timeout.
//
// Load it with `pi -e /path/to/sharedos-mcp.js` (add `--no-builtin-tools` so that only
// these tools reach the model).

import { readFileSync } from "node:fs";
import { resolve } from "node:path";

const PROTOCOL_VERSION = "2025-06-18";
const DEFAULT_TIMEOUT_MS = 60_000;

class McpHttpClient {
  constructor(name, url, headers, timeoutMs) {
    Object.assign(this, { name, url, headers, timeoutMs, sessionId: undefined, protocol: undefined, nextId: 1 });
  }

  async post(message, signal) {
    const headers = {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      ...this.headers,
    };
    if (this.sessionId) headers["mcp-session-id"] = this.sessionId;
    if (this.protocol) headers["mcp-protocol-version"] = this.protocol;
    const res = await fetch(this.url, { method: "POST", headers, body: JSON.stringify(message), signal });
    const session = res.headers.get("mcp-session-id");
    if (session) this.sessionId = session;
    if (!res.ok) {
      const text = await res.text().catch(() => "");
      throw new Error(`MCP server ${this.name}: HTTP ${res.status} ${text}`.trim());
    }
    return res;
  }

  async request(method, params, { signal, timeoutMs = this.timeoutMs } = {}) {
    const id = this.nextId++;
    const timeout = AbortSignal.timeout(timeoutMs);
    const both = signal ? AbortSignal.any([signal, timeout]) : timeout;
    try {
      const res = await this.post({ jsonrpc: "2.0", id, method, params }, both);
      const reply = await this.readReply(res, id);
      if (reply.error) throw new Error(`MCP error ${reply.error.code}: ${reply.error.message}`);
      return reply.result;
    } catch (err) {
      if (!both.aborted) throw err;
      // Tell the server to stop working on it (best effort), then report why we gave up.
      this.notify("notifications/cancelled", { requestId: id, reason: "client gave up" }).catch(() => {});
      if (timeout.aborted) throw new Error(`MCP ${method} timed out after ${timeoutMs} ms`);
      throw new Error(`MCP ${method} aborted`);
    }
  }

  async notify(method, params) {
    const res = await this.post({ jsonrpc: "2.0", method, ...(params ? { params } : {}) }, AbortSignal.timeout(5_000));
    await res.body?.cancel();
  }

  // The answer to request `id`: a JSON body, or the matching message of an SSE stream
  // (server notifications and requests sent before it on that stream are skipped).
  async readReply(res, id) {
    const type = res.headers.get("content-type") ?? "";
    if (!type.includes("text/event-stream")) {
      const body = await res.json();
      const found = [body].flat().find((m) => m && m.id === id);
      if (!found) throw new Error(`MCP server ${this.name}: no reply to request ${id}`);
      return found;
    }
    const decoder = new TextDecoder();
    let buffer = "";
    for await (const chunk of res.body) {
      buffer += decoder.decode(chunk, { stream: true }).replace(/\r\n?/g, "\n");
      let end;
      while ((end = buffer.indexOf("\n\n")) !== -1) {
        const event = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const data = event
          .split("\n")
          .filter((line) => line.startsWith("data:"))
          .map((line) => line.slice(5).replace(/^ /, ""))
          .join("\n");
        if (!data) continue;
        const message = JSON.parse(data);
        if (message.id === id && ("result" in message || "error" in message)) {
          await res.body.cancel().catch(() => {});
          return message;
        }
      }
    }
    throw new Error(`MCP server ${this.name}: stream ended without a reply to request ${id}`);
  }

  async connect() {
    const init = await this.request("initialize", {
      protocolVersion: PROTOCOL_VERSION,
      capabilities: {},
      clientInfo: { name: "sharedos-pi-mcp", version: "1.0.0" },
    });
    this.protocol = init.protocolVersion ?? PROTOCOL_VERSION;
    await this.notify("notifications/initialized");
    const tools = [];
    let cursor;
    do {
      const page = await this.request("tools/list", cursor ? { cursor } : {});
      tools.push(...(page.tools ?? []));
      cursor = page.nextCursor;
    } while (cursor);
    return tools;
  }

  close() {
    if (!this.sessionId) return Promise.resolve();
    const headers = { ...this.headers, "mcp-session-id": this.sessionId };
    return fetch(this.url, { method: "DELETE", headers, signal: AbortSignal.timeout(1_000) }).catch(() => {});
  }
}

// Pi sends tool names to the model as they are; model APIs accept only [a-zA-Z0-9_-], 64 long at most.
const piToolName = (server, tool) => `${server}_${tool}`.replace(/[^a-zA-Z0-9_-]/g, "_").slice(0, 64);

const resultText = (result) =>
  (result.content ?? [])
    .map((item) => (item.type === "text" ? item.text : JSON.stringify(item)))
    .join("\n");

export default async function sharedosMcp(pi) {
  const configPath = resolve(process.env.SHAREDOS_MCP_CONFIG ?? ".mcp.json");
  const config = JSON.parse(readFileSync(configPath, "utf8"));
  const clients = [];
  for (const [name, server] of Object.entries(config.mcpServers ?? {})) {
    if (!server.url) continue; // stdio servers are not this extension's business
    const headers = { ...server.headers };
    if (server.bearerToken) headers.authorization = `Bearer ${server.bearerToken}`;
    const client = new McpHttpClient(name, server.url, headers, server.requestTimeoutMs ?? DEFAULT_TIMEOUT_MS);
    clients.push(client);
    for (const tool of await client.connect()) {
      pi.registerTool({
        name: piToolName(name, tool.name),
        label: `${name}: ${tool.name}`,
        description: tool.description ?? tool.name,
        // Pi validates arguments against plain JSON Schema too (no TypeBox needed).
        parameters: tool.inputSchema ?? { type: "object", properties: {} },
        async execute(_toolCallId, params, signal) {
          const result = await client.request("tools/call", { name: tool.name, arguments: params ?? {} }, { signal });
          const text = resultText(result);
          if (result.isError) throw new Error(text || `${tool.name} failed`);
          return { content: [{ type: "text", text }], details: { server: name, tool: tool.name } };
        },
      });
    }
  }
  pi.on("session_shutdown", () => Promise.all(clients.map((c) => c.close())));
}
