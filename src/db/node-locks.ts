/**
 * What several daemons on one ledger hold against each other (DESIGN §10.2, README "More than one
 * node"): a job's tick, the chain watch, an idempotency key while its request runs. On PostgreSQL
 * these are session advisory locks on one connection of the node's own, so a node that dies —
 * kill -9, a reboot, a cut cable once the server's keepalives notice — lets go of all of them with
 * its connection, and no lease has to time out. On SQLite one daemon serves the data dir
 * (daemon/lock.ts) and holds everything.
 *
 * A session lock lives exactly as long as its server session. Every statement on the connection
 * also reads the session's pid: a new pid means the connection was made again (the server
 * restarted, the network broke), every lock it held is gone, and the holder is told (`onLost`).
 */
import { SQL } from 'bun';
import type { Fence } from './fence.ts';

export interface NodeLocks {
  /** True when other nodes may share the ledger (PostgreSQL). */
  readonly shared: boolean;
  /** Runs `fn` if no node (this one included) runs `key` now, holding it meanwhile; false when one does. */
  exclusive(key: string, fn: () => Promise<void>): Promise<boolean>;
  /** Takes `key` until `release` (or this node's death); false when another node holds it. */
  tryTake(key: string): Promise<boolean>;
  release(key: string): Promise<void>;
  /** Whether this node still holds `key`, as of the last heartbeat. */
  holds(key: string): boolean;
  /** False while the lock connection does not answer: this node can tell nothing of what it holds. */
  answering(): boolean;
  /** This node's clock less the database server's, as of the last heartbeat (0 alone). */
  clockSkewMs(): number;
  /** Daemons on this ledger at the last heartbeat, this one included. */
  liveNodes(): number;
  /** What fences writes by `key` while this node holds it (null alone, or when it does not hold it). */
  fenceOf(key: string): Fence | null;
  /** Whether some node (this one or another) holds `key` now. */
  heldAnywhere(key: string): Promise<boolean>;
  /** Told once for each held key that was lost with the connection. */
  onLost(fn: (key: string) => void): void;
  close(): Promise<void>;
}

/** One daemon per data dir: every lock is its own. Ticks and claims keep their in-process guards. */
export function localNodeLocks(): NodeLocks {
  const held = new Set<string>();
  return {
    shared: false,
    exclusive: async (key, fn) => {
      if (held.has(key)) return false;
      held.add(key);
      try {
        await fn();
      } finally {
        held.delete(key);
      }
      return true;
    },
    tryTake: async (key) => {
      held.add(key);
      return true;
    },
    release: async (key) => void held.delete(key),
    holds: (key) => held.has(key),
    answering: () => true,
    fenceOf: () => null,
    clockSkewMs: () => 0,
    liveNodes: () => 1,
    heldAnywhere: async (key) => held.has(key),
    onLost: () => undefined,
    close: async () => undefined,
  };
}

/** Advisory lock classes of the two-int form: a node's presence (its random id), distinct from the one-bigint keys below. */
const PRESENCE_CLASS = 4172011;
/** Advisory locks are per database; pg_locks shows the whole server's. */
const THIS_DATABASE = '(SELECT oid FROM pg_database WHERE datname = current_database())';
/** How often the node counts its peers, checks its session and compares its clock with the server's. */
export const HEARTBEAT_MS = 1_000;
/**
 * How far a node's clock may be from the database server's. Beyond it the node takes no traffic
 * (/readyz) and runs no job: its clock would date rows, open and close budget windows and expire
 * intents and paylinks early or late against the other nodes'.
 */
export const MAX_CLOCK_SKEW_MS = 2_000;

/** Whether this node's clock agrees with the ledger's well enough to date and expire things. */
export const clockTrusted = (nodes: NodeLocks): boolean => Math.abs(nodes.clockSkewMs()) <= MAX_CLOCK_SKEW_MS;

/** Daemons running on the ledger at `url` now (each holds its presence lock): for commands that need them all stopped. */
export async function pgRunningNodes(url: string, opts: { tls?: boolean } = {}): Promise<number> {
  const sql = new SQL(url, { max: 1, bigint: true, ...(opts.tls ? { tls: true } : {}) });
  try {
    const [row] = await sql.unsafe(`SELECT count(*) AS n FROM pg_locks WHERE locktype = 'advisory' AND database = ${THIS_DATABASE} AND classid = $1 AND objsubid = 2 AND granted`, [PRESENCE_CLASS]);
    return Number(row.n);
  } finally {
    await sql.close();
  }
}

/**
 * Session advisory locks on a dedicated connection of `url`. The server notices a dead peer's
 * connection at once when the process dies (the kernel closes its socket) and within about 11 s
 * when the machine or the network does (the keepalives set below).
 */
