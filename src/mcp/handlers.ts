/**
 * Handlers of the composite tools: the ones that do more than one action call, exactly as the
 * CLI commands do (src/cli/*-commands.ts), over the same client functions (src/client).
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { randomUUID } from 'node:crypto';
import { ApiClient, ApiError } from '../client/api.ts';
import { ProfileError } from '../client/profile.ts';
import { registerWallet, type RegisterParams } from '../client/register.ts';
import { AgentRound, completePay, confirmSignSubmit, expectationOf, intentOf, type Expectation } from '../client/sign.ts';
import { recordIntent, usernameOf } from '../client/custody.ts';
import { pinsOf, updatePins, type SaveProfile } from '../client/pins.ts';
import { recordWithdrawal, withdrawalExpectation } from '../client/withdrawals.ts';
import { exportWallet, importWallet, parseWalletFile } from '../client/wallet-file.ts';
import { parseUsdc } from '../domain/money.ts';
import type { ProfileData } from '../client/profile.ts';
import { ToolError } from './errors.ts';
import type { Session } from './session.ts';
import { x402Fetch, x402Resume, type X402Request } from '../client/x402.ts';
import { x402CallTool } from '../client/x402-mcp.ts';

export type Args = Record<string, unknown>;
export type ToolHandler = (s: Session, args: Args) => Promise<Record<string, unknown>>;

/** An amount the agent gave (the tool schema let it through as a number or string). */
function micro(value: unknown, field: string): bigint {
  const p = parseUsdc(value);
  if (!p.ok) throw new ToolError('VALIDATION_ERROR', `/${field}: ${String(value)} ${p.reason}`, `Send ${field} as a decimal USDC value, e.g. 12.5.`);
  return p.micro;
}

/** Applies a change to the session's profile file as it is now, under its lock (the CLI may write it too). */
function saver(s: Session): SaveProfile {
  return (change) => s.store.update(s.profileName, change);
}

/** The idempotency key of a money-moving call: the caller's, or a fresh one it can reuse on retry. */
export function idempotencyKeyOf(args: Args): string {
  return typeof args.idempotency_key === 'string' ? args.idempotency_key : randomUUID();
}

/**
 * confirm + client-side message check + FROST round + submit (waiting for the chain). A retry
 * after the transaction completed (ALREADY_COMPLETED on confirm) returns its final view instead
 * of an error: submit_signed_tx answers a completed transaction with its result, signing nothing.
 */
async function confirmAndSubmit(
  s: Session,
  api: ApiClient,
  profile: ProfileData,
  transactionId: string,
  confirmAction: string,
  expect: Expectation | undefined,
  acceptNewFees: boolean,
): Promise<Record<string, unknown>> {
  return completedOr(api, transactionId, () => confirmSignSubmit(api, profile, transactionId, { confirmAction, expect, acceptNewFees, save: saver(s), progress: (step) => s.progress(step) }));
}

/** Runs `sign`; a transaction that completed meanwhile (a retry) answers with its final view instead. */
async function completedOr(api: ApiClient, transactionId: string, sign: () => Promise<Record<string, unknown>>): Promise<Record<string, unknown>> {
  try {
    return await sign();
  } catch (err) {
    if (err instanceof ApiError && err.errorCode === 'ALREADY_COMPLETED') {
      return api.call<Record<string, unknown>>('bot', 'submit_signed_tx', { transaction_id: transactionId });
    }
    throw err;
  }
}

