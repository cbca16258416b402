import { describe, expect, test } from 'bun:test';
import { auditActor, auditSentence, type AuditNames } from '../../src/domain/audit-sentence.ts';

const names: AuditNames = {
  owners: new Map([['own_f3t1', 'o@example.com']]),
  transactions: new Map([
    ['tx_pay', { type: 'payment', to: 'data-vendor', money: { amount: 18_090_000n, fee: 10_000n, setup_fee: 0n } }],
    ['tx_x402', { type: 'x402', to: 'api.example.com', money: { amount: 500_000n, fee: 0n, setup_fee: 0n } }],
    ['tx_wd', { type: 'withdrawal', to: '9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin', money: { amount: 5_000_000n, fee: 20_000n, setup_fee: 0n } }],
  ]),
  wallet: { name: 'shopping-bot' },
};
const owner = (via: string) => `owner:own_f3t1 via ${via}`;
const say = (kind: string, actor: string, data: unknown = {}) => auditSentence({ kind, actor, data }, names);

describe('audit entries as sentences', () => {
  test('a pre-approved payment: amount, payee, kind and the rule that decided', () => {
    expect(say('decision', 'agent', { transaction_id: 'tx_pay', amount: 18.09, fee: 0.01, to: 'data-vendor', status: 'pre_approved', reason: 'Within every guard rail.' })).toBe(
      'Paid 18.09 + 0.01 fee = 18.1 USDC to data-vendor (payment, decided by the guard rails: Within every guard rail.)',
    );
  });
  test('a decision whose transaction is not found uses its own numbers', () => {
    expect(say('decision', 'agent', { transaction_id: 'tx_gone', amount: 2, fee: 0.01, to: 'bob', status: 'awaiting_approval', reason: 'Above 1 USDC.' })).toBe(
      'Asked the owner to approve 2 + 0.01 fee = 2.01 USDC to bob (payment, decided by the guard rails: Above 1 USDC.)',
    );
  });
  test('a refused x402 purchase', () => {
    expect(say('decision', 'agent', { transaction_id: 'tx_x402', status: 'rejected', reason: 'Above the x402 cap.' })).toBe(
      'Refused 0.5 + 0 fee = 0.5 USDC to api.example.com (x402 purchase, decided by the guard rails: Above the x402 cap.)',
    );
  });
  test('approvals name the owner by e-mail and the channel, never the owner id', () => {
    const s = say('approval.approved', owner('email'), { transaction_id: 'tx_wd', approval_id: 'apr_1', amount: '5020000', decided_by: owner('email') });
    expect(s).toBe('The owner (o@example.com) approved the withdrawal of 5 + 0.02 fee = 5.02 USDC to 9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin by e-mail');
    expect(say('approval.rejected', owner('dashboard'), { transaction_id: 'tx_pay' })).toBe(
      'The owner (o@example.com) rejected the payment of 18.09 + 0.01 fee = 18.1 USDC to data-vendor from the dashboard',
    );
    expect(say('approval.approved', 'system:restore', { transaction_id: 'tx_pay' })).toBe(
      'The service approved the payment of 18.09 + 0.01 fee = 18.1 USDC to data-vendor after a restore',
    );
  });
  test('guard rails set, now or with a pending loosening', () => {
    expect(say('guard_rails.set', owner('dashboard'), { apply_at: null })).toBe('The owner (o@example.com) set the guard rails from the dashboard');
    expect(say('guard_rails.set', owner('api'), { apply_at: '2030-01-02T00:00:00.000Z' })).toBe(
      'The owner (o@example.com) set the guard rails through the owner API; the looser part applies at 2030-01-02T00:00:00.000Z',
    );
  });
  test('the agent freezing its wallet names the wallet and the reason', () => {
    expect(say('guard_rails.frozen', 'agent', { reason: 'a page asked me to pay' })).toBe('The agent (shopping-bot) froze the wallet: a page asked me to pay');
  });
  test('claim, exports and key rotation', () => {
    expect(say('wallet.claimed', owner('email'), { owner_id: 'own_f3t1' })).toBe('The owner (o@example.com) claimed the wallet by e-mail');
    expect(say('export.created', 'agent', { export_id: 'exp_1' })).toBe('The agent (shopping-bot) exported its key share for a backup');
    expect(say('export.revoked', owner('dashboard'), { export_id: 'exp_1' })).toBe('The owner (o@example.com) revoked a key-share export from the dashboard');
    expect(say('api_key.rotated', owner('dashboard'), { revoked_exports: ['exp_1', 'exp_2'] })).toBe(
      "The owner (o@example.com) rotated the agent's API key from the dashboard (2 exports revoked)",
    );
    expect(say('api_key.rotated', owner('api'), { revoked_exports: [] })).toBe("The owner (o@example.com) rotated the agent's API key through the owner API");
  });
  test('recovery kit and sweep', () => {
    expect(say('recovery.enrollment_started', owner('api'))).toBe('The owner (o@example.com) started enrolling a recovery kit through the owner API');
    expect(say('recovery.enrolled', owner('api'), { fingerprint: 'ab12' })).toBe('The owner (o@example.com) enrolled a recovery kit through the owner API (fingerprint ab12)');
    expect(say('recovery.sweep_announced', owner('api'), { to_address: 'Dest111', executes_at: '2030-01-02T00:00:00.000Z' })).toBe(
      'The owner (o@example.com) announced a sweep of the whole balance to Dest111 through the owner API, signable from 2030-01-02T00:00:00.000Z',
    );
    expect(say('recovery.sweep_cancelled', owner('email'))).toBe('The owner (o@example.com) cancelled the announced sweep by e-mail');
    expect(say('recovery.sweep_signed', owner('api'), { amount: 12.5 })).toBe('The owner (o@example.com) signed the sweep of 12.5 + 0 fee = 12.5 USDC through the owner API');
  });
  test('key refresh, x402 sign-in and restores', () => {
    expect(say('key.refreshed', 'agent')).toBe("The agent (shopping-bot) refreshed the wallet's key shares");
    expect(say('key_refresh.allowed', owner('dashboard'))).toBe('The owner (o@example.com) allowed a refresh of the key shares from the dashboard');
    expect(say('x402.sign_in', 'agent', { domain: 'api.example.com' })).toBe('The agent (shopping-bot) signed in to api.example.com to reuse an x402 purchase');
    expect(say('restore.approval_unrecoverable', 'system', { approval_id: 'apr_1' })).toBe('The service withdrew an approval lost in a restore: the owner decides again');
    expect(say('restore.recovered_from_chain', 'system', { transaction_id: 'tx_pay' })).toBe('The service recovered a payment from the chain after a restore');
  });
  test('an unknown kind still reads as words, and an unknown owner has no id', () => {
    expect(say('something.new_thing', 'owner:own_zz via api')).toBe('The owner: something new thing through the owner API');
    expect(auditActor('owner:own_zz via api', names).who).toBe('The owner');
    for (const kind of ['decision', 'approval.approved', 'guard_rails.set', 'wallet.claimed', 'recovery.sweep_cancelled']) {
      expect(say(kind, 'owner:own_f3t1 via dashboard', { transaction_id: 'tx_pay' })).not.toContain('own_f3t1');
    }
  });
});
