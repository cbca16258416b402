/**
 * Evidence an owner checks on its own machine (DESIGN §9.1):
 *   owner export-log WALLET_ID --out FILE [--from ISO] [--to ISO]   the wallet's decision log (JSONL)
 *   owner verify-log FILE [--key FILE|URL] [--rpc URL]              the chain of hashes and the signed heads; with --rpc,
 *                                                                   that every completed payment is on chain, moving that amount
 * verify-log needs no daemon and no token. The log key is the JWKS the daemon publishes at
 * /.well-known/agent-wallet/log-key (a URL or a saved file); without --key it is taken from the
 * export's header, which proves the log consistent but not that the daemon you know signed it.
 */
import { closeSync, existsSync, openSync, readFileSync, writeSync } from 'node:fs';
import { ConnectionError } from '../client/api.ts';
import { verifyLogLines } from '../domain/decision-log.ts';
import { parseUsdc } from '../domain/money.ts';
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

/** One landed-payment check: the wallet's USDC went down by amount + fee in that transaction. */
interface ChainCheck {
  checked: number;
  first_mismatch: { seq: number; signature: string; reason: string } | null;
}

/** Checks every completed payment or withdrawal row against the chain at `rpcUrl` (the daemon's chain client, read-only). */
async function checkOnChain(lines: readonly string[], rpcUrl: string): Promise<ChainCheck> {
  const rows = lines.filter((l) => l.trim()).map((l) => JSON.parse(l) as Record<string, any>);
  const address = rows.find((r) => r.type === 'export')?.address as string | undefined;
  if (!address) throw new UsageError('the export names no wallet address; export it again with this release to check it against the chain');
  const { createRpcChainPort } = await import('../solana/port.ts');
  const chain = createRpcChainPort(rpcUrl);
  const result: ChainCheck = { checked: 0, first_mismatch: null };
  for (const r of rows) {
    if (r.type !== 'row' || !/^(payment|withdrawal)\.completed$/.test(r.kind) || typeof r.data?.signature !== 'string') continue;
    const mismatch = (reason: string) => ({ ...result, first_mismatch: { seq: r.seq, signature: r.data.signature, reason } });
    const expected = parseUsdc(String(r.data.amount));
    const fee = parseUsdc(String(r.data.fee ?? 0));
    if (!expected.ok || !fee.ok) return mismatch('the row holds no readable amount');
    const landed = await chain.getTokenTransfersOf(r.data.signature).catch((err: Error) => {
      throw new ConnectionError(`--rpc ${rpcUrl} did not answer: ${err.message}`);
    });
    if (!landed) return mismatch('the chain does not know this signature');
    if (landed.err !== null) return mismatch('the transaction failed on chain');
    const moved = -landed.deltas.filter((d) => d.owner === address).reduce((sum, d) => sum + d.delta, 0n);
    if (moved !== expected.micro + fee.micro) return mismatch(`the wallet's USDC moved ${moved} micro-USDC on chain, the log says ${expected.micro + fee.micro}`);
    result.checked++;
  }
  return result;
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
    const { flags, positional } = commandFlags(ctx, { key: 'string', rpc: 'string' });
    const file = positional[0]!;
    if (!existsSync(file)) throw new UsageError(`${file}: no such file`);
    const lines = readFileSync(file, 'utf8').split('\n');
    let publicKey: Uint8Array;
    let keySource: string;
    if (flags.key) {
      publicKey = await keyFrom(flags.key);
      keySource = flags.key;
    } else {
      const parsed = (l: string): Record<string, any> | null => {
        try {
          return JSON.parse(l) as Record<string, any>;
        } catch {
          return null;
        }
      };
      const header = lines.map(parsed).find((v) => v?.type === 'export');
      publicKey = publicKeyOfJwks({ keys: header?.log_key ? [header.log_key] : [] }, `${file}'s export header`);
      keySource = 'the export header (pass --key with the daemon\'s /.well-known/agent-wallet/log-key to check it is the daemon\'s)';
    }
    const report = verifyLogLines(lines, publicKey);
    const chain = report.ok && flags.rpc ? await checkOnChain(lines, flags.rpc) : null;
    if (chain?.first_mismatch) {
      printData(ctx, { ...report, ok: false, key: keySource, chain }, `BAD on chain at row ${chain.first_mismatch.seq} (${chain.first_mismatch.signature}): ${chain.first_mismatch.reason}. ${chain.checked} payments matched before it.`);
      return EXIT.error;
    }
    const summary = report.ok
      ? `OK: ${report.rows} rows chained; signed through row ${report.signed_through} (${report.heads} signed heads)${report.unsigned_tail ? `; the last ${report.unsigned_tail} rows are after the last signed head: chained but not signed` : ''}. Key: ${keySource}.`
      : `BAD at line ${report.first_bad!.line}${report.first_bad!.seq === null ? '' : ` (row ${report.first_bad!.seq})`}: ${report.first_bad!.reason}. ${report.rows} rows checked before it; signed through row ${report.signed_through}.`;
    printData(ctx, { ...report, key: keySource, ...(chain ? { chain } : {}) }, `${summary}${chain ? ` On chain: ${chain.checked} completed payments found, each moving the amount the log says.` : ''}`);
    return report.ok ? EXIT.ok : EXIT.error;
  },
};