/** `register`: DKG with the server, registration proof, profile saved like `agent-wallet register`. */
export const registerTool: ToolHandler = async (s, args) => {
  if (s.store.exists(s.profileName)) {
    throw new ProfileError(
      `profile "${s.profileName}" already exists in ${s.store.home}: this MCP server already has a wallet (use info). To register another, configure another AGENT_WALLET_PROFILE for this server`,
    );
  }
  const { response, profile } = await registerWallet(s.anonymous(), args as unknown as RegisterParams, (step) => s.progress(step));
  const path = s.store.save(s.profileName, profile);
  s.forget();
  s.progress(`key share and API key saved to ${path} (mode 0600)`);
  // The API key stays in the profile file: the model never needs it, so it never enters its context.
  const { api_key: _apiKey, ...rest } = response;
  return { ...rest, api_key: 'saved in the profile file', profile: s.profileName, profile_path: path };
};

/**
 * `pay`: creates the intent with an idempotency key (given or generated, and returned) and, when
 * it is pre_approved and `confirm` is not false, confirms, checks, signs and submits it, exactly
 * like `agent-wallet pay`: the expectation is the agent's own arguments (amount, to; for a paylink
 * without an amount, its max_amount ceiling), never the server's answer.
 */
export const payTool: ToolHandler = async (s, args) => {
  const { idempotency_key: _key, confirm, max_amount, accept_new_address, accept_new_fees, ...params } = args;
  const idempotencyKey = idempotencyKeyOf(args);
  const { profile, api } = s.wallet();
  let expect: Expectation;
  if (params.payment_request_id !== undefined) {
    expect = params.amount !== undefined ? { amount: micro(params.amount, 'amount') } : max_amount !== undefined ? { maxAmount: micro(max_amount, 'max_amount') } : {};
  } else {
    if (typeof params.to !== 'string' || params.amount === undefined) throw new ToolError('VALIDATION_ERROR', '/to and /amount are required (or payment_request_id)', 'Send to (a username or Solana address) and amount.');
    const username = usernameOf(params.to);
    expect = { amount: micro(params.amount, 'amount'), ...(username ? { username } : { recipientAddress: params.to.trim() }) };
  }
  if (accept_new_address === true) expect.acceptNewAddress = true;
  expect.createdAt = new Date().toISOString();
  await pinsOf(api, profile, saver(s));
  s.progress(`creating payment intent (idempotency key ${idempotencyKey})`);
  // Round one rides on pay (two round trips): a pre_approved answer opens the signing round.
  const round = confirm === false ? null : new AgentRound(profile);
  const intent = await api.call<Record<string, unknown>>('bot', 'pay', round ? { ...params, commitments: round.commitments } : params, { idempotencyKey });
  // Kept until signed, so confirm_payment after the owner's approval holds the server to the same words.
  updatePins(profile, saver(s), (p) => {
    recordIntent(p, String(intent.transaction_id), intentOf(expect), new Date());
  });
  if (intent.status !== 'pre_approved' || !round) return { ...intent, idempotency_key: idempotencyKey };
  const opts = { expect, acceptNewFees: accept_new_fees === true, save: saver(s), progress: (step: string) => s.progress(step), cancelOnRefusal: true };
  const result = await completedOr(api, String(intent.transaction_id), () => completePay(api, profile, intent, round, opts));
  return { ...result, idempotency_key: idempotencyKey };
};

/** `confirm_payment`: the whole confirm + check + sign + submit, held to the intent this profile recorded (else the ceiling). */
export const confirmPaymentTool: ToolHandler = async (s, args) => {
  const { profile, api } = s.wallet();
  const id = String(args.transaction_id);
  const recorded = (await pinsOf(api, profile, saver(s))).intents[id];
  const expect: Expectation = {
    ...(recorded ? expectationOf(recorded) : {}),
    ...(args.max_amount !== undefined ? { maxAmount: micro(args.max_amount, 'max_amount') } : {}),
    ...(args.accept_new_address === true ? { acceptNewAddress: true } : {}),
  };
  return confirmAndSubmit(s, api, profile, id, 'confirm_payment', expect, args.accept_new_fees === true);
};

/**
 * `confirm_withdrawal`: like confirm_payment, held to the address and amount this profile recorded
 * for the transaction; a withdrawal it never asked for is signed only against a to_address and
 * amount the agent gives now (src/client/withdrawals.ts), never against the ceiling alone.
 */
