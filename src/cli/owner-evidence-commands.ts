/**
 * Evidence an owner checks on its own machine (DESIGN §9.1):
 *   owner export-log WALLET_ID --out FILE [--from ISO] [--to ISO]   the wallet's decision log (JSONL)
 *   owner verify-log FILE [--key FILE|URL]                          the chain of hashes and the signed heads
 * verify-log needs no daemon and no token. The log key is the JWKS the daemon publishes at
 * /.well-known/agent-wallet/log-key (a URL or a saved file); without --key it is taken from the
 * export's header, which proves the log consistent but not that the daemon you know signed it.
 */
import { closeSync, existsSync, openSync, readFileSync, writeSync } from 'node:fs';
import { ConnectionError } from '../client/api.ts';
import { verifyLogLines } from '../domain/decision-log.ts';
import { commandFlags, type CliContext } from './context.ts';
import { ownerApi } from './owner-recovery-commands.ts';
import { EXIT, printData, progress } from './output.ts';
import { UsageError } from './usage.ts';

type Command = (ctx: CliContext) => Promise<number>;

function publicKeyOfJwks(jwks: unknown, where: string): Uint8Array {
  const key = (jwks as { keys?: { kty?: string; crv?: string; x?: string }[] })?.keys?.find((k) => k.kty === 'OKP' && k.crv === 'Ed25519' && typeof k.x === 'string');
  const bytes = key ? Uint8Array.from(Buffer.from(key.x!, 'base64url')) : null;
  if (!bytes || bytes.length !== 32) throw new UsageError(`${where} holds no Ed25519 key (a JWKS {"keys":[{"kty":"OKP","crv":"Ed25519","x":…}]})`);
  return bytes;
}

async function keyFrom(source: string): Promise<Uint8Array> {
  if (/^https?:\/\//.test(source)) {
    const res = await fetch(source).catch((err: Error) => {
      throw new ConnectionError(`could not fetch the log key from ${source}: ${err.message}`);
    });
    if (!res.ok) throw new ConnectionError(`the log key at ${source} answered HTTP ${res.status}`);
    return publicKeyOfJwks(await res.json(), source);
  }
  if (!existsSync(source)) throw new UsageError(`--key ${source}: no such file (pass the JWKS file or the daemon's /.well-known/agent-wallet/log-key URL)`);
  return publicKeyOfJwks(JSON.parse(readFileSync(source, 'utf8')), source);
}

export const OWNER_EVIDENCE_COMMANDS: Record<string, Command> = {
  'export-log': async (ctx) => {
    const { flags, positional } = commandFlags(ctx, { out: 'string', from: 'string', to: 'string' });
    if (!flags.out) throw new UsageError('--out FILE is required: where to write the log');
    if (existsSync(flags.out)) throw new UsageError(`${flags.out} exists; export-log never writes over a file`);
    const api = ownerApi(ctx);
    const query = new URLSearchParams({ wallet_id: positional[0]!, ...(flags.from ? { from: flags.from } : {}), ...(flags.to ? { to: flags.to } : {}) });
    const res = await api.fetchRaw(`/owner/decision-log?${query}`);
    const fd = openSync(flags.out, 'wx', 0o600);
    let rows = 0;
    try {
      for await (const chunk of res.body!) {
        writeSync(fd, chunk);
        for (const b of chunk) if (b === 10) rows++;
      }
    } finally {
      closeSync(fd);
    }
    progress(ctx, `wrote ${rows} lines to ${flags.out}`);
    printData(ctx, { wallet_id: positional[0], out: flags.out, lines: rows, next_step: `agent-wallet owner verify-log ${flags.out} --key ${api.baseUrl.replace(/\/v1\/?$/, '')}/.well-known/agent-wallet/log-key` }, `Exported to ${flags.out}. Check it: agent-wallet owner verify-log ${flags.out}`);
    return EXIT.ok;
  },
  'verify-log': async (ctx) => {
    const { flags, positional } = commandFlags(ctx, { key: 'string' });
    const file = positional[0]!;
    if (!existsSync(file)) throw new UsageError(`${file}: no such file`);
    const lines = readFileSync(file, 'utf8').split('\n');
    let publicKey: Uint8Array;
    let keySource: string;
    if (flags.key) {
      publicKey = await keyFrom(flags.key);
      keySource = flags.key;
    } else {
      const header = lines.map((l) => (l.trim() ? (JSON.parse(l) as Record<string, any>) : null)).find((v) => v?.type === 'export');
      publicKey = publicKeyOfJwks({ keys: header?.log_key ? [header.log_key] : [] }, `${file}'s export header`);
      keySource = 'the export header (pass --key with the daemon\'s /.well-known/agent-wallet/log-key to check it is the daemon\'s)';
    }
    const report = verifyLogLines(lines, publicKey);
    const summary = report.ok
      ? `OK: ${report.rows} rows chained; signed through row ${report.signed_through} (${report.heads} signed heads)${report.unsigned_tail ? `; the last ${report.unsigned_tail} rows are after the last signed head: chained but not signed` : ''}. Key: ${keySource}.`
      : `BAD at line ${report.first_bad!.line}${report.first_bad!.seq === null ? '' : ` (row ${report.first_bad!.seq})`}: ${report.first_bad!.reason}. ${report.rows} rows checked before it; signed through row ${report.signed_through}.`;
    printData(ctx, { ...report, key: keySource }, summary);
    return report.ok ? EXIT.ok : EXIT.error;
  },
};
