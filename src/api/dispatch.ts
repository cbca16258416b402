/**
 * The dispatcher of DESIGN §2: reads and parses the body, looks the action up in the table,
 * rate-limits, authenticates, checks the wallet's condition, validates the params with the
 * action's compiled schema and runs the handler. Every outcome is an envelope; unknown errors
 * become INTERNAL_ERROR (logged under the request id, never sent).
 */
import { Value } from '@sinclair/typebox/value';
import type { TSchema } from '@sinclair/typebox';
import type { Endpoint } from '../contract/action.ts';
import type { ActionContext } from '../action-context.ts';
import type { ActionTable, RegisteredAction } from '../actions/registry.ts';
import type { Services } from '../services.ts';
import { AppError, invalid } from '../errors.ts';
import { authenticate, credentialOf, type Credential } from './auth.ts';
import type { Principal } from '../domain/principal.ts';
import { rateHeaders, rateLimited, type Limiter } from './rate-limit.ts';
import { errorResponse, JSON_TYPE, successResponse } from './respond.ts';
import type { Metrics } from '../metrics.ts';
import { ChainRejectedError, ChainUnavailableError } from '../solana/errors.ts';
import { sha256 } from '../domain/sha256.ts';
import { isRecorded, recordIdempotentResponse } from '../db/idempotency.ts';
import type { IdempotencyClaims } from './idempotency-claims.ts';
import { principalKey } from '../domain/principal.ts';
import { toJson } from './respond.ts';
import { restoringError } from '../ops/restore-state.ts';
import type { Turns } from './turns.ts';
import { bodyWithin, MAX_BODY_BYTES } from './body.ts';

export interface DispatchDeps {
  services: Services;
  table: ActionTable;
  limiter: Limiter;
  metrics: Metrics;
  /** Extra error details for a bot key on an unclaimed wallet (claim_url, claim_code). */
  unclaimedDetails: (walletId: string) => Promise<Record<string, unknown>>;
  /** Admission of state-changing calls: one a turn of the event loop, a bounded queue (turns.ts). */
  turns?: Turns;
  /** The idempotency keys of requests running now (idempotency-claims.ts). */
  claims: IdempotencyClaims;
}

export interface IncomingCall {
  endpoint: Endpoint;
  request: Request;
  /** The caller's address, looked up only for a call without a key (its rate-limit bucket): the lookup is ~5 % of a request. */
  ip: () => string;
  requestId: string;
}

const UTF8 = new TextDecoder('utf-8', { fatal: true });

/**
 * 413 with the envelope. The connection is closed after it, so a client sending a huge body
 * does not keep the server reading the rest.
 */
function bodyTooLarge(): AppError {
  return new AppError('VALIDATION_ERROR', `(body): larger than ${MAX_BODY_BYTES / 1024} KiB`, {
    status: 413,
    howToFix: `Send a JSON body of at most ${MAX_BODY_BYTES / 1024} KiB (${MAX_BODY_BYTES} bytes).`,
    details: { field: '(body)' },
    headers: { Connection: 'close' },
  });
}

/** Null (body too large) becomes 413 here, so the read itself stays one promise. */
function parseJsonBody(bytes: Uint8Array | null): Record<string, unknown> {
  if (bytes === null || bytes.byteLength > MAX_BODY_BYTES) throw bodyTooLarge();
  let text: string;
  try {
    text = UTF8.decode(bytes);
  } catch {
    throw invalid('(body)', 'is not valid UTF-8', 'Send a UTF-8 JSON object such as {"action":"ping"}.');
  }
  if (text.trim() === '') throw invalid('(body)', 'is empty', 'Send a JSON object such as {"action":"ping"}.');
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    throw invalid('(body)', `is not valid JSON (${(err as Error).message})`, 'Send a JSON object such as {"action":"ping"} with Content-Type: application/json.');
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw invalid('(body)', 'must be a JSON object', 'Send a JSON object such as {"action":"ping"}.');
  }
  return parsed as Record<string, unknown>;
}

function queryParams(request: Request): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of new URL(request.url).searchParams) out[k] = v;
  return out;
}

function describeExpected(schema: TSchema): string {
  const d = (schema as { description?: string }).description;
  return d ? `; expected ${d}` : '';
}

