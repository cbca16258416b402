/**
 * A throwaway PostgreSQL cluster for CI, outliving this command:
 *   bun scripts/pg-cluster.ts start      prints {"url", "dir", "pid"} on one line
 *   bun scripts/pg-cluster.ts stop DIR   stops it and removes DIR
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { startPgCluster, stopPgCluster } from '../test/helpers/pg.ts';

const [command, dir] = process.argv.slice(2);
if (command === 'start') {
  const cluster = await startPgCluster();
  // postmaster.pid's first line is the server's pid; pg_ctl has detached the server already.
  const pid = Number(readFileSync(join(cluster.dir, 'postmaster.pid'), 'utf8').split('\n')[0]);
  console.log(JSON.stringify({ url: cluster.url, dir: cluster.dir, pid }));
} else if (command === 'stop' && dir) {
  await stopPgCluster(dir);
} else {
  console.error('usage: bun scripts/pg-cluster.ts start | stop DIR');
  process.exit(2);
}
