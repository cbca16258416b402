/**
 * checkLedgerRewind on SQLite: the file of the highest clock this node saw is written only for
 * steps that committed, and a ledger whose clock is behind it is marked restored and counts on.
 */
import { expect, test } from 'bun:test';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { restoredMarker } from '../../src/db/backup.ts';
import { ledgerId, readLedgerClock, stepLedgerClock } from '../../src/db/ledger-clock.ts';
import { openDatabase } from '../../src/db/open.ts';
import { silentLogger } from '../../src/log.ts';
import { checkLedgerRewind } from '../../src/ops/rewind-check.ts';
import { tempDir } from '../helpers/services.ts';

const seen = (dir: string) => JSON.parse(readFileSync(join(dir, 'ledger-clock.json'), 'utf8')) as { ledger: string; clock: string };
const turn = () => new Promise((r) => setImmediate(r));

test('the file follows committed steps only: a step whose transaction rolled back is never written', async () => {
  const dir = tempDir('aw-rewind-check-');
  const db = openDatabase(':memory:', { network: 'simnet' });
  expect(await checkLedgerRewind(db, dir, silentLogger)).toBe(false);
  await turn();
  expect(seen(dir).clock).toBe('1');
  await expect(
    db.transaction(async () => {
      await stepLedgerClock(db);
      throw new Error('rolled back');
    }),
  ).rejects.toThrow('rolled back');
  await turn();
  expect(seen(dir).clock).toBe('1');
  expect(await readLedgerClock(db)).toBe(1n);
  await db.transaction(() => stepLedgerClock(db));
  await turn();
  expect(seen(dir).clock).toBe('2');
  await db.close();
});

test('a ledger whose clock is behind what this node saw is marked restored and counts on from there; a fresh one is not', async () => {
  const dir = tempDir('aw-rewind-check-');
  const db = openDatabase(':memory:', { network: 'simnet' });
  const id = await ledgerId(db, 'ledger-a');
  writeFileSync(join(dir, 'ledger-clock.json'), JSON.stringify({ ledger: id, clock: '7' }));
  expect(await checkLedgerRewind(db, dir, silentLogger)).toBe(true);
  expect(await restoredMarker(db)).not.toBeNull();
  expect(await readLedgerClock(db)).toBe(8n);
  await turn();
  expect(seen(dir)).toEqual({ ledger: id, clock: '8' });
  // Another ledger's file says nothing about this one.
  const other = openDatabase(':memory:', { network: 'simnet' });
  expect(await checkLedgerRewind(other, dir, silentLogger)).toBe(false);
  expect(await restoredMarker(other)).toBeNull();
  await db.close();
  await other.close();
});

test('a step is written only once its commit is on the disk: while the sync is held the file stays behind, after it the step is there', async () => {
  const dir = tempDir('aw-rewind-check-');
  const db = openDatabase(':memory:', { network: 'simnet' });
  let release: () => void = () => {};
  let held: Promise<void> | undefined;
  const durable = () => held;
  expect(await checkLedgerRewind(db, dir, silentLogger, durable)).toBe(false);
  await turn();
  expect(seen(dir).clock).toBe('1');
  held = new Promise<void>((r) => (release = r));
  await db.transaction(() => stepLedgerClock(db));
  await turn();
  // Committed but not yet synced: a crash now could lose the step, so the file must not claim it.
  expect(seen(dir).clock).toBe('1');
  held = undefined;
  release();
  await turn();
  expect(seen(dir).clock).toBe('2');
  await db.close();
});

test('an unreadable clock file does not stop the start: it is written again', async () => {
  const dir = tempDir('aw-rewind-check-');
  const db = openDatabase(':memory:', { network: 'simnet' });
  writeFileSync(join(dir, 'ledger-clock.json'), '{"ledger": "torn');
  expect(await checkLedgerRewind(db, dir, silentLogger)).toBe(false);
  await turn();
  expect(seen(dir).clock).toBe('1');
  await db.close();
});
