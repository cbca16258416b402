/**
 * The HTTP application. Built by `createApp(services)` so each test gets a fresh one and can
 * drive it with `app.handle(new Request(...))`. Elysia routes; the dispatcher does the rest.
 */
import { restoreView } from '../ops/restore-state.ts';
import { Elysia } from 'elysia';
import { actionTable } from '../actions/index.ts';
import { assertDatabaseAlive, ledgerOldestServing, ledgerSchemaVersion } from '../db/maintenance.ts';
import { mayServe } from '../db/migrations/postgres.ts';
import { clientAddress } from '../net/client-ip.ts';
import { SCHEMA_VERSION } from '../db/open.ts';
import { claimDetails } from '../actions/wallet.ts';
import type { Endpoint } from '../contract/action.ts';
import type { Services } from '../services.ts';
import { dispatch, type DispatchDeps } from './dispatch.ts';
import { Turns } from './turns.ts';
import { IdempotencyClaims } from './idempotency-claims.ts';

/** State-changing calls that may wait for their turn at once by default. */
const TURNS_QUEUE_LIMIT = 256;
import { AppError } from '../errors.ts';
import { Metrics } from '../metrics.ts';
import { openApiDocument } from './openapi.ts';
import { RateLimiter, SharedRateLimiter } from './rate-limit.ts';
import { PgStore } from '../db/pg-store.ts';
import { errorResponse, jsonResponse } from './respond.ts';
import { webRoutes } from '../web/routes.ts';
import { payRoutes } from '../web/pay-routes.ts';
import { evidenceRoutes } from './evidence-routes.ts';
import { facilitatorRoutes } from './facilitator-routes.ts';
import { leaseOf } from '../jobs/runner.ts';
import { clockTrusted, MAX_CLOCK_SKEW_MS } from '../db/node-locks.ts';
import { DEPOSIT_JOB } from '../jobs/deposits.ts';

export interface AppOptions {
  /** Shared with the job runner so /metrics shows both. */
  metrics?: Metrics;
  /** State-changing calls that may wait for their turn at once (default 256); past it they are told to retry. */
  writeQueue?: number;
}

function isLoopback(ip: string): boolean {
  return ip === '127.0.0.1' || ip === '::1' || ip.startsWith('127.') || ip === '::ffff:127.0.0.1';
}

function newRequestId(): string {
  return crypto.randomUUID();
}

