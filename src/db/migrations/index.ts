/**
 * Numbered migrations after schema.sql, in order: entry i takes the database from schema
 * version i + 1 to i + 2. Each is a `NNNN_name.sql` file imported as text and runs in one
 * transaction together with the user_version bump. Empty while schema.sql is the first release.
 */
export const MIGRATIONS: readonly string[] = [];
