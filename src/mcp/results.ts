/**
 * Tool results (MCP, SEP-1303): success is `structuredContent` (the API data) plus a text block
 * with a one-line summary and the same data as JSON (hosts that ignore structuredContent show the
 * model only the text). A business failure is `isError: true` with the code and how_to_fix in the
 * text and the error envelope as structuredContent, so the model can correct itself; JSON-RPC
 * errors are left to protocol faults (unknown tool, malformed request).
 */
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { clientEnvelope } from '../client/errors.ts';
import { ToolError } from './errors.ts';

type Data = Record<string, unknown>;

function usdc(v: unknown): string {
  return typeof v === 'number' || typeof v === 'string' ? `${v} USDC` : '';
}

/** One line an agent (or a human reading the transcript) takes in at a glance. */
export function headline(tool: string, data: Data): string {
  const parts: string[] = [];
  if (typeof data.transaction_id === 'string' && typeof data.status === 'string') {
    const to = data.to ?? data.counterparty ?? data.to_address;
    parts.push(`Transaction ${data.transaction_id} is ${data.status}${data.amount !== undefined ? `: ${usdc(data.amount)}` : ''}${to ? ` to ${String(to)}` : ''}.`);
  } else if (Array.isArray(data.items)) {
    parts.push(`${data.items.length} item(s)${typeof data.total === 'number' ? ` of ${data.total}` : ''}.`);
  } else if (tool === 'balance' && data.balance !== undefined) {
    parts.push(`Balance: ${usdc(data.balance)}.`);
  } else if (typeof data.status === 'string') {
    parts.push(`Status: ${data.status}.`);
  } else {
    parts.push(`${tool}: done.`);
  }
  if (typeof data.idempotency_key === 'string') parts.push(`Idempotency key: ${data.idempotency_key}.`);
  if (typeof data.next_step === 'string') parts.push(`Next: ${data.next_step}.`);
  return parts.join(' ');
}

/** A successful tool result. */
export function success(tool: string, data: unknown): CallToolResult {
  const structured: Data = data && typeof data === 'object' && !Array.isArray(data) ? (data as Data) : { result: data };
  return {
    content: [{ type: 'text', text: `${headline(tool, structured)}\n${JSON.stringify(structured, null, 2)}` }],
    structuredContent: structured,
  };
}

interface Envelope {
  success: false;
  error: { code: string; message: string; how_to_fix: string } & Data;
}

/** The error envelope for any failure: the API's own, or a client-side one from the code table shared with the CLI's --json. */
export function envelopeOf(err: unknown): Envelope {
  return clientEnvelope(err, (e) => (e instanceof ToolError ? { code: e.errorCode, howToFix: e.howToFix } : null));
}

/** A failed tool result. */
export function failure(err: unknown): CallToolResult {
  const envelope = envelopeOf(err);
  const { code, message, how_to_fix, ...details } = envelope.error;
  const lines = [`Error ${code}: ${message}`];
  if (how_to_fix) lines.push(`How to fix: ${how_to_fix}`);
  if (Object.keys(details).length > 0) lines.push(`Details: ${JSON.stringify(details)}`);
  return { isError: true, content: [{ type: 'text', text: lines.join('\n') }], structuredContent: envelope as unknown as Data };
}
