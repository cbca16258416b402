/**
 * The deposit watcher: incoming USDC on each wallet's token account, found through the
 * account's signatures since a stored cursor and recorded once each (a signature already in
 * the wallet's ledger — e.g. a payment from another of our wallets — is not counted again).
 */
import type { Address } from '@solana/kit';
import { newId } from '../contract/ids.ts';
import { allWalletAddresses, depositCursor, setDepositCursor } from '../db/deposits.ts';
import { appendEvent } from '../db/events.ts';
import { hasSignature, insertTx, isOwnOutgoing } from '../db/transactions.ts';
import { toUsdcNumber } from '../domain/money.ts';
import { usdcAta } from '../solana/ata.ts';
import type { Services } from '../services.ts';
import { signaturesSince } from '../solana/history.ts';
import { forgetBalance } from '../payments/balance-cache.ts';
import type { JobDef } from './runner.ts';
import { carriesWatchedReference } from '../earning/scan.ts';
import { fulfilFromDeposit } from '../earning/funding.ts';


/** One pass over every wallet; exported for tests. */
export async function scanDeposits(services: Services): Promise<number> {
  const mint = services.config.usdcMint as Address;
  let recorded = 0;
  for (const w of allWalletAddresses(services.db)) {
    const ata = await usdcAta(w.address as Address, mint);
    const until = depositCursor(services.db, w.wallet_id) ?? undefined;
    const sigs = await signaturesSince(services.chain, ata, until);
    if (sigs.length === 0) continue;
    // Oldest first, so the cursor only moves past what was recorded.
    for (const s of [...sigs].reverse()) {
      if (s.err !== null || hasSignature(services.db, w.wallet_id, s.signature) || isOwnOutgoing(services.db, s.signature)) {
        services.db.transaction(() => setDepositCursor(services.db, w.wallet_id, s.signature, services.now().getTime())).immediate();
        continue;
      }
      const transfers = await services.chain.getTokenTransfersOf(s.signature);
      if (!transfers) break;
      // A transfer carrying a watched paylink reference key is the paylink job's to record (src/earning/scan.ts).
      if (carriesWatchedReference(services, w.wallet_id, transfers.accountKeys)) {
        services.db.transaction(() => setDepositCursor(services.db, w.wallet_id, s.signature, services.now().getTime())).immediate();
        continue;
      }
      const mine = transfers.deltas.find((d) => d.account === ata && d.mint === mint);
      const payer = transfers.deltas.find((d) => d.mint === mint && d.delta < 0n);
      const now = services.now().getTime();
      services.db
        .transaction(() => {
          if (mine && mine.delta > 0n && !hasSignature(services.db, w.wallet_id, s.signature)) {
            const id = newId('transaction');
            forgetBalance(w.address);
            insertTx(services.db, { transaction_id: id, wallet_id: w.wallet_id, type: 'deposit', direction: 'in', status: 'completed', amount: mine.delta, counterparty: payer?.owner ?? null, signature: s.signature, completed_at: now, now });
            appendEvent(services.db, { walletId: w.wallet_id, type: 'payment.received', data: { transaction_id: id, amount: toUsdcNumber(mine.delta), from: payer?.owner ?? null, signature: s.signature, kind: 'deposit' }, now });
            fulfilFromDeposit(services, w.wallet_id, mine.delta, id, now);
            recorded++;
          }
          setDepositCursor(services.db, w.wallet_id, s.signature, now);
        })
        .immediate();
    }
  }
  return recorded;
}

export function depositJob(services: Services): JobDef {
  return { name: 'deposits', schedule: { everySeconds: 3 }, run: async () => void (await scanDeposits(services)), runAtStart: true };
}