/** True when some node of the schema has a `default` (or a `$ref` that might lead to one). */
function hasDefaults(schema: unknown): boolean {
  if (schema === null || typeof schema !== 'object') return false;
  if ('default' in schema || '$ref' in schema) return true;
  return Object.values(schema).some(hasDefaults);
}

const defaulted = new WeakMap<TSchema, boolean>();

/**
 * Value.Default, skipped for schemas without defaults (most actions): there it only returns an
 * equal value, and its walk costs about as much as the compiled Check.
 */
function withDefaults(schema: TSchema, value: unknown): unknown {
  let has = defaulted.get(schema);
  if (has === undefined) {
    has = hasDefaults(schema);
    defaulted.set(schema, has);
  }
  return has ? Value.Default(schema, value) : value;
}

/** Validates params; the message names the field (JSON pointer) and what is wrong. */
function validateParams(entry: RegisteredAction, params: Record<string, unknown>, fromQuery: boolean): Record<string, unknown> {
  let candidate: unknown = params;
  if (fromQuery) candidate = Value.Convert(entry.contract.params, candidate);
  candidate = withDefaults(entry.contract.params, candidate);
  if (entry.check.Check(candidate)) return candidate as Record<string, unknown>;
  const first = entry.check.Errors(candidate).First();
  if (!first) throw invalid('(params)', 'are not valid');
  const field = first.path || '(params)';
  if (first.message.includes('Unexpected property') || first.message.includes('additional')) {
    throw invalid(field, `unknown parameter of ${entry.name}`, `Remove ${field}; see GET /v1/openapi.json for the parameters of ${entry.name}.`);
  }
  const message = first.message.replace(/^Expected union value$/, 'has the wrong type or format');
  throw invalid(field, `${message}${describeExpected(first.schema)}`);
}

const validLists = new WeakMap<Map<string, RegisteredAction>, string>();

/** The sorted action names of an endpoint, for error messages (computed once per table). */
function validActions(map: Map<string, RegisteredAction>): string {
  let list = validLists.get(map);
  if (list === undefined) {
    list = [...map.keys()].sort().join(', ');
    validLists.set(map, list);
  }
  return list;
}

function lookup(deps: DispatchDeps, endpoint: Endpoint, body: Record<string, unknown>): { entry: RegisteredAction; params: Record<string, unknown> } {
  const { action, ...params } = body;
  const map = deps.table[endpoint];
  if (action === undefined) throw invalid('/action', 'is required', `Send {"action": "<name>", …}; actions on /v1/${endpoint}: ${validActions(map)}.`);
  if (typeof action !== 'string') throw invalid('/action', 'must be a string', `Actions on /v1/${endpoint}: ${validActions(map)}.`);
  const entry = map.get(action);
  if (!entry) throw invalid('/action', `unknown action "${action.slice(0, 64)}" on /v1/${endpoint}`, `Use one of: ${validActions(map)}.`);
  return { entry, params };
}

/**
 * Counts a call against its bucket and adds the RateLimit headers to `headers`; throws RATE_LIMITED.
 * The /v1 actions call it; the x402 facilitator counts a key's calls in a bucket of its own (rate-limit.ts).
 */
export async function rateLimit(deps: Pick<DispatchDeps, 'services' | 'limiter'>, call: Pick<IncomingCall, 'ip'>, credential: Credential | null, headers: Record<string, string>): Promise<void> {
  const limits = deps.services.config.rate_limits;
  // Keyed calls count against the key (hashed, so the bucket name never holds the secret).
  const decision = credential
    ? await deps.limiter.hit(`key:${Buffer.from(credential.hash).toString('base64')}`, limits.per_key_per_minute)
    : await deps.limiter.hit(`ip:${call.ip()}`, limits.per_ip_per_minute);
  if (!decision.allowed) throw rateLimited(decision, credential ? 'API key' : 'IP address');
  rateHeaders(decision, headers);
}

async function checkCondition(deps: DispatchDeps, entry: RegisteredAction, principal: Principal): Promise<void> {
  // After a restore, only reads until the ledger is reconciled with the chain (nothing paid twice).
  if (deps.services.restore.active && !entry.contract.readOnly) throw restoringError(deps.services.restore);
  if (principal.kind === 'bot' && !principal.claimed && !entry.contract.allowUnclaimed) {
    throw new AppError('WALLET_NOT_CLAIMED', `The wallet is not claimed yet, so "${entry.name}" is not available.`, {
      details: await deps.unclaimedDetails(principal.walletId),
    });
  }
}

