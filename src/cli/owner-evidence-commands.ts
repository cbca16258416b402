/**
 * Evidence an owner checks on its own machine (DESIGN §9.1):
 *   owner export-log WALLET_ID --out FILE [--from ISO] [--to ISO]   the wallet's decision log (JSONL)
 *   owner verify-log FILE [--key FILE|URL] [--rpc URL]              the chain of hashes, the signed heads and the signed range;
 *                                                                   with --rpc, every completed payment's parts against the chain
 * verify-log needs no daemon and no token. The log key is the JWKS the daemon publishes at
 * /.well-known/agent-wallet/log-key (a URL or a saved file); without --key it is taken from the
 * export's header, which proves the log consistent but not that the daemon you know signed it:
 * that is never reported OK, and exits 1.
 */
import { closeSync, existsSync, openSync, readFileSync, writeSync } from 'node:fs';
import { ConnectionError } from '../client/api.ts';
import { verifyLogLines, type LogReport } from '../domain/decision-log.ts';
import { verifyOwnerSignatures, type OwnerSignatureReport } from '../domain/owner-signatures.ts';
import { parseUsdc } from '../domain/money.ts';
import { commandFlags, type CliContext } from './context.ts';
import { ownerApi } from './owner-recovery-commands.ts';
import { EXIT, printData, progress } from './output.ts';
import { userPath } from './paths.ts';
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

/** The landed-payment checks: each completed payment's parts against what the chain moved. */
interface ChainCheck {
  checked: number;
  fee_account: string;
  first_mismatch: { seq: number; signature: string; reason: string } | null;
}

/**
 * Checks every completed payment or withdrawal row against the chain at `rpcUrl` (the daemon's
 * chain client, read-only), each part on its own: what the payee was credited (every owner but
 * the wallet and the fee account), what the fee account was credited, and what left the wallet.
 * A sum alone would pass a log that moved part of the amount into the fee.
 */
async function checkOnChain(lines: readonly string[], rpcUrl: string): Promise<ChainCheck> {
  const rows = lines.filter((l) => l.trim()).map((l) => JSON.parse(l) as Record<string, any>);
  const header = rows.find((r) => r.type === 'export');
  const address = header?.address as string | undefined;
  const feeAccount = header?.fee_account as string | undefined;
  if (!address || !feeAccount) throw new UsageError("the export names no wallet address or fee account; export it again with this release to check it against the chain");
  const { createRpcChainPort } = await import('../solana/port.ts');
  const chain = createRpcChainPort(rpcUrl);
  const result: ChainCheck = { checked: 0, fee_account: feeAccount, first_mismatch: null };
  for (const r of rows) {
    if (r.type !== 'row' || !/^(payment|withdrawal)\.completed$/.test(r.kind) || typeof r.data?.signature !== 'string') continue;
    const mismatch = (reason: string) => ({ ...result, first_mismatch: { seq: r.seq, signature: r.data.signature, reason } });
    const amount = parseUsdc(String(r.data.amount));
    const fee = parseUsdc(String(r.data.fee ?? 0));
    if (!amount.ok || !fee.ok) return mismatch('the row holds no readable amount');
    const landed = await chain.getTokenTransfersOf(r.data.signature).catch((err: Error) => {
      throw new ConnectionError(`--rpc ${rpcUrl} did not answer: ${err.message}`);
    });
    if (!landed) return mismatch('the chain does not know this signature');
    if (landed.err !== null) return mismatch('the transaction failed on chain');
    const moved = (owner: (o: string) => boolean) => landed.deltas.filter((d) => owner(d.owner)).reduce((sum, d) => sum + d.delta, 0n);
    const payee = moved((o) => o !== address && o !== feeAccount);
    const toFees = moved((o) => o === feeAccount && o !== address);
    const spent = -moved((o) => o === address);
    if (payee !== amount.micro) return mismatch(`the payee was credited ${payee} micro-USDC on chain, the log says ${amount.micro}`);
    if (toFees !== fee.micro) return mismatch(`the fee account was credited ${toFees} micro-USDC on chain, the log says ${fee.micro}`);
    if (spent !== amount.micro + fee.micro) return mismatch(`the wallet's USDC moved ${spent} micro-USDC on chain, the log says ${amount.micro + fee.micro}`);
    // A withdrawal names its address: the credit must be that owner's.
    const to = String(r.data.to ?? '');
    if (/^[1-9A-HJ-NP-Za-km-z]{32,44}$/.test(to) && to !== feeAccount && moved((o) => o === to) !== amount.micro) return mismatch(`the payee on chain is not ${to}, the address the log names`);
    result.checked++;
  }
  return result;
}

/** The human summary of a report that checks (under whichever key). */
function ownerText(owner: OwnerSignatureReport | null): string {
  if (!owner) return "The owner's passkey signatures were not checked: they need the export from row 1.";
  if (owner.keys_added === 0) return `No passkey: the owner's ${owner.unsigned_decisions} decisions were made by mail and session, not signed by the owner.`;
  return `Owner's passkeys: ${owner.keys_added} added; ${owner.signed_decisions} decisions carry the owner's valid assertion${owner.unsigned_decisions ? `, ${owner.unsigned_decisions} before the first passkey were not signed` : ''}.`;
}

