/**
 * Paying a paid MCP tool (x402's MCP transport, tool-result binding): the tool answers `isError`
 * with an x402 v2 `PaymentRequired` in `structuredContent` (or as JSON in `content[0].text`); the
 * purchase is made by the daemon under the guard rails (x402_prepare_tool), checked and signed
 * here as an HTTP purchase is (signPurchase: the host is the MCP server), and its payment —
 * the same signed bytes on every retry — goes back in `_meta["x402/payment"]`; the tool's
 * `_meta["x402/payment-response"]` is reported (x402_receipt) and believed only on chain.
 */
import { randomUUID } from 'node:crypto';
import type { ApiClient } from './api.ts';
import type { ProfileData } from './profile.ts';
import { pinsOf, updatePins, type SaveProfile } from './pins.ts';
import { recordIntent, micro } from './custody.ts';
import { checkPurchase, purchaseIntent, signPurchase, type Prepared, type X402Expectation } from './x402.ts';
import { isObject } from '../domain/json.ts';

/** A tool call as the MCP SDK's client takes it, and its result. */
export interface ToolCall {
  name: string;
  arguments?: Record<string, unknown>;
  _meta?: Record<string, unknown>;
}
export type ToolResult = { isError?: boolean; structuredContent?: unknown; content?: unknown; _meta?: Record<string, unknown> } & Record<string, unknown>;

export type ToolOutcome = 'not_required' | 'completed' | 'pending' | 'awaiting_approval' | 'rejected' | 'failed';

export interface PaidToolResult {
  outcome: ToolOutcome;
  fetch_id: string | null;
  /** The tool's result: the paid one, or the free one. */
  result: ToolResult;
  purchase: Record<string, any> | null;
}

/** The x402 PaymentRequired of a tool result, when it is one: structuredContent first, then content[0].text. */
export function paymentRequiredOf(result: ToolResult): Record<string, unknown> | null {
  if (result.isError !== true) return null;
  const looks = (v: unknown): v is Record<string, unknown> => isObject(v) && typeof v.x402Version === 'number' && Array.isArray(v.accepts);
  if (looks(result.structuredContent)) return result.structuredContent;
  const first = Array.isArray(result.content) ? result.content[0] : undefined;
  if (isObject(first) && first.type === 'text' && typeof first.text === 'string') {
    try {
      const parsed: unknown = JSON.parse(first.text);
      if (looks(parsed)) return parsed;
    } catch {
      // Plain error text: not a payment request.
    }
  }
  return null;
}

/** A paid MCP server as the client reaches it: Streamable HTTP at `url`, or a stdio `command`; `name` is what the guard rails see as its host. */
export type McpServer = { name: string; url: string } | { name: string; command: string; args?: string[] };

/**
 * The key the server's payee is pinned under: the host (with port, as HTTP sellers' are) of the
 * URL this client connects to, or the command it runs — never the name, which anyone may give a
 * server, so a payee is never pinned under a host this client did not contact.
 */
function pinKey(server: McpServer): string {
  return 'url' in server ? new URL(server.url).host.toLowerCase() : `stdio:${[server.command, ...(server.args ?? [])].join(' ')}`;
}

/** Connects to `server` with the MCP SDK's client; the caller closes it. */
async function connect(server: McpServer) {
  const { Client } = await import('@modelcontextprotocol/sdk/client/index.js');
  const client = new Client({ name: 'agent-wallet', version: '1' });
  if ('url' in server) {
    const { StreamableHTTPClientTransport } = await import('@modelcontextprotocol/sdk/client/streamableHttp.js');
    await client.connect(new StreamableHTTPClientTransport(new URL(server.url)));
  } else {
    const { StdioClientTransport } = await import('@modelcontextprotocol/sdk/client/stdio.js');
    await client.connect(new StdioClientTransport({ command: server.command, args: server.args ?? [] }));
  }
  return client;
}

