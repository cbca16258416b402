/**
 * `agent-wallet mcp`: a stdio MCP server over src/client (DESIGN §1, §11). It uses the SDK's
 * low-level `Server` so the tools' input schemas are the contract's TypeBox schemas as they are
 * (TypeBox schemas are JSON Schema; `registerTool` would want zod shapes). Configured like the
 * CLI: AGENT_WALLET_URL, AGENT_WALLET_PROFILE, AGENT_WALLET_HOME, AGENT_WALLET_PASSPHRASE (or
 * --server, --profile, --home). stdout is the protocol channel: logs go to stderr only.
 */
import { resolve } from 'node:path';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import {
  CallToolRequestSchema,
  ErrorCode,
  ListResourcesRequestSchema,
  ListToolsRequestSchema,
  McpError,
  ReadResourceRequestSchema,
  type CallToolResult,
  type Tool,
} from '@modelcontextprotocol/sdk/types.js';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import { ApiError } from '../client/api.ts';
import { ProfileError } from '../client/profile.ts';
import { commandFlags, type CliContext } from '../cli/context.ts';
import { createLogger, type Level, type Logger } from '../log.ts';
import { VERSION } from '../version.ts';
import { ToolError } from './errors.ts';
import { envelopeOf, failure, success } from './results.ts';
import { createSession, type Session } from './session.ts';
import { buildTools, type ToolDef } from './tools.ts';

export const STATUS_URI = 'agent-wallet://status';

const INSTRUCTIONS = `USDC wallet of this AI agent on Solana, under 2-of-2 FROST custody with the agent's key share kept locally.
Start with info (or register when there is no wallet yet; give the claim URL and code it returns to your human owner).
Before paying, lookup the recipient and can_i_afford the amount. pay moves money: it signs and submits when the owner's guard rails allow it at once; otherwise it returns awaiting_approval — wait with approval_status (wait_seconds) and then confirm_payment. Retry a failed pay with the idempotency_key it returned, never without it.
Errors come back with a code and how_to_fix. The resource ${STATUS_URI} summarises wallet, balance and pending approvals.`;

/** The MCP tool list entry of a tool. */
export function listedTool(t: ToolDef): Tool {
  return {
    name: t.name,
    title: t.title,
    description: t.description,
    inputSchema: t.jsonSchema,
    annotations: { title: t.title, ...t.hints },
    ...(t.action ? { _meta: { 'agent-wallet/action': t.action.name, 'agent-wallet/endpoint': t.action.endpoint } } : {}),
  };
}

/** Checks tool arguments against the tool's schema; the message names the field like the API's VALIDATION_ERROR. */
function validator(t: ToolDef): (args: Record<string, unknown>) => void {
  const check = TypeCompiler.Compile(t.input);
  return (args) => {
    if (check.Check(args)) return;
    const first = check.Errors(args).First();
    const where = first?.path || '/';
    throw new ToolError('VALIDATION_ERROR', `${where}: ${first?.message ?? 'invalid'}`, `Correct ${where} (see the input schema of ${t.name}) and call the tool again.`);
  };
}

/** wallet, balance and pending approvals in one JSON document; parts that fail carry their error. */
async function status(s: Session): Promise<Record<string, unknown>> {
  let api;
  try {
    api = s.wallet().api;
  } catch (err) {
    if (!(err instanceof ProfileError)) throw err;
    return { registered: false, profile: s.profileName, home: s.store.home, ...envelopeOf(err) };
  }
  const part = async (action: string) => {
    try {
      return await api.call<Record<string, unknown>>('bot', action);
    } catch (err) {
      if (err instanceof ApiError) return envelopeOf(err);
      throw err;
    }
  };
  const [wallet, balance, pending] = await Promise.all([part('info'), part('balance'), part('pending_approvals')]);
  return { registered: true, profile: s.profileName, wallet, balance, pending_approvals: pending };
}