function classifyUnknown(err: unknown): AppError | null {
  if (err instanceof ChainUnavailableError && err.rateLimited) {
    return new AppError('SERVICE_UNAVAILABLE', "The Solana RPC provider's request limit is reached; nothing was changed.", {
      headers: { 'Retry-After': String(err.retryAfterSeconds) },
      howToFix: 'Retry after the Retry-After seconds. If this persists, the operator should raise the RPC plan or lower solana.rpc_max_rps to what the provider allows.',
    });
  }
  if (err instanceof ChainUnavailableError) {
    return new AppError('SERVICE_UNAVAILABLE', 'The Solana RPC is unreachable.', {
      headers: { 'Retry-After': '5' },
      howToFix: 'Retry in a few seconds; if it persists, the operator should check solana.rpc_url.',
    });
  }
  if (err instanceof ChainRejectedError) {
    // A transaction the service built itself was refused by the cluster (its preflight): nothing the
    // caller sent is wrong, and nothing moved.
    return new AppError('SERVICE_UNAVAILABLE', `Solana refused a transaction the service built: ${err.reason}. Nothing was moved.`, {
      headers: { 'Retry-After': '10' },
      howToFix: "Retry in a few seconds. If it persists, the operator should read the daemon log and check the fee payer's SOL (agent-wallet admin doctor).",
    });
  }
  const code = (err as { code?: unknown } | null)?.code;
  if (code === 'SQLITE_BUSY' || code === 'SQLITE_BUSY_SNAPSHOT') {
    return new AppError('SERVICE_UNAVAILABLE', 'The ledger is busy.', { headers: { 'Retry-After': '1' }, howToFix: 'Retry after 1 second; nothing was changed.' });
  }
  return null;
}

/** A claim row an earlier version wrote for a request that crashed is taken over after this long. */
const STALE_CLAIM_MS = 60_000;

function idempotencyKey(headers: Headers): string | null {
  const key = headers.get('x-idempotency-key') ?? headers.get('idempotency-key');
  if (key === null) return null;
  if (!/^[\x21-\x7e]{1,255}$/.test(key)) {
    throw invalid('X-Idempotency-Key', 'must be 1–255 printable ASCII characters without spaces', 'Use a UUID or another unique token per logical request.');
  }
  return key;
}

/** What identifies an idempotent request: its params without those the contract says a retry may change. */
function requestHash(entry: RegisteredAction, params: Record<string, unknown>): Uint8Array {
  const ignored = entry.contract.idempotencyIgnores;
  const kept = ignored ? Object.fromEntries(Object.entries(params).filter(([k]) => !ignored.includes(k))) : params;
  return sha256(toJson(kept));
}

/** Runs an idempotent action under a fresh claim and remembers its answer. */
async function runIdempotent(
  deps: DispatchDeps,
  entry: RegisteredAction,
  base: Omit<ActionContext, 'idempotency'>,
  params: Record<string, unknown>,
  scope: { principal: string; action: string; key: string; hash: Uint8Array; now: number },
  headers: Record<string, string>,
): Promise<Response> {
  const { db } = deps.services;
  try {
    // The handler records its answer inside the transaction that makes its change (one commit).
    const data = await entry.handler({ ...base, idempotency: { key: scope.key, record: async (d) => await recordIdempotentResponse(db, scope, 200, toJson({ success: true, data: d })) } }, params);
    const body = toJson({ success: true, data });
    if (!(await isRecorded(db, scope))) await db.transaction(async () => await recordIdempotentResponse(db, scope, 200, body));
    return new Response(body, { status: 200, headers: { 'Content-Type': JSON_TYPE, ...headers } });
  } catch (err) {
    // A refusal is remembered (the same request gets the same answer); a fault is not (retry may succeed).
    if (err instanceof AppError && err.status < 500 && err.status !== 409 && err.status !== 429) {
      const res = errorResponse(err, headers);
      await db.transaction(async () => await recordIdempotentResponse(db, scope, err.status, toJson(err.toEnvelope())));
      return res;
    }
    throw err;
  } finally {
    deps.claims.release(scope);
  }
}

/**
 * State-changing actions whose synchronous work is a row read before a send: a turn buys nothing,
 * and spreading a burst of submits over turns would split the shared first confirmation look.
 */
const NO_TURN = new Set(['submit_signed_tx']);

