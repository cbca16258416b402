import { describe, expect, it } from 'bun:test';
import { BlockhashWindow } from '../../src/simnet/blockhashes.ts';
import { FeeMarket } from '../../src/simnet/fees.ts';
import { encodeJson } from '../../src/simnet/json.ts';
import { RateLimiter } from '../../src/simnet/rate-limit.ts';
import { Ledger, type LedgerEntry } from '../../src/simnet/ledger.ts';
import { uiAmountString, uiTokenAmount } from '../../src/simnet/tokens.ts';

function entry(signature: string, accountKeys: string[]): LedgerEntry {
  return {
    signature, slot: 1, blockTime: 0, wire: '', accountKeys, err: null, fee: '5000', preBalances: [], postBalances: [],
    preTokenBalances: [], postTokenBalances: [], logMessages: [], innerInstructions: [], computeUnitsConsumed: '0', returnData: null, memo: null,
  };
}

describe('BlockhashWindow', () => {
  it('accepts a blockhash through height + 150 and forgets it after', () => {
    const w = new BlockhashWindow();
    w.record('A', 10n);
    expect(w.lastValidBlockHeight('A')).toBe(160n);
    expect(w.isValid('A', 160n)).toBe(true);
    expect(w.isValid('A', 161n)).toBe(false);
    w.record('B', 161n);
    expect(w.lastValidBlockHeight('A')).toBeNull();
    expect(w.isValid('unknown', 11n)).toBe(false);
  });

  it('round-trips through entries()', () => {
    const w = new BlockhashWindow();
    w.record('A', 1n);
    w.record('B', 2n);
    expect(new BlockhashWindow(w.entries()).isValid('B', 100n)).toBe(true);
  });
});

describe('token amounts', () => {
  it('renders uiAmountString trimmed like the real RPC', () => {
    expect(uiAmountString(1_500_000n, 6)).toBe('1.5');
    expect(uiAmountString(0n, 6)).toBe('0');
    expect(uiAmountString(1n, 6)).toBe('0.000001');
    expect(uiAmountString(12_000_000n, 6)).toBe('12');
    expect(uiAmountString(7n, 0)).toBe('7');
  });

  it('writes uiAmount null for a zero transaction token balance only', () => {
    expect(uiTokenAmount(0n, 6, true).uiAmount).toBeNull();
    expect(uiTokenAmount(0n, 6).uiAmount).toBe(0);
    expect(uiTokenAmount(2_500_000n, 6)).toEqual({ amount: '2500000', decimals: 6, uiAmount: 2.5, uiAmountString: '2.5' });
  });
});

describe('Ledger.signaturesFor', () => {
  const ledger = new Ledger(['s1', 's2', 's3', 's4'].map((s, i) => entry(s, i === 2 ? ['y'] : ['x', 'x'])));
  const sigs = (page: Parameters<Ledger['signaturesFor']>[1]) => ledger.signaturesFor('x', page).map((e) => e.signature);

  it('lists an address once per transaction, newest first, honouring limit', () => {
    expect(sigs({ limit: 10 })).toEqual(['s4', 's2', 's1']);
    expect(sigs({ limit: 1 })).toEqual(['s4']);
  });

  it('treats before and until as exclusive bounds', () => {
    expect(sigs({ limit: 10, before: 's4' })).toEqual(['s2', 's1']);
    expect(sigs({ limit: 10, before: 's3' })).toEqual(['s2', 's1']);
    expect(sigs({ limit: 10, until: 's1' })).toEqual(['s4', 's2']);
    expect(sigs({ limit: 10, before: 'unknown' })).toEqual([]);
  });

  it('leaves out entries of slots after maxSlot (a lagging node) without shortening the page before them', () => {
    const lagging = new Ledger(['a', 'b', 'c'].map((s, i) => ({ ...entry(s, ['x']), slot: 10 + i })));
    expect(lagging.signaturesFor('x', { limit: 1, maxSlot: 11 }).map((e) => e.signature)).toEqual(['b']);
    expect(lagging.signaturesFor('x', { limit: 10, maxSlot: 9 })).toEqual([]);
  });

  it('records a signature only once', () => {
    ledger.add(entry('s4', ['x']));
    expect(ledger.all()).toHaveLength(4);
  });
});

describe('encodeJson', () => {
  it('writes bigint as bare JSON numbers without losing digits and omits undefined members', () => {
    expect(encodeJson({ a: 18446744073709551615n, b: undefined, c: [1, 'x', null, true] })).toBe('{"a":18446744073709551615,"c":[1,"x",null,true]}');
  });
});

describe('FeeMarket', () => {
  it("answers per slot the higher of the slot's minimum price and the given accounts' minimums, 0 for empty slots", () => {
    const m = new FeeMarket();
    m.record(10, 500n, ['payer', 'pool']);
    m.record(10, 2_000n, ['payer2', 'hot']);
    m.record(10, 9_000n, ['payer3', 'hot']);
    m.record(12, 0n, ['payer']);
    const at = (accounts: string[]) => m.recent(12n, accounts, null).slice(-3).map((f) => [f.slot, f.prioritizationFee]);
    expect(at([])).toEqual([[10n, 500n], [11n, 0n], [12n, 0n]]);
    expect(at(['hot'])).toEqual([[10n, 2_000n], [11n, 0n], [12n, 0n]]);
    expect(at(['pool', 'hot'])).toEqual([[10n, 2_000n], [11n, 0n], [12n, 0n]]);
    expect(at(['elsewhere'])).toEqual([[10n, 500n], [11n, 0n], [12n, 0n]]);
  });

  it('covers the last 150 slots oldest first, forgets older ones, and raises every slot to a floor', () => {
    const m = new FeeMarket();
    m.record(1, 7n, ['a']);
    m.record(200, 3n, ['a']);
    const fees = m.recent(200n, ['a'], null);
    expect(fees.map((f) => f.slot)).toEqual(Array.from({ length: 150 }, (_, i) => BigInt(51 + i)));
    expect(m.recent(150n, ['a'], null)[0]).toEqual({ slot: 1n, prioritizationFee: 0n });
    expect(m.recent(200n, ['a'], 5n).every((f) => f.prioritizationFee === 5n)).toBe(true);
    expect(m.recent(3n, [], null)).toHaveLength(3);
  });
});

describe('RateLimiter', () => {
  it('admits at most rps calls in any rolling second, a batch whole or not at all', () => {
    const r = new RateLimiter(5);
    expect(r.admit(3, 0)).toBe(true);
    expect(r.admit(3, 100)).toBe(false);
    expect(r.admit(2, 200)).toBe(true);
    expect(r.admit(1, 999)).toBe(false);
    expect(r.admit(3, 1000)).toBe(true);
    expect(r.admit(1, 1100)).toBe(false);
    expect(r.admit(2, 1200)).toBe(true);
    expect(r.admit(6, 5000)).toBe(false);
  });
});
