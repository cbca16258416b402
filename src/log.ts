/**
 * JSON-lines logger on stdout (the MCP process passes stderr). Keys that can carry secrets are
 * redacted at any depth, so a careless `log.info({body})` cannot leak an API key, share or nonce.
 */

export type Level = 'debug' | 'info' | 'warn' | 'error';
const ORDER: Record<Level, number> = { debug: 10, info: 20, warn: 30, error: 40 };

const SECRET_KEY = /(api_?key|authorization|secret|share|nonce|round2|claim_code|password|passphrase|token|private|keypair|master)/i;
const secretKeys = new Map<string, boolean>();

function isSecretKey(key: string): boolean {
  let known = secretKeys.get(key);
  if (known === undefined) {
    known = SECRET_KEY.test(key);
    if (secretKeys.size < 10_000) secretKeys.set(key, known);
  }
  return known;
}

/** Replaces the values of secret-looking keys with "<redacted>", at any depth. */
export function redact(value: unknown, depth = 0): unknown {
  if (depth > 8 || value === null || typeof value !== 'object') return typeof value === 'bigint' ? value.toString() : value;
  if (value instanceof Error) return { name: value.name, message: value.message };
  if (Array.isArray(value)) return value.map((v) => redact(v, depth + 1));
  return redactInto({}, value as Record<string, unknown>, depth);
}

/**
 * Copies `fields` into `out` with secret-looking keys redacted (a key loop: Object.entries allocates
 * a pair per key). An own "__proto__" key (JSON.parse makes them) is left out, as assigning it to a
 * fresh object always did: it set the prototype, which JSON.stringify does not print.
 */
function redactInto(out: Record<string, unknown>, fields: Record<string, unknown>, depth: number): Record<string, unknown> {
  for (const k of Object.keys(fields)) {
    if (k !== '__proto__') out[k] = isSecretKey(k) ? '<redacted>' : redact(fields[k], depth + 1);
  }
  return out;
}

/** new Date().toISOString(), formatted once per millisecond: a busy server logs many lines per ms. */
let isoMs = NaN;
let isoText = '';
function isoNow(): string {
  const ms = Date.now();
  if (ms !== isoMs) {
    isoMs = ms;
    isoText = new Date(ms).toISOString();
  }
  return isoText;
}

export interface Logger {
  debug(msg: string, fields?: Record<string, unknown>): void;
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
  child(fields: Record<string, unknown>): Logger;
}

/** A logger writing one JSON object per line to `write` (default: stdout). */
export function createLogger(opts: { level?: Level; write?: (line: string) => void; base?: Record<string, unknown> } = {}): Logger {
  const min = ORDER[opts.level ?? 'info'];
  const write = opts.write ?? ((line: string) => process.stdout.write(line));
  const base = opts.base ?? {};
  const emit = (level: Level, msg: string, fields?: Record<string, unknown>) => {
    if (ORDER[level] < min) return;
    const entry: Record<string, unknown> = { time: isoNow(), level, msg, ...base };
    // Same keys and order as spreading redact(fields) after base, without the intermediate object.
    if (fields) redactInto(entry, fields, 0);
    write(`${JSON.stringify(entry)}\n`);
  };
  return {
    debug: (m, f) => emit('debug', m, f),
    info: (m, f) => emit('info', m, f),
    warn: (m, f) => emit('warn', m, f),
    error: (m, f) => emit('error', m, f),
    child: (fields) => createLogger({ ...opts, base: { ...base, ...fields } }),
  };
}

/** A logger that drops everything (tests that do not inspect logs). */
export const silentLogger: Logger = createLogger({ write: () => {} });
