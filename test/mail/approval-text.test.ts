/** The approval mail says why and writes the money as the pages do (issue 43: one formatter for amount + fee = total). */
import { describe, expect, test } from 'bun:test';
import type { ApprovalRow } from '../../src/db/approvals.ts';
import { amountFeeTotal } from '../../src/domain/spending.ts';
import { approvalMail } from '../../src/mail/templates.ts';
import { approvalAmount } from '../../src/web/views.ts';

const approval: ApprovalRow = {
  approval_id: 'apr_00000000000000000000000001',
  wallet_id: 'wal_00000000000000000000000001',
  subject_type: 'payment',
  subject_id: 'tx_00000000000000000000000001',
  amount: 25_125_000n,
  recipient: 'cloud-9',
  reason: '25.125 USDC is above 20 USDC, the amount the owner approves in person.',
  status: 'pending',
  created_at: 0n,
  decided_at: null,
  decided_by: null,
};
const urls = { approve: 'https://w.example/approval/a', reject: 'https://w.example/approval/r', dashboard: 'https://w.example/dashboard/wallets/w' };
const wallet = { name: 'Helper', username: 'helper-0001' };

describe('approval mail', () => {
  test("with the transaction's parts it writes amount + fee = total exactly as the pages do, names the total in the subject, and carries the agent's reason", () => {
    const money = { amount: 25_000_000n, fee: 125_000n, setup_fee: 0n };
    const mail = approvalMail('o@example.com', wallet, { ...approval, money, agent_reason: 'GPU hours for the nightly run' }, urls, 48);
    const line = amountFeeTotal(money);
    expect(line).toBe('25 + 0.125 fee = 25.125 USDC');
    expect(line).toBe(approvalAmount({ amount: 25.125, money }));
    expect(mail.body).toContain(`  Payment: ${line} to cloud-9\n`);
    expect(mail.body).toContain("  The agent's reason: GPU hours for the nightly run\n");
    expect(mail.subject).toBe('Approval needed: payment of 25.125 USDC to cloud-9 from "Helper"');
  });

  test('without the parts it falls back to the approval total, and leaves out a reason the agent did not give', () => {
    const mail = approvalMail('o@example.com', wallet, { ...approval, agent_reason: null }, urls, 48);
    expect(mail.body).toContain('  Payment: 25.125 USDC to cloud-9\n');
    expect(mail.body).not.toContain("The agent's reason");
  });
});
