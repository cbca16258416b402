/** `agent-wallet admin doctor [--data-dir D] [--json]`: exit 0 when every check passes, 1 otherwise. */
import { resolve } from 'node:path';
import { runDoctor } from '../ops/doctor.ts';
import { dataDirEnv } from './admin-network.ts';
import { commandFlags, type CommandInput } from './context.ts';

export async function doctorCommand(input: CommandInput, io: { out: (t: string) => void; env: Record<string, string | undefined> }): Promise<number> {
  const { flags } = commandFlags(input, { 'data-dir': 'string', json: 'boolean' });
  const dataDir = resolve(flags['data-dir'] ?? io.env.AGENT_WALLET_DATA_DIR ?? './data');
  const checks = await runDoctor(dataDir, dataDirEnv(dataDir, io.env));
  const ok = checks.every((c) => c.ok);
  if (flags.json) io.out(`${JSON.stringify({ ok, checks }, null, 2)}\n`);
  else {
    for (const c of checks) {
      io.out(`${c.ok ? 'ok  ' : 'FAIL'}  ${c.name}: ${c.detail}\n`);
      if (c.how_to_fix) io.out(`      fix: ${c.how_to_fix}\n`);
    }
    io.out(ok ? `All ${checks.length} checks passed.\n` : `${checks.filter((c) => !c.ok).length} of ${checks.length} checks failed.\n`);
  }
  return ok ? 0 : 1;
}
