/**
 * The PostgreSQL bodies of the migrations after schema version 18: a PostgreSQL ledger is created
 * at 18 from ../pg/schema.sql, and entry N takes it from N - 1 to N, in the same numbering as the
 * SQLite files beside this one (a migration is numbered once and carries a body per dialect). A
 * migration whose SQL both dialects accept imports the SQLite file here too. openPgStore refuses
 * to move a ledger past a version that has no body.
 */
import settledOut from './0018_settled_out.pg.sql' with { type: 'text' };
import ownerPasskeys from './0019_owner_passkeys.pg.sql' with { type: 'text' };

export const PG_MIGRATIONS: Readonly<Record<number, string>> = { 19: settledOut, 20: ownerPasskeys };

/**
 * Migrations that leave the ledger usable by the release before them — they only add (a column
 * with a default, a table, an index, a trigger that keeps the addition right) — so a rolling
 * upgrade keeps the older nodes serving while the first new one has moved the ledger on. A
 * migration not listed (one that renames, drops or changes a meaning) stops them: their /readyz
 * says so and their restart is refused until they run the new release. 20 adds only tables, but a
 * release before it would let a mail link decide for an owner who has a passkey, so it stops them.
 */
export const COMPATIBLE_WITH_PREVIOUS: ReadonlySet<number> = new Set([19]);

/** The oldest release (by schema version) that may serve a ledger moved to `version`. */
export const oldestServing = (version: number, compatible: ReadonlySet<number> = COMPATIBLE_WITH_PREVIOUS): number => (compatible.has(version) ? version - 1 : version);

/** Whether a release at `binary` may serve a ledger at `version` whose oldest serving release is `oldest`. */
export const mayServe = (binary: number, version: number, oldest: number): boolean => version === binary || (version === binary + 1 && oldest <= binary);

/** The statements that give an empty database the shape of `target`: schema.sql, then each later body in order. */
export function pgSchemaThrough(schema: string, from: number, target: number): string[] {
  const out = [schema];
  for (let v = from + 1; v <= target; v++) {
    const body = PG_MIGRATIONS[v];
    if (body === undefined) throw new Error(`no PostgreSQL body for migration ${v}`);
    out.push(body);
  }
  return out;
}
