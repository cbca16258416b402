/**
 * The PostgreSQL bodies of the migrations after schema version 18: a PostgreSQL ledger is created
 * at 18 from ../pg/schema.sql, and entry N takes it from N - 1 to N, in the same numbering as the
 * SQLite files beside this one (a migration is numbered once and carries a body per dialect). A
 * migration whose SQL both dialects accept imports the SQLite file here too. openPgStore refuses
 * to move a ledger past a version that has no body.
 */
import settledOut from './0018_settled_out.pg.sql' with { type: 'text' };

export const PG_MIGRATIONS: Readonly<Record<number, string>> = { 19: settledOut };

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