export const confirmWithdrawalTool: ToolHandler = async (s, args) => {
  const { profile, api } = s.wallet();
  const id = String(args.transaction_id);
  if ((args.to_address === undefined) !== (args.amount === undefined)) {
    throw new ToolError('VALIDATION_ERROR', '/to_address and /amount go together', 'Send both the address and the amount you withdraw, or neither.');
  }
  const given = args.amount !== undefined ? { amount: micro(args.amount, 'amount'), recipientAddress: String(args.to_address) } : null;
  const expect = withdrawalExpectation((await pinsOf(api, profile, saver(s))).intents[id], id, id, given);
  return confirmAndSubmit(s, api, profile, id, 'confirm_withdrawal', expect, args.accept_new_fees === true);
};

/** `withdraw`: creates the withdrawal and records the agent's amount and address, which confirm_withdrawal holds the server to. */
export const withdrawTool: ToolHandler = async (s, args) => {
  const { idempotency_key: _key, ...params } = args;
  const idempotencyKey = idempotencyKeyOf(args);
  const { profile, api } = s.wallet();
  const amount = micro(params.amount, 'amount');
  await pinsOf(api, profile, saver(s));
  const w = await api.call<Record<string, unknown>>('bot', 'withdraw', params, { idempotencyKey });
  if (typeof w.transaction_id === 'string') {
    const created = { withdrawal_id: w.withdrawal_id, transaction_id: w.transaction_id };
    // Under its withdrawal id too, so `agent-wallet withdraw confirm WD_ID` beside this server holds it the same way.
    updatePins(profile, saver(s), (p) => {
      recordWithdrawal(p, created, { amount, recipientAddress: String(params.to_address) }, new Date());
    });
  }
  return { ...w, idempotency_key: idempotencyKey };
};

/** A path as the tool received it: absolute, or relative to the profile home (the host's working directory is arbitrary). */
function filePath(s: Session, file: string): string {
  return resolve(s.store.home, file);
}

/** `wallet_export`: writes a .wlt file (0600) like `agent-wallet export`; default under HOME/exports. */
export const walletExportTool: ToolHandler = async (s, args) => {
  const { profile, api } = s.wallet();
  const file = filePath(s, typeof args.file === 'string' ? args.file : join('exports', `${s.profileName}-${new Date().toISOString().replace(/[:.]/g, '-')}.wlt`));
  if (!args.overwrite && existsSync(file)) throw new ToolError('VALIDATION_ERROR', `/file: ${file} already exists`, 'Choose another file, or pass overwrite: true to replace it.');
  const content = await exportWallet(api, profile);
  mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
  writeFileSync(file, `${JSON.stringify(content, null, 2)}\n`, { mode: 0o600, flag: args.overwrite ? 'w' : 'wx' });
  return {
    file,
    export_id: content.export_id,
    wallet_id: content.wallet_id,
    address: content.address,
    next_step: 'keep the file safe; import it with wallet_import (or agent-wallet import) while the server keeps the export, at most 5 imports a day',
  };
};

/** `wallet_import`: restores a .wlt file into this server's profile, like `agent-wallet import`. */
export const walletImportTool: ToolHandler = async (s, args) => {
  const file = filePath(s, String(args.file));
  const parsed = parseWalletFile(readFileSync(file, 'utf8'));
  if (s.store.exists(s.profileName)) {
    throw new ProfileError(`profile "${s.profileName}" already exists in ${s.store.home}; configure another AGENT_WALLET_PROFILE for this server to import under another name`);
  }
  // The file names its server; a configured AGENT_WALLET_URL wins, as in the CLI.
  const server = s.explicitServer ? s.server : parsed.server_url;
  const profile = await importWallet(new ApiClient(server), parsed);
  const info = await new ApiClient(server, profile.api_key).call<Record<string, unknown>>('bot', 'info');
  const path = s.store.save(s.profileName, { ...profile, server_url: server });
  s.forget();
  return { profile: s.profileName, profile_path: path, wallet_id: info.wallet_id, username: info.username, address: info.address };
};