/** Creates the Elysia app over `services`. */
export function createApp(services: Services, opts: AppOptions = {}) {
  const metrics = opts.metrics ?? new Metrics();
  const turns = new Turns(opts.writeQueue ?? TURNS_QUEUE_LIMIT);
  metrics.addSource(() => [
    '# HELP agent_wallet_write_queue State-changing calls waiting for their turn of the event loop.',
    '# TYPE agent_wallet_write_queue gauge',
    `agent_wallet_write_queue ${turns.waiting}`,
    '# HELP agent_wallet_write_queue_refused_total State-changing calls refused because the queue was full (503, Retry-After).',
    '# TYPE agent_wallet_write_queue_refused_total counter',
    `agent_wallet_write_queue_refused_total ${turns.refused}`,
  ]);
  const deps: DispatchDeps = {
    services,
    table: actionTable(),
    // Counted where every node sees the counts when several serve the ledger.
    limiter: services.nodes.shared && services.db instanceof PgStore ? new SharedRateLimiter(services.db, 60_000, services.log) : new RateLimiter(60_000),
    metrics,
    unclaimedDetails: async (walletId) => await claimDetails(services, walletId),
    turns,
    claims: new IdempotencyClaims(services.nodes),
  };

  const trustedProxies = new Set(services.config.server.trusted_proxies);
  const clientIp = (request: Request, server: { requestIP(r: Request): { address: string } | null } | null): string =>
    clientAddress(server?.requestIP(request)?.address, request.headers.get('x-forwarded-for'), trustedProxies);

  // The server comes from `app`, not the handler's context: naming `server` there makes Elysia
  // define a getter on every request's context.
  const route =
    (endpoint: Endpoint) =>
    ({ request }: { request: Request }): Promise<Response> =>
      dispatch(deps, { endpoint, request, ip: () => clientIp(request, app.server), requestId: newRequestId() }).then((r) => r.response);

  const ipOf = (request: Request): string => clientIp(request, app.server);

  const app = new Elysia()
    // The rule for every answer, API or page: it leaves once the commits before it are on the disk.
    .onAfterHandle({ as: 'global' }, () => services.durable())
    .post('/v1/bot', route('bot'), { parse: 'none' })
    .post('/v1/merchant', route('merchant'), { parse: 'none' })
    .post('/v1/owner', route('owner'), { parse: 'none' })
    .post('/v1/public', route('public'), { parse: 'none' })
    .get('/v1/public', route('public'))
    .use(webRoutes(services))
    .use(payRoutes(services))
    .use(facilitatorRoutes(deps, ipOf))
    .use(evidenceRoutes(services))
    .get('/v1/openapi.json', () => jsonResponse(200, openApiDocument(deps.table, services.version, `${services.publicUrl()}/v1`)))
    .get('/healthz', async () => {
      await assertDatabaseAlive(services.db);
      if (services.restore.active) return jsonResponse(200, { status: 'restoring', ...restoreView(services.restore) });
      return jsonResponse(200, { status: 'ok' });
    })
    // For load balancers: this node may take traffic (DESIGN §10.2).
    .get('/readyz', async () => {
      const notReady = (reason: string, howToFix: string) => jsonResponse(503, { status: 'not_ready', reason, how_to_fix: howToFix }, { 'Retry-After': '5' });
      let version: number | null;
      let oldest: number | null;
      try {
        version = await ledgerSchemaVersion(services.db);
        oldest = await ledgerOldestServing(services.db);
      } catch (err) {
        // The cause goes to the log, not to whoever asks (it may name hosts and roles).
        services.log.error('readyz: the ledger does not answer', { error: (err as Error).message });
        return notReady('the ledger does not answer', 'Check the database ([database] url, or the data dir disk) and the node log; the node answers again once it does.');
      }
      // One version ahead, moved by a migration that only added, is still this release's to serve (a rolling upgrade).
      if (version === null || oldest === null || !mayServe(SCHEMA_VERSION, version, oldest)) {
        return notReady(`the ledger is at schema version ${version}; this node's release has ${SCHEMA_VERSION}`, 'Upgrade this node to the release that moved the ledger (a rolling upgrade in progress).');
      }
      if (services.restore.active) return notReady('restoring: the ledger is being reconciled with the chain', 'Wait: money actions resume once the reconciliation is done (/healthz shows the blocks to go).');
      const nodes = services.nodes;
      const lockless = () => notReady("this node's lock connection to the database does not answer: it cannot tell which node watches the chain", 'Check the network between this node and PostgreSQL; the node answers again once its connection does.');
      if (!nodes.answering()) return lockless();
      if (!clockTrusted(nodes)) {
        return notReady(`this node's clock is ${(nodes.clockSkewMs() / 1000).toFixed(1)} s off the database server's (at most ${MAX_CLOCK_SKEW_MS / 1000} s): it would date and expire things early or late`, 'Sync the clock of this machine (NTP: timedatectl set-ntp true, chrony); the node is ready again at its next heartbeat.');
      }
      const lease = leaseOf(DEPOSIT_JOB);
      const elsewhere = nodes.shared && !nodes.holds(lease) ? await nodes.heldAnywhere(lease).catch(() => null) : false;
      if (elsewhere === null) return lockless();
      const watch = !nodes.shared || nodes.holds(lease) ? 'this node' : elsewhere ? 'another node' : 'being taken over';
      return jsonResponse(200, { status: 'ready', schema_version: version, release_schema_version: SCHEMA_VERSION, network: services.config.solana.network, nodes: nodes.liveNodes(), chain_watch: watch });
    })
    .get('/metrics', async ({ request, server }) => {
      const token = services.config.server.metrics_token;
      const allowed = token
        ? request.headers.get('authorization') === `Bearer ${token}`
        : isLoopback(clientIp(request, server as never));
      if (!allowed) return errorResponse(new AppError('UNAUTHORIZED', 'Metrics need the metrics token.', { howToFix: 'Send "Authorization: Bearer <server.metrics_token>" or scrape from loopback.' }));
      return new Response(await metrics.render(), { headers: { 'Content-Type': 'text/plain; version=0.0.4' } });
    })
    .onError(async ({ code, request, error }) => {
      await services.durable();
      const headers = { 'X-Request-Id': newRequestId() };
      if (code === 'NOT_FOUND') {
        const path = new URL(request.url).pathname;
        return errorResponse(
          new AppError('NOT_FOUND', `No route ${request.method} ${path}.`, {
            howToFix: 'Use POST /v1/bot, /v1/merchant or /v1/owner with a JSON body {"action": …}, or GET /v1/public?action=…',
          }),
          headers,
        );
      }
      services.log.error('unhandled error', { request_id: headers['X-Request-Id'], error: (error as Error)?.message, stack: (error as Error)?.stack });
      return errorResponse(new AppError('INTERNAL_ERROR'), headers);
    });
  return app;
}

export type App = ReturnType<typeof createApp>;
