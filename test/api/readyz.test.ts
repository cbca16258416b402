import { expect, test } from 'bun:test';
import { createApp } from '../../src/api/app.ts';
import { SCHEMA_VERSION } from '../../src/db/open.ts';
import { call, testServices } from '../helpers/services.ts';

test('/readyz: ready on a current ledger; not ready (503, Retry-After, how to fix) while restoring, when a newer release moved the ledger past what this one serves, when the node clock is off, and when the ledger does not answer', async () => {
  const services = testServices();
  const app = createApp(services);
  const ready = await call(app, '/readyz');
  expect(ready.status).toBe(200);
  expect(ready.body).toEqual({ status: 'ready', schema_version: SCHEMA_VERSION, release_schema_version: SCHEMA_VERSION, network: 'simnet', nodes: 1, chain_watch: 'this node' });

  services.restore = { active: true, untilBlockHeight: 1_000n, blockHeight: 900n };
  const restoring = await call(app, '/readyz');
  expect(restoring.status).toBe(503);
  expect(restoring.headers.get('retry-after')).toBe('5');
  expect(restoring.body).toMatchObject({ status: 'not_ready', reason: expect.stringContaining('restoring') });
  services.restore = { active: false, untilBlockHeight: null, blockHeight: null };

  // A node of a newer release moved the shared ledger on with a migration this release cannot serve: no traffic.
  const setOldest = (v: number) => services.db.run("INSERT INTO meta (key, value) VALUES ('oldest_serving', ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value", String(v));
  if (services.db.dialect === 'sqlite') await services.db.exec(`PRAGMA user_version = ${SCHEMA_VERSION + 1}`);
  else {
    await services.db.run("UPDATE meta SET value = ? WHERE key = 'schema_version'", String(SCHEMA_VERSION + 1));
    await setOldest(SCHEMA_VERSION + 1);
  }
  const newer = await call(app, '/readyz');
  expect(newer.status).toBe(503);
  expect(newer.body.reason).toBe(`the ledger is at schema version ${SCHEMA_VERSION + 1}; this node's release has ${SCHEMA_VERSION}`);
  expect(newer.body.how_to_fix).toContain('Upgrade this node');
  if (services.db.dialect === 'postgres') {
    // Its migration only added: the older release serves on through the rolling upgrade; two versions ahead, it does not.
    await setOldest(SCHEMA_VERSION);
    expect((await call(app, '/readyz')).body).toMatchObject({ status: 'ready', schema_version: SCHEMA_VERSION + 1, release_schema_version: SCHEMA_VERSION });
    await services.db.run("UPDATE meta SET value = ? WHERE key = 'schema_version'", String(SCHEMA_VERSION + 2));
    expect((await call(app, '/readyz')).status).toBe(503);
  }

  // A node whose clock is off the database server's takes no traffic.
  const realNodes = services.nodes;
  services.nodes = { ...realNodes, shared: true, holds: () => true, clockSkewMs: () => -7_400 };
  if (services.db.dialect === 'sqlite') await services.db.exec(`PRAGMA user_version = ${SCHEMA_VERSION}`);
  else await services.db.run("UPDATE meta SET value = ? WHERE key = 'schema_version'", String(SCHEMA_VERSION));
  const skewed = await call(app, '/readyz');
  expect(skewed.status).toBe(503);
  expect(skewed.body.reason).toContain("this node's clock is -7.4 s off the database server's");
  expect(skewed.body.how_to_fix).toContain('NTP');
  services.nodes = realNodes;

  await services.db.close();
  const gone = await call(app, '/readyz');
  expect(gone.status).toBe(503);
  expect(gone.body.reason).toBe('the ledger does not answer');
});