/** Dispatches one API call to its action and renders the envelope. */
export async function dispatch(deps: DispatchDeps, call: IncomingCall): Promise<{ response: Response; action: string }> {
  const { services } = deps;
  const started = performance.now();
  // Content-Type first, then the call's own headers, as every envelope response sends them.
  const baseHeaders: Record<string, string> = { 'Content-Type': JSON_TYPE, 'X-Request-Id': call.requestId };
  let actionName = '(none)';
  let response: Response;
  try {
    const isGet = call.request.method === 'GET';
    const body = isGet ? queryParams(call.request) : parseJsonBody(await bodyWithin(call.request, MAX_BODY_BYTES));
    const { entry, params } = lookup(deps, call.endpoint, body);
    actionName = entry.name;
    if (isGet && !entry.contract.readOnly) {
      throw invalid('/action', `"${entry.name}" changes state and is served on POST only`, `POST /v1/${call.endpoint} with a JSON body.`);
    }
    // Parsed and hashed once: the rate limiter buckets keyed calls by it, authentication looks it up.
    const credential = entry.contract.auth === 'none' ? null : credentialOf(call.request.headers);
    await rateLimit(deps, call, credential, baseHeaders);
    const principal = await authenticate(services.db, credential, entry.contract.auth);
    await checkCondition(deps, entry, principal);
    // Reads go straight on; a state-changing call's synchronous work waits for its own turn.
    if (deps.turns && !entry.contract.readOnly && !NO_TURN.has(entry.name)) await deps.turns.take();
    const valid = validateParams(entry, params, isGet);
    const idem = entry.contract.idempotent ? idempotencyKey(call.request.headers) : null;
    if (idem) {
      const scope = { principal: principalKey(principal), action: entry.name, key: idem, hash: requestHash(entry, valid), now: services.now().getTime() };
      const claim = await deps.claims.claim(services.db, scope, scope.hash, scope.now, STALE_CLAIM_MS);
      if (claim.state === 'replay') {
        response = new Response(claim.response, { status: claim.status, headers: { 'Content-Type': JSON_TYPE, 'Idempotent-Replayed': 'true', ...baseHeaders } });
      } else if (claim.state === 'conflict') {
        throw new AppError('IDEMPOTENCY_CONFLICT', `The idempotency key was already used for a different ${entry.name} request.`);
      } else if (claim.state === 'running') {
        throw new AppError('IDEMPOTENCY_CONFLICT', 'A request with this idempotency key is still running.', {
          status: 409,
          howToFix: 'Retry after 1 second with the same key and parameters to get its result.',
          headers: { 'Retry-After': '1' },
        });
      } else {
        response = await runIdempotent(deps, entry, { services, principal, requestId: call.requestId, headers: call.request.headers }, valid, scope, baseHeaders);
      }
    } else {
      const data = await entry.handler({ services, principal, requestId: call.requestId, headers: call.request.headers }, valid);
      response = successResponse(data, baseHeaders);
    }
  } catch (err) {
    let appErr = err instanceof AppError ? err : classifyUnknown(err);
    // The caller sees a generic 503; the operator needs the RPC's own failure.
    if (err instanceof ChainUnavailableError) {
      services.log.warn(err.rateLimited ? 'chain rate limited' : 'chain unavailable', { request_id: call.requestId, action: actionName, error: err.message });
    }
    if (err instanceof ChainRejectedError) services.log.warn('chain refused a transaction', { request_id: call.requestId, action: actionName, kind: err.kind, error: err.reason, logs: err.logs });
    if (!appErr) {
      services.log.error('internal error', {
        request_id: call.requestId,
        endpoint: call.endpoint,
        action: actionName,
        error: (err as Error)?.message,
        stack: (err as Error)?.stack,
      });
      appErr = new AppError('INTERNAL_ERROR');
    }
    response = errorResponse(appErr, baseHeaders);
  }
  const seconds = (performance.now() - started) / 1000;
  const metricAction = deps.table[call.endpoint].has(actionName) ? actionName : 'unknown';
  deps.metrics.request(call.endpoint, metricAction, response.status, seconds);
  services.log.info('request', {
    request_id: call.requestId,
    endpoint: call.endpoint,
    action: metricAction,
    status: response.status,
    duration_ms: Math.round(seconds * 1000 * 100) / 100,
  });
  return { response, action: actionName };
}