export async function pgNodeLocks(url: string, opts: { tls?: boolean; onError?: (err: Error) => void; now?: () => number } = {}): Promise<NodeLocks> {
  const now = opts.now ?? Date.now;
  const sql = new SQL(url, { max: 1, bigint: true, idleTimeout: 0, ...(opts.tls ? { tls: true } : {}) });
  const nodeId = (Math.random() * 0x7fffffff) | 0;
  const held = new Set<string>();
  const lostHandlers: ((key: string) => void)[] = [];
  let pid: bigint | null = null;
  let peers = 1;
  let skew = 0;
  let closed = false;
  /** The last heartbeat failed: act on no lock until one answers (on the same session: they are still ours). */
  let suspect = false;

  /** Runs one statement on the lock connection; a changed session pid means every lock was lost (told, then taken again if it is presence). */
  const run = async <T extends Record<string, unknown>>(text: string, params: unknown[] = []): Promise<T> => {
    const rows = (await sql.unsafe(`SELECT pg_backend_pid() AS aw_pid, * FROM (${text}) AS q`, params)) as (T & { aw_pid: bigint })[];
    const row = rows[0]!;
    if (pid !== null && row.aw_pid !== pid) {
      pid = row.aw_pid;
      const lost = [...held];
      held.clear();
      for (const key of lost) for (const fn of lostHandlers) fn(key);
      await announce();
    }
    pid = row.aw_pid;
    suspect = false;
    return row;
  };
  // The server ends a session whose peer stopped answering: 5 s idle, then 3 probes 2 s apart.
  const announce = async () => {
    await sql.unsafe("SELECT set_config('tcp_keepalives_idle', '5', false), set_config('tcp_keepalives_interval', '2', false), set_config('tcp_keepalives_count', '3', false), set_config('application_name', 'agent-wallet node', false)");
    await sql.unsafe('SELECT pg_advisory_lock($1, $2)', [PRESENCE_CLASS, nodeId]);
  };
  const key = (name: string) => `aw:${name}`;
  const heartbeat = async () => {
    const sent = now();
    const row = await run<{ nodes: bigint; db_ms: bigint }>(
      `SELECT count(*) AS nodes, (extract(epoch from clock_timestamp()) * 1000)::bigint AS db_ms FROM pg_locks WHERE locktype = 'advisory' AND database = ${THIS_DATABASE} AND classid = $1 AND objsubid = 2 AND granted`,
      [PRESENCE_CLASS],
    );
    peers = Math.max(1, Number(row.nodes));
    // The server read its clock somewhere within the round trip: its middle is the best guess.
    skew = Math.round((sent + now()) / 2) - Number(row.db_ms);
  };

  await announce();
  await heartbeat();
  const timer = setInterval(() => {
    heartbeat().catch((err: Error) => {
      // The server cannot be asked whether the locks are still ours: act on none until it answers.
      if (closed) return;
      suspect = true;
      opts.onError?.(err);
    });
  }, HEARTBEAT_MS);
  timer.unref();

  /** Takes in flight, by name: a second take of one name waits for the first (the server would count the lock twice). */
  const taking = new Map<string, Promise<boolean>>();
  const take = async (name: string) => {
    // Taken again by its own session a lock would need two unlocks: ask only whether the session (and so the lock) is still the same.
    if (held.has(name)) {
      await run('SELECT 1 AS ok');
      return held.has(name);
    }
    const row = await run<{ ok: boolean }>('SELECT pg_try_advisory_lock(hashtextextended($1, 0)) AS ok', [key(name)]);
    if (row.ok) held.add(name);
    return row.ok;
  };
  const tryTake = (name: string): Promise<boolean> => {
    let pending = taking.get(name);
    if (!pending) {
      pending = take(name).finally(() => taking.delete(name));
      taking.set(name, pending);
    }
    return pending;
  };
  const release = async (name: string) => {
    if (!held.delete(name)) return;
    await run('SELECT pg_advisory_unlock(hashtextextended($1, 0)) AS ok', [key(name)]);
  };

  return {
    shared: true,
    async exclusive(name, fn) {
      // Held or being taken here already: this node's own run of it is still going (a start-up run beside a tick).
      if (held.has(name) || taking.has(name) || !(await tryTake(name))) return false;
      try {
        await fn();
      } finally {
        await release(name).catch(() => undefined);
      }
      return true;
    },
    tryTake,
    release,
    holds: (name) => !suspect && held.has(name),
    answering: () => !suspect,
    fenceOf: (name) => (held.has(name) && pid !== null ? { pid, key: key(name) } : null),
    clockSkewMs: () => skew,
    liveNodes: () => peers,
    async heldAnywhere(name) {
      const row = await run<{ held: boolean }>(
        `SELECT EXISTS (SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND database = ${THIS_DATABASE} AND objsubid = 1 AND granted AND ((classid::int8 << 32) | objid::int8) = hashtextextended($1, 0)) AS held`,
        [key(name)],
      );
      return row.held;
    },
    onLost: (fn) => void lostHandlers.push(fn),
    async close() {
      closed = true;
      clearInterval(timer);
      held.clear();
      await sql.close();
    },
  };
}
