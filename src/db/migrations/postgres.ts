/**
 * The PostgreSQL bodies of the migrations after schema version 18: a PostgreSQL ledger is created
 * at 18 from ../pg/schema.sql, and entry N takes it from N - 1 to N, in the same numbering as the
 * SQLite files beside this one (a migration is numbered once and carries a body per dialect). A
 * migration whose SQL both dialects accept imports the SQLite file here too. openPgStore refuses
 * to move a ledger past a version that has no body.
 */
export const PG_MIGRATIONS: Readonly<Record<number, string>> = {};