/** The MCP server with every tool and the status resource; not yet connected. */
export function createMcpServer(session: ReturnType<typeof createSession>, tools = buildTools()): Server {
  const server = new Server(
    { name: 'agent-wallet', title: 'Agent Wallet', version: VERSION },
    { capabilities: { tools: {}, resources: {} }, instructions: INSTRUCTIONS },
  );
  const checks = new Map([...tools.values()].map((t) => [t.name, validator(t)]));
  const log = session.log;

  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: [...tools.values()].map(listedTool) }));

  server.setRequestHandler(CallToolRequestSchema, async (request, extra): Promise<CallToolResult> => {
    const { name, arguments: args = {} } = request.params;
    const tool = tools.get(name);
    if (!tool) throw new McpError(ErrorCode.InvalidParams, `unknown tool "${name}"; list the tools with tools/list`);
    const token = request.params._meta?.progressToken;
    let step = 0;
    const s = session.withProgress((message) => {
      if (token === undefined) return;
      void extra.sendNotification({ method: 'notifications/progress', params: { progressToken: token, progress: ++step, message } }).catch(() => {});
    });
    const started = Date.now();
    try {
      checks.get(name)!(args);
      const data = await tool.run(s, args);
      log.info('tool call', { tool: name, ok: true, ms: Date.now() - started });
      return success(name, data);
    } catch (err) {
      const envelope = envelopeOf(err);
      if (envelope.error.code === 'CLIENT_INTERNAL') log.error('tool failed unexpectedly', { tool: name, error: (err as Error)?.stack ?? String(err) });
      else log.info('tool call', { tool: name, ok: false, code: envelope.error.code, ms: Date.now() - started });
      return failure(err);
    }
  });

  server.setRequestHandler(ListResourcesRequestSchema, async () => ({
    resources: [
      {
        uri: STATUS_URI,
        name: 'status',
        title: 'Wallet status',
        description: "This agent's wallet (info), balance with budget and allowance, and everything waiting for the owner.",
        mimeType: 'application/json',
      },
    ],
  }));

  server.setRequestHandler(ReadResourceRequestSchema, async (request) => {
    if (request.params.uri !== STATUS_URI) throw new McpError(ErrorCode.InvalidParams, `unknown resource ${request.params.uri}; the only one is ${STATUS_URI}`);
    let doc: Record<string, unknown>;
    try {
      doc = await status(session);
    } catch (err) {
      doc = { ...envelopeOf(err) };
    }
    return { contents: [{ uri: STATUS_URI, mimeType: 'application/json', text: JSON.stringify(doc, null, 2) }] };
  });

  return server;
}

/** How an MCP host starts this server: the compiled binary itself, or bun with the absolute entry file it runs now (src/main.ts or a bundle of it). */
export function launchCommand(): { command: string; args: string[] } {
  const compiled = Bun.main.includes('$bunfs') || Bun.main.includes('~BUN');
  if (compiled) return { command: process.execPath, args: ['mcp'] };
  return { command: process.execPath, args: [resolve(Bun.main), 'mcp'] };
}

/** The JSON snippet MCP hosts (Claude Desktop, Cursor, …) take, for the current settings. */
export function hostConfig(ctx: CliContext, env: Record<string, string | undefined> = process.env): Record<string, unknown> {
  const serverEnv: Record<string, string> = {
    AGENT_WALLET_URL: ctx.server,
    AGENT_WALLET_PROFILE: ctx.profileName,
    AGENT_WALLET_HOME: resolve(ctx.store.home),
  };
  // Never print the passphrase itself; a placeholder shows where it goes.
  if (env.AGENT_WALLET_PASSPHRASE) serverEnv.AGENT_WALLET_PASSPHRASE = '<your profile passphrase>';
  return { mcpServers: { 'agent-wallet': { ...launchCommand(), env: serverEnv } } };
}

function stderrLogger(env: Record<string, string | undefined>): Logger {
  const level = (['debug', 'info', 'warn', 'error'] as const).find((l) => l === env.AGENT_WALLET_LOG_LEVEL) as Level | undefined;
  return createLogger({ level: level ?? 'info', write: (line) => process.stderr.write(line), base: { component: 'mcp' } });
}

/** Serves MCP on stdin/stdout until the host closes stdin (or SIGTERM/SIGINT); resolves to the exit code. */
async function serveStdio(ctx: CliContext, env: Record<string, string | undefined>): Promise<number> {
  const log = stderrLogger(env);
  const session = createSession(ctx, log);
  const server = createMcpServer(session);
  const closed = new Promise<void>((done) => {
    server.onclose = done;
  });
  await server.connect(new StdioServerTransport());
  const close = () => void server.close();
  process.stdin.once('end', close);
  process.stdin.once('close', close);
  process.once('SIGTERM', close);
  process.once('SIGINT', close);
  if (process.stdout.isTTY) process.stderr.write('agent-wallet mcp speaks MCP on stdin/stdout; configure your MCP host with the output of "agent-wallet mcp --print-config".\n');
  log.info('mcp server ready', { server: ctx.server, profile: ctx.profileName, home: ctx.store.home });
  await closed;
  log.info('mcp server closed');
  return 0;
}

/** `agent-wallet mcp [--print-config]` (global flags --server, --profile, --home as in the CLI). */
export async function mcpCommand(ctx: CliContext, env: Record<string, string | undefined> = process.env): Promise<number> {
  // Whatever happens, nothing but the protocol reaches stdout.
  ctx.out = (text) => process.stderr.write(text);
  const { flags } = commandFlags(ctx, { 'print-config': 'boolean' });
  if (flags['print-config']) {
    process.stdout.write(`${JSON.stringify(hostConfig(ctx, env), null, 2)}\n`);
    return 0;
  }
  return serveStdio(ctx, env);
}