function coverageText(report: LogReport): string {
  const r = report.range;
  const signed = `signed through row ${report.signed_through} (${report.heads} signed heads${r ? " and the export's signed range" : ''})`;
  if (report.coverage === 'whole') return `the whole log, rows 1–${r!.last_seq}, chained; ${signed}.`;
  if (report.coverage === 'partial') {
    if (r!.first_seq === null) return `partial export: the period ${r!.from ?? 'from the first row'} to ${r!.to ?? 'the export'} holds no rows.`;
    const before = r!.first_seq > 1 ? `; rows 1–${r!.first_seq - 1} are not in this file and were not checked` : '';
    const after = r!.to === null ? '' : `; rows after ${r!.last_seq} (from ${r!.to}) were not checked`;
    return `partial export: rows ${r!.first_seq}–${r!.last_seq}, the period from ${r!.from ?? 'the first row'} to ${r!.to ?? 'the export'}, chained; ${signed}${before}${after}.`;
  }
  const tail = report.unsigned_tail ? `; the last ${report.unsigned_tail} rows are after the last signed head: chained but not signed` : '';
  return `${report.rows} rows chained from row 1; ${signed}${tail}. The file has no signed end (cut short, or exported by an older release): rows after the last one may have been removed.`;
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
    printData(ctx, { wallet_id: positional[0], out: flags.out, lines: rows, next_step: `agent-wallet owner verify-log ${flags.out} --key ${api.baseUrl.replace(/\/v1\/?$/, '')}/.well-known/agent-wallet/log-key` }, `Exported to ${flags.out}. Check it: agent-wallet owner verify-log ${flags.out} --key ${api.baseUrl.replace(/\/v1\/?$/, '')}/.well-known/agent-wallet/log-key`);
    return EXIT.ok;
  },
  'verify-log': async (ctx) => {
    const { flags, positional } = commandFlags(ctx, { key: 'string', rpc: 'string' });
    const file = userPath(positional[0]!);
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
      keySource = "the file's own header (not the daemon's: nothing checked against it)";
    }
    const report = verifyLogLines(lines, publicKey);
    // The address and fee account are checked against the chain only as the signed end names them
    // (verifyLogLines matched the header to it): a header alone is whoever wrote the file's word.
    if (report.ok && flags.rpc && !report.range) throw new UsageError("--rpc needs the export's signed end (its last line), which names the wallet's address and the fee account; export the log again with this release");
    const chain = report.ok && flags.rpc ? await checkOnChain(lines, flags.rpc) : null;
    const keyChecked = Boolean(flags.key);
    // The owner's passkey signatures need the rows from row 1, where the owner's keys entered the log.
    const fromFirstRow = report.ok && report.rows > 0 && (report.range?.first_seq ?? 1) === 1;
    const owner: OwnerSignatureReport | null = fromFirstRow ? await verifyOwnerSignatures(report.wallet_id!, lines) : null;
    if (owner && !owner.ok) {
      printData(ctx, { ...report, ok: false, key_checked: keyChecked, key: keySource, owner_signatures: owner }, `BAD at row ${owner.first_bad!.seq}: ${owner.first_bad!.reason}. The daemon's log key signed it, but the owner did not: it is not the owner's decision.`);
      return EXIT.error;
    }
    if (chain?.first_mismatch) {
      printData(ctx, { ...report, ok: false, key_checked: keyChecked, key: keySource, chain }, `BAD on chain at row ${chain.first_mismatch.seq} (${chain.first_mismatch.signature}): ${chain.first_mismatch.reason}. ${chain.checked} payments matched before it.`);
      return EXIT.error;
    }
    const onChain = chain ? ` On chain: ${chain.checked} completed payments found, each crediting the payee the amount and the fee account (${chain.fee_account}) the fee the log says.` : '';
    if (!report.ok) {
      printData(ctx, { ...report, key_checked: keyChecked, key: keySource }, `BAD at line ${report.first_bad!.line}${report.first_bad!.seq === null ? '' : ` (row ${report.first_bad!.seq})`}: ${report.first_bad!.reason}. ${report.rows} rows checked before it; signed through row ${report.signed_through}.`);
      return EXIT.error;
    }
    // Without --key the heads were checked against the key the file itself names: whoever wrote
    // the file chose it, so that proves nothing about the daemon. Not an OK, and not exit 0.
    if (!keyChecked) {
      printData(
        ctx,
        { ...report, ok: false, key_checked: false, key: keySource, ...(chain ? { chain } : {}) },
        `NOT VERIFIED against the daemon's key: ${coverageText(report)} But the signatures were checked only against the key written in this file, which whoever made the file chose.${onChain} Pass --key with the daemon's /.well-known/agent-wallet/log-key (or a saved copy) to check it is the daemon's.`,
      );
      return EXIT.error;
    }
    printData(ctx, { ...report, key_checked: true, key: keySource, owner_signatures: owner, ...(chain ? { chain } : {}) }, `OK: ${coverageText(report)} Key: ${keySource}.${onChain} ${ownerText(owner)}`);
    return EXIT.ok;
  },
};
