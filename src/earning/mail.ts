/** The mails of earning and funding: a paylink invitation and a fund request to the owner. Plain text. */
import { formatUsdc } from '../domain/money.ts';
import type { OutgoingMail } from '../mail/outbox.ts';

interface WalletRef {
  name: string;
  username: string;
}

/** Agent-written text in a subject line: one line, no control characters. */
function oneLine(value: string, max: number): string {
  return value.replace(/[\x00-\x1f\x7f]+/g, ' ').trim().slice(0, max);
}

function text(lines: (string | null)[]): string {
  return `${lines.filter((l): l is string => l !== null).join('\n')}\n`;
}

/** An invitation to pay a paylink on its checkout page. */
export function paylinkInvitationMail(
  to: string,
  from: WalletRef,
  p: { description: string; amount: number | null; url: string; expiresAt: Date; message: string | null },
): OutgoingMail {
  const amount = p.amount === null ? 'an amount you choose' : `${p.amount} USDC`;
  return {
    kind: 'paylink',
    to,
    subject: `"${oneLine(from.name, 64)}" asks you to pay ${amount}: ${oneLine(p.description, 80)}`,
    body: text([
      'Hello,',
      '',
      `the agent wallet "${from.name}" (@${from.username}) asks you to pay ${amount} in USDC on Solana for:`,
      '',
      `  ${p.description}`,
      p.message === null ? null : '',
      p.message === null ? null : `Its message: ${p.message}`,
      '',
      `Pay on the checkout page (scan its QR code with a Solana wallet such as Phantom or Solflare):`,
      '',
      p.url,
      '',
      `The request expires at ${p.expiresAt.toISOString()}. If you do not know the sender, ignore this mail.`,
    ]),
    links: [{ label: 'pay', url: p.url }],
  };
}

/** The owner's mail about an agent's fund request, with the fund page. */
export function fundRequestMail(to: string, wallet: WalletRef, p: { amount: bigint; reason: string; url: string; address: string }): OutgoingMail {
  return {
    kind: 'fund_request',
    to,
    subject: `"${oneLine(wallet.name, 64)}" asks for ${formatUsdc(p.amount)} USDC`,
    body: text([
      `Your agent wallet "${wallet.name}" (@${wallet.username}) asks you for ${formatUsdc(p.amount)} USDC.`,
      '',
      `  Reason: ${p.reason}`,
      '',
      `The fund page shows its deposit address and a Solana Pay QR code for the amount:`,
      '',
      p.url,
      '',
      `Deposit address: ${p.address}`,
      '',
      'The request is marked fulfilled when a deposit covering it arrives; you can also decline it on the owner API (resolve_fund_request).',
    ]),
    links: [{ label: 'fund page', url: p.url }],
  };
}
