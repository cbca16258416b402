/** Who is calling, as established by the bearer key (never by a body field). */
export type Principal =
  | { kind: 'none' }
  | { kind: 'bot'; walletId: string; claimed: boolean }
  | { kind: 'merchant'; merchantId: string }
  | { kind: 'owner'; ownerId: string; tokenId: string };

/** A stable string naming the principal, for rate limits and idempotency scopes. */
export function principalKey(p: Principal): string {
  switch (p.kind) {
    case 'bot':
      return `wallet:${p.walletId}`;
    case 'merchant':
      return `merchant:${p.merchantId}`;
    case 'owner':
      return `owner:${p.ownerId}`;
    case 'none':
      return 'none';
  }
}
