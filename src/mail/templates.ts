/** The texts of the mails the owner side sends. Plain text: every client shows it, links included. */
import type { ApprovalRow } from '../db/approvals.ts';
import { formatUsdc } from '../domain/money.ts';
import { amountFeeTotal, type MoneyParts } from '../domain/spending.ts';
import type { OutgoingMail } from './outbox.ts';

interface WalletRef {
  name: string;
  username: string;
}

const SUBJECTS: Record<ApprovalRow['subject_type'], string> = { payment: 'Payment', withdrawal: 'Withdrawal', x402: 'x402 purchase' };

function text(lines: string[]): string {
  return `${lines.join('\n')}\n`;
}

/** The mail with the magic link that completes a claim. */
export function claimMail(to: string, wallet: WalletRef, url: string, minutes: number): OutgoingMail {
  const links = [{ label: 'claim', url }];
  return {
    kind: 'claim',
    to,
    subject: `Confirm that you own the agent wallet "${wallet.name}"`,
    body: text(
      [
        'Hello,',
        '',
        `the claim code of the agent wallet "${wallet.name}" (@${wallet.username}) was entered together with this e-mail address.`,
        '',
        `Open this link within ${minutes} minutes and press its button to claim the wallet and open your owner dashboard:`,
        '',
        url,
        '',
        'The link works once. If you did not ask for it, ignore this mail: nothing happens without the link.',
      ],
    ),
    links,
  };
}

/** The mail with a sign-in link for an owner who has no session. */
export function loginMail(to: string, url: string, minutes: number): OutgoingMail {
  const links = [{ label: 'sign in', url }];
  return {
    kind: 'login',
    to,
    subject: 'Your sign-in link for the agent wallet dashboard',
    body: text(
      ['Hello,', '', `open this link within ${minutes} minutes and press its button to sign in to your owner dashboard:`, '', url, '', 'The link works once. If you did not ask for it, ignore this mail.'],
    ),
    links,
  };
}

/**
 * The mail asking the owner to approve or reject; each link opens a confirmation page first.
 * With `money` (the transaction's parts, db/owner-views.ts approvalSubjects) the amount reads
 * "amount + fee = total" as on the pages; the subject line names the total.
 */
export function approvalMail(
  to: string,
  wallet: WalletRef,
  approval: ApprovalRow & { agent_reason?: string | null; money?: MoneyParts | null },
  urls: { approve: string; reject: string; dashboard: string },
  hours: number,
): OutgoingMail {
  const what = SUBJECTS[approval.subject_type];
  const m = approval.money ?? null;
  const amount = m ? `${formatUsdc(m.amount + m.fee + m.setup_fee)} USDC` : approval.amount === null ? '' : `${formatUsdc(approval.amount)} USDC`;
  const breakdown = m ? amountFeeTotal(m) : amount;
  const links = [
    { label: 'approve', url: urls.approve },
    { label: 'reject', url: urls.reject },
    { label: 'dashboard', url: urls.dashboard },
  ];
  return {
    kind: 'approval',
    to,
    subject: `Approval needed: ${what.toLowerCase()} of ${amount || 'an amount'}${approval.recipient ? ` to ${approval.recipient}` : ''} from "${wallet.name}"`,
    body: text(
      [
        `Your agent wallet "${wallet.name}" (@${wallet.username}) waits for your approval:`,
        '',
        `  ${what}: ${breakdown || '-'}${approval.recipient ? ` to ${approval.recipient}` : ''}`,
        ...(approval.agent_reason ? [`  The agent's reason: ${approval.agent_reason}`] : []),
        `  Why it waits: ${approval.reason}`,
        `  Approval id: ${approval.approval_id}`,
        '',
        `Approve: ${urls.approve}`,
        `Reject:  ${urls.reject}`,
        '',
        `Each link opens a confirmation page first, works once and expires in ${hours} hours.`,
        `You can also decide on your dashboard: ${urls.dashboard}`,
      ],
    ),
    links,
  };
}