/** The tool result a purchase recorded with its receipt. */
function storedResult(purchase: Record<string, any>): ToolResult | null {
  try {
    const parsed: unknown = JSON.parse(String(purchase.response?.body ?? ''));
    return isObject(parsed) ? (parsed as ToolResult) : null;
  } catch {
    return null;
  }
}

/**
 * Calls `tool` on `server` (this client connects to it); a payment request is paid once under the
 * guard rails and the call repeated with it.
 */
export async function x402CallTool(
  api: ApiClient,
  profile: ProfileData,
  server: McpServer,
  a: { tool: string; arguments?: Record<string, unknown>; maxAmount?: string; idempotencyKey?: string },
  opts: { progress?: (step: string) => void; save?: SaveProfile } = {},
): Promise<PaidToolResult> {
  const client = await connect(server);
  try {
    return await payTool(api, profile, server, (call) => client.callTool(call) as Promise<ToolResult>, a, opts);
  } finally {
    await client.close();
  }
}

async function payTool(
  api: ApiClient,
  profile: ProfileData,
  server: McpServer,
  callTool: (call: ToolCall) => Promise<ToolResult>,
  a: { tool: string; arguments?: Record<string, unknown>; maxAmount?: string; idempotencyKey?: string },
  opts: { progress?: (step: string) => void; save?: SaveProfile },
): Promise<PaidToolResult> {
  const progress = opts.progress ?? (() => {});
  const first = await callTool({ name: a.tool, ...(a.arguments ? { arguments: a.arguments } : {}) });
  const required = paymentRequiredOf(first);
  if (!required) return { outcome: 'not_required', fetch_id: null, result: first, purchase: null };
  const pins = await pinsOf(api, profile, opts.save);
  const agent: X402Expectation = { host: pinKey(server), ...(a.maxAmount !== undefined ? { maxAmount: micro(a.maxAmount) } : {}) };
  const prepared = await api.call<Prepared>(
    'bot',
    'x402_prepare_tool',
    { server: server.name, tool: a.tool, payment_required: required, ...(a.maxAmount !== undefined ? { max_amount: a.maxAmount } : {}) },
    { idempotencyKey: a.idempotencyKey ?? randomUUID() },
  );
  const fetchId = String(prepared.fetch_id);
  // A retry with the same key replays the purchase as created: where it stands now decides.
  const current = await api.call<Record<string, any>>('bot', 'x402_status', { fetch_id: fetchId });
  if (current.purchase_status === 'completed' || current.purchase_status === 'failed') {
    return { outcome: current.purchase_status, fetch_id: fetchId, result: storedResult(current) ?? first, purchase: current };
  }
  progress(`the tool ${a.tool} costs ${prepared.amount} USDC to ${prepared.pay_to} (${current.status})`);
  if (current.status === 'rejected' || current.status === 'awaiting_approval') {
    return { outcome: current.status, fetch_id: fetchId, result: first, purchase: current };
  }
  if (current.purchase_status === 'open') {
    checkPurchase(pins, prepared, { ...agent, host: agent.host });
    updatePins(profile, opts.save, (p) => recordIntent(p, fetchId, purchaseIntent(agent, prepared, pins), new Date()));
    await signPurchase(api, profile, fetchId, prepared, progress, { agent, save: opts.save });
  }
  const { payment } = await api.call<{ payment: Record<string, unknown> }>('bot', 'x402_payment', { fetch_id: fetchId });
  progress(`calling ${a.tool} with the payment`);
  const paid = await callTool({ name: a.tool, ...(a.arguments ? { arguments: a.arguments } : {}), _meta: { 'x402/payment': payment } });
  const receipt = paid._meta?.['x402/payment-response'];
  const purchase = await api.call<Record<string, any>>('bot', 'x402_receipt', { fetch_id: fetchId, ...(receipt === undefined ? {} : { payment_response: receipt }), result: paid });
  const outcome: ToolOutcome = purchase.purchase_status === 'completed' ? 'completed' : purchase.purchase_status === 'failed' ? 'failed' : 'pending';
  return { outcome, fetch_id: fetchId, result: paid, purchase };
}
