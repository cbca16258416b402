/**
 * The message an agent signs, together with the server, to finish registration: proof that the
 * agent really holds its key share and that the two-party signing works before any money arrives.
 * The leading 0xff byte makes it unparseable as a Solana transaction message (as in Solana's
 * off-chain message format), so this signature can never authorise a transfer.
 */

const PREFIX = '\xffagent-wallet registration v1\n';

/** The exact bytes both sides sign for DKG session `dkgSessionId` and wallet `address`. */
export function registrationProofMessage(dkgSessionId: string, address: string): Uint8Array {
  const text = `${PREFIX}session ${dkgSessionId}\naddress ${address}\n`;
  return Uint8Array.from(text, (c) => c.charCodeAt(0));
}
