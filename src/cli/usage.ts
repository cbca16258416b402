/** Usage errors (exit code 2, DESIGN §11) and the top-level help text. */

export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}

export const HELP = `agent-wallet — USDC wallets on Solana for AI agents, under 2-of-2 FROST custody

Usage:
  agent-wallet serve [--config FILE] [--data-dir DIR] [--port N] [--host H]
                                   run the daemon (default: simnet, 127.0.0.1:8787, ./data)

Agent commands (global flags: --server URL, --profile NAME, --json, --home DIR):
  agent-wallet register --name N [--owner-email E] [--agent-model M] [--description D]
  agent-wallet info | balance | address | reconcile
  agent-wallet rename NAME | set-owner EMAIL
  agent-wallet export FILE.wlt | import FILE.wlt
  agent-wallet lookup USER | afford TO AMOUNT
  agent-wallet pay TO AMOUNT [--note N] [--reference R] [--idempotency-key K] [--no-confirm] | pay --request REQ_ID [AMOUNT]
                                   pay a username, address or paylink: intent → check → FROST signing → submit
  agent-wallet confirm TX_ID | cancel TX_ID | payments [--status S] | history [--type T]
  agent-wallet events [--unread] [--since ID|TIME] [--wait S] | events read IDS…|--all
  agent-wallet approvals | approval APPROVAL_ID [--wait S]
  agent-wallet withdraw AMOUNT ADDRESS --reason R | withdraw confirm WD_ID | withdraw get WD_ID
  agent-wallet x402 fetch URL [--method M] [--header K:V]… [--data BODY] [--max-amount A] | x402 resume FETCH_ID
                                   call a paid (HTTP 402) API and pay it in USDC under the guard rails
  agent-wallet x402 catalog [--query Q] [--tag T]
  agent-wallet request create --description D [--amount A] [--item "desc:price[:qty]"]… [--reference R]
                             [--expires-in S|24h|7d] [--reveal-owner]
                                   a paylink: checkout page + Solana Pay QR; agents pay it with pay --request
  agent-wallet request get REQ_ID | list [--status S] | cancel REQ_ID | send REQ_ID (--email E | --wallet U)
  agent-wallet fund-request AMOUNT --reason R | fund-requests [--status S]
                                   ask the owner for funds (mail with a fund page) and list the requests
  agent-wallet mcp [--print-config]
                                   stdio MCP server for agent runtimes (Claude Desktop, Cursor, …);
                                   --print-config prints the host config snippet

Merchant commands (same global flags; the key is kept in <home>/merchants/<profile>.json):
  agent-wallet merchant register --name N --username U --payout-address ADDRESS [--webhook-url URL]
  agent-wallet merchant info | balance | history [--limit N] [--offset N] [--since ISO-TIME]
  agent-wallet merchant verify REFERENCE [--expected-amount A]
                                   was the order with this payment reference paid (and in full)?
  agent-wallet merchant set-webhook URL | rotate-secret | deliveries | redeliver DELIVERY_ID
                                   signed payment notifications (Standard Webhooks)

Operator commands (work while the daemon runs; --data-dir defaults to ./data):
  agent-wallet admin mail [--limit N] [--json] [--data-dir DIR]
                                   the mail outbox with its links (claim, sign-in, approval mails)
  agent-wallet admin owner-token EMAIL [--label L] [--json] [--data-dir DIR]
                                   mint an owner API token (creates the owner if missing)
  agent-wallet admin faucet ADDRESS AMOUNT [--sol N] [--data-dir DIR]
                                   simnet USDC (and SOL) from the running daemon
  agent-wallet admin catalog add URL --name N --description D [--tag T]… | list | remove URL | verify
                                   the public x402 catalog (entries are probed and re-verified daily)
  agent-wallet simnet [--port N] [--data-dir DIR] [--slot-ms MS] [--congestion-floor MICROLAMPORTS]
                     [--rate-limit RPS [--no-retry-after]] [--status-lag-slots N]
                                   the embedded Solana chain alone (JSON-RPC, USDC at the devnet mint);
                                   the fault flags make it act as a hosted provider on a busy mainnet

  agent-wallet version             print the version (also --version)
  agent-wallet help                this text

Exit codes: 0 ok, 1 error, 2 bad usage, 4 not authenticated, 5 waiting for owner approval.
`;

/** Parses a port flag value; throws UsageError. */
export function parsePort(flag: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  if (!/^[0-9]{1,5}$/.test(value) || Number(value) > 65535) throw new UsageError(`${flag} must be a port number from 0 to 65535, got "${value}"`);
  return Number(value);
}