/** `x402_fetch`: probe, pay (checking the exact x402 transaction first) and fetch, like `agent-wallet x402 fetch`. */
export const x402FetchTool: ToolHandler = async (s, args) => {
  const { idempotency_key: _key, accept_new_address, ...request } = args;
  const idempotencyKey = idempotencyKeyOf(args);
  const { profile, api } = s.wallet();
  const result = await x402Fetch(api, profile, request as unknown as X402Request, { idempotencyKey, acceptNewAddress: accept_new_address === true, save: saver(s), progress: (step) => s.progress(step) });
  return { ...result, idempotency_key: idempotencyKey } as unknown as Record<string, unknown>;
};

/** `x402_resume`: finishes a purchase after the owner approved it (or after a pending outcome). */
export const x402ResumeTool: ToolHandler = async (s, args) => {
  const { profile, api } = s.wallet();
  return (await x402Resume(api, profile, String(args.fetch_id), (step) => s.progress(step), saver(s))) as unknown as Record<string, unknown>;
};

/** A paid MCP server the operator lets this MCP server call: by URL (Streamable HTTP) or a command (stdio). */
type PaidServer = { url: string } | { command: string; args?: string[] };

/** The paid MCP servers the operator allows, from AGENT_WALLET_MCP_PAID_SERVERS (JSON {name: {url} or {command, args}}). */
function paidServers(): Record<string, PaidServer> {
  const raw = process.env.AGENT_WALLET_MCP_PAID_SERVERS;
  if (!raw) return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    throw new ToolError('VALIDATION_ERROR', 'AGENT_WALLET_MCP_PAID_SERVERS is not JSON', 'Set it to a JSON object {"name": {"url": "https://…/mcp"}} or {"name": {"command": "…", "args": ["…"]}}.');
  }
  const out: Record<string, PaidServer> = {};
  if (typeof parsed !== 'object' || parsed === null) return out;
  for (const [name, spec] of Object.entries(parsed as Record<string, unknown>)) {
    const s = spec as Record<string, unknown>;
    if (typeof s?.url === 'string') out[name] = { url: s.url };
    else if (typeof s?.command === 'string') out[name] = { command: s.command, args: Array.isArray(s.args) ? s.args.map(String) : [] };
  }
  return out;
}

/**
 * `x402_call_tool`: calls a tool of a paid MCP server the operator allows; a payment request
 * (x402's MCP transport) is paid once under the guard rails — the host is the server's name — and
 * the call repeated with the payment.
 */
export const x402CallToolTool: ToolHandler = async (s, args) => {
  const servers = paidServers();
  const name = String(args.server);
  const spec = servers[name];
  if (!spec) {
    throw new ToolError('VALIDATION_ERROR', `/server: ${name} is not a paid MCP server this MCP server may call`, `The operator lists them in AGENT_WALLET_MCP_PAID_SERVERS; allowed now: ${Object.keys(servers).join(', ') || 'none'}.`);
  }
  const { profile, api } = s.wallet();
  const idempotencyKey = idempotencyKeyOf(args);
  const r = await x402CallTool(
    api,
    profile,
    { name, ...spec },
    {
      tool: String(args.tool),
      ...(args.arguments && typeof args.arguments === 'object' ? { arguments: args.arguments as Record<string, unknown> } : {}),
      ...(args.max_amount !== undefined ? { maxAmount: String(args.max_amount) } : {}),
      idempotencyKey,
    },
    { progress: (step) => s.progress(step), save: saver(s) },
  );
  return { ...r, idempotency_key: idempotencyKey } as unknown as Record<string, unknown>;
};
